package losses

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fate is what a bridge does with a member: the table's third column.
type fate string

// The fates (docs/contract.md section 18): the value's canonical JSON is in
// the output byte for byte; its text is in a string of the output (a
// string's text, another value's JSON text); it decides what is written
// without being in it; nothing of it reaches the output.
const (
	kept    fate = "kept"
	inText  fate = "in text"
	mapped  fate = "mapped"
	dropped fate = "dropped"
)

// The names the table gives what is not an event type or a member.
const (
	envelopeType = "envelope"        // the envelope's own members (section 5.1)
	unknown      = "unknown members" // the members the reader keeps unread (section 5.4)
)

// row is one row of a table of losses.
type row struct {
	line     int // in docs/contract.md
	typ      string
	statuses []string // the event's statuses the row is about; nil for every one
	member   string   // a member's path, or unknown
	fate     fate
	writes   string // the last column, as written
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// header is the start of a table of losses' header row.
const header = "| event | member | fate |"

// readTable returns the rows of the table of losses of section (such as
// "18.1") of the contract at file: the first table of the section whose
// header starts with [header]. An event cell is "envelope" or an event
// type in a code span, then optionally the statuses the row is about, each
// in a code span; a member cell is a member's path in a code span or
// "unknown members".
func readTable(t *testing.T, file, section string) []row {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	var rows []row
	in, table := false, false
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### "+section+" "):
			in = true
			continue
		case in && (strings.HasPrefix(line, "### ") || strings.HasPrefix(line, "## ")):
			in = false
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(line, header) && rows == nil:
			table = true
		case table && strings.HasPrefix(line, "| ---"):
		case table && strings.HasPrefix(line, "|"):
			rows = append(rows, parseRow(t, n, line))
		case table:
			table = false
			in = false
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "section %s of %s has no table starting %q", section, file, header)
	return rows
}

// parseRow reads one row of the table at line n.
func parseRow(t *testing.T, n int, line string) row {
	t.Helper()
	cells := strings.Split(strings.Trim(line, "|"), "|")
	require.Len(t, cells, 4, "line %d: four cells: event, member, fate, what is written", n)
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	r := row{line: n, fate: fate(cells[2]), writes: cells[3]}
	if cells[0] == envelopeType {
		r.typ = envelopeType
	} else {
		spans := codeSpan.FindAllStringSubmatch(cells[0], -1)
		require.NotEmpty(t, spans, "line %d: the event cell names a type in a code span", n)
		r.typ = spans[0][1]
		for _, s := range spans[1:] {
			r.statuses = append(r.statuses, s[1])
		}
	}
	if cells[1] == unknown {
		r.member = unknown
	} else {
		spans := codeSpan.FindAllStringSubmatch(cells[1], -1)
		require.Len(t, spans, 1, "line %d: the member cell is one code span or %q", n, unknown)
		r.member = spans[0][1]
	}
	switch r.fate {
	case kept, inText, mapped, dropped:
	default:
		t.Fatalf("line %d: fate %q is none of kept, in text, mapped, dropped", n, r.fate)
	}
	return r
}
