package readme

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Block is one Go block of a README: its text, without the fence lines,
// and the 1-based line of its opening fence.
type Block struct {
	Line int
	Text string
}

// GoBlocks returns every ```go block of readme, in order.
func GoBlocks(readme string) []Block {
	var out []Block
	var cur *strings.Builder
	start := 0
	n := 0
	for line := range strings.Lines(readme) {
		n++
		switch {
		case cur == nil && line == "```go\n":
			cur, start = &strings.Builder{}, n
		case cur != nil && line == "```\n":
			out = append(out, Block{Line: start, Text: cur.String()})
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return out
}

// Regions returns the text between every "// README:begin" and
// "// README:end" line of the _test.go files under root, each line with
// the begin marker's indentation removed and no blank line at its end, by file path (slash-separated,
// relative to root). Directories named testdata and hidden ones are
// skipped.
func Regions(root string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], regionsOf(string(data))...)
		return nil
	})
	return out, err
}

// regionsOf returns the marked regions of one file's text.
func regionsOf(text string) []string {
	var out []string
	var cur *strings.Builder
	indent := ""
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "// README:begin":
			cur, indent = &strings.Builder{}, line[:strings.Index(line, "//")]
		case cur != nil && trimmed == "// README:end":
			out = append(out, strings.TrimRight(cur.String(), "\n")+"\n") // gofmt may leave a blank line
			cur = nil
		case cur != nil:
			cur.WriteString(strings.TrimPrefix(line, indent))
		}
	}
	return out
}
