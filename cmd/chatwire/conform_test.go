package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConformPassesOnTheModulesTestdata(t *testing.T) {
	code, stdout, stderr := runCmd([]string{"conform", "../../testdata"}, "")
	assert.Equal(t, exitOK, code, stdout)
	assert.Empty(t, stderr)
	assert.Regexp(t, `^[1-9][0-9]* passed, 0 failed\n$`, stdout)

	// The README quotes this line: the figure is the command's, not typed.
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	quoted := regexp.MustCompile("`([0-9]+ passed, [0-9]+ failed)` on `testdata/`").FindSubmatch(readme)
	require.NotNil(t, quoted, "the README quotes conform's line")
	assert.Equal(t, strings.TrimSuffix(stdout, "\n"), string(quoted[1]), "README.md quotes another count than chatwire conform prints")
}

// copyDir copies the regular files of src into dst, recursively.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	}))
}

func TestConformReportsEachFailingCase(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, "../../testdata", dir)
	// Break one fixture's expectation: the case fails, and the manifest
	// reports its digest drift.
	fixtures, err := filepath.Glob(filepath.Join(dir, "fixtures", "envelope", "reject-*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, fixtures)
	data, err := os.ReadFile(fixtures[0])
	require.NoError(t, err)
	broken := regexp.MustCompile(`"outcome":\s*"reject"`).ReplaceAll(data, []byte(`"outcome": "accept"`))
	require.NotEqual(t, data, broken)
	require.NoError(t, os.WriteFile(fixtures[0], broken, 0o644))

	code, stdout, _ := runCmd([]string{"conform", dir}, "")
	assert.Equal(t, exitFail, code)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 3)
	name := filepath.ToSlash(strings.TrimPrefix(fixtures[0], dir+string(filepath.Separator)))
	assert.Contains(t, lines, "FAIL manifest: "+name+": SHA-256 differs from the manifest")
	assert.Contains(t, stdout, "FAIL "+name+": ")
	assert.Regexp(t, `^[1-9][0-9]* passed, 2 failed$`, lines[len(lines)-1])
}

func TestConformUnreadableDir(t *testing.T) {
	code, stdout, stderr := runCmd([]string{"conform", filepath.Join(t.TempDir(), "none")}, "")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "chatwire conform: ")
}
