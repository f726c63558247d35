package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseParity runs every line of the reference's case file through the
// command's code path and requires its exact output.
func TestParseParity(t *testing.T) {
	f, err := os.Open("../../testdata/blocks-parity.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct {
			Fn    string          `json:"fn"`
			Input string          `json:"input"`
			Want  json.RawMessage `json:"want"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		n++
		t.Run(fmt.Sprintf("%02d-%s", n, c.Fn), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"parse", c.Fn}, strings.NewReader(c.Input), &stdout, &stderr)
			assert.Equal(t, exitOK, code)
			assert.Equal(t, string(c.Want)+"\n", stdout.String(), "input %q", c.Input)
			assert.Empty(t, stderr.String())
		})
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 78, n)
}

func TestParseInputIsByteExact(t *testing.T) {
	cases := []struct{ kind, in, want string }{
		{"ask-body", "\ufeff{\"question\":\"q\"}", "null"},
		{"ask-body", "{\"question\":\"q\"}\n", `{"question":"q"}`},
		{"ask-tag", "\ufeff<ask>\ufeff{\"question\":\"q\"}\u00a0</ask>", `{"question":"q"}`},
		{"ask-body", `{"question":"a\u2028<b>&"}`, "{\"question\":\"a\u2028<b>&\"}"},
		{"ask-body", `{"question":"\ud800"}`, `{"question":"\ud800"}`},
		{"channel", "navigate\n", `{"state":false,"replayable":false}`},
		{"channel", "products", `{"state":false,"replayable":false}`},
		{"channel", "TOKEN", `{"state":false,"replayable":false}`},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run([]string{"parse", c.kind}, strings.NewReader(c.in), &stdout, &stderr)
		assert.Equal(t, exitOK, code)
		assert.Equal(t, c.want+"\n", stdout.String(), "%s %q", c.kind, c.in)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{{}, {"nope"}, {"parse"}, {"parse", "yaml"}, {"parse", "ask-body", "extra"},
		{"conform", "a", "b"}, {"conform", "--nope"}, {"decode", "--nope"}, {"blocks", "a", "b"}, {"encode"}}
	for _, args := range cases {
		var stdout, stderr bytes.Buffer
		code := run(args, strings.NewReader(""), &stdout, &stderr)
		assert.Equal(t, exitUsage, code, "%q", args)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		assert.Regexp(t, `^chatwire( [a-z]+)?: \S`, first, "%q: the first line says what is wrong", args)
		assert.Contains(t, stderr.String(), "usage: chatwire", "%q", args)
		assert.Empty(t, stdout.String(), "%q", args)
	}
	var stdout bytes.Buffer
	assert.Equal(t, exitOK, run([]string{"help"}, strings.NewReader(""), &stdout, &stdout))
	assert.Contains(t, stdout.String(), "parse")
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, os.ErrClosed }

func TestParseReadError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitFail, run([]string{"parse", "ask-tag"}, failingReader{}, &stdout, &stderr))
	assert.Empty(t, stdout.String())
}
