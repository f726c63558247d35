package blocks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityCase is one line of ../testdata/blocks-parity.jsonl: the TypeScript
// reference's answers (docs/contract.md section 4.2).
type parityCase struct {
	Fn    string          `json:"fn"`
	Input string          `json:"input"`
	Want  json.RawMessage `json:"want"`
}

func readParity(t testing.TB) []parityCase {
	f, err := os.Open("../testdata/blocks-parity.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var cases []parityCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c parityCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		cases = append(cases, c)
	}
	require.NoError(t, sc.Err())
	require.Len(t, cases, 78)
	return cases
}

// parseKind runs the parser a parity case names and returns its canonical
// JSON, "null" for no block; ok is false for a kind this package does not
// own (channel).
func parseKind(fn, input string) (string, bool) {
	var v json.Marshaler
	var found bool
	switch fn {
	case "report-body":
		v, found = ParseReportBody(input)
	case "report-tag":
		v, found = ParseReportTag(input)
	case "ask-body":
		v, found = ParseAskBody(input)
	case "ask-tag":
		v, found = ParseAskTag(input)
	default:
		return "", false
	}
	if !found {
		return "null", true
	}
	// MarshalJSON directly: encoding/json.Marshal would escape <, > and &
	// in its output, which JSON.stringify does not.
	out, err := v.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("marshal error: %v", err), true
	}
	return string(out), true
}

// TestParity requires the reference's exact answer, byte for byte, for
// every block line of the case file.
func TestParity(t *testing.T) {
	n := 0
	for i, c := range readParity(t) {
		t.Run(fmt.Sprintf("%02d-%s", i+1, c.Fn), func(t *testing.T) {
			got, ok := parseKind(c.Fn, c.Input)
			if !ok {
				t.Skip("not a block kind")
			}
			n++
			assert.Equal(t, string(c.Want), got, "input %q", c.Input)
		})
	}
	assert.Equal(t, 69, n, "block lines checked")
}
