package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs the command with args and stdin, returning its exit status,
// stdout and stderr.
func runCmd(args []string, stdin string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestDecodeCommandPrintsEnvelopeLines(t *testing.T) {
	in := v1(1, delta("Hel")) + v1(2, delta("lo"))
	code, stdout, stderr := runCmd([]string{"decode"}, in)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}`, lines[0])
}

func TestDecodeCommandState(t *testing.T) {
	in := v1(1, delta("Hel")) + v1(2, delta("lo"))
	for _, args := range [][]string{{"decode", "--state"}, {"decode", "-state", "-"}, {"decode", "-", "--state"}} {
		code, stdout, stderr := runCmd(args, in)
		assert.Equal(t, exitOK, code, "%q", args)
		assert.Empty(t, stderr)
		assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"c-1","turns":[{"turnId":"t-1","status":"started","lastSeq":2,"text":"Hello","toolCalls":[],"results":[],"provenance":[],"steps":[]}],"openCards":[]}`, stdout)
		assert.Equal(t, 1, strings.Count(stdout, "\n"))
	}
}

func TestDecodeCommandStopsAtTheFirstViolation(t *testing.T) {
	in := v1(1, delta("a")) + v1(3, delta("b")) + v1(4, delta("c"))
	code, stdout, stderr := runCmd([]string{"decode"}, in)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 1, strings.Count(stdout, "\n"), "the envelope before the violation is printed")
	assert.Regexp(t, `^chatwire: frame 2: sequence-gap: [^\n]+\n$`, stderr)

	code, stdout, stderr = runCmd([]string{"decode", "--state"}, in)
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout, "no state after a violation")
	assert.Regexp(t, `^chatwire: frame 2: sequence-gap: [^\n]+\n$`, stderr)
}

func TestDecodeCommandKeepGoing(t *testing.T) {
	in := v1(1, delta("a")) + v1(3, delta("b")) + v1(2, delta("c")) + "data: {}\n\n"
	code, stdout, stderr := runCmd([]string{"decode", "--keep-going", "--state"}, in)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, `"text":"ac"`, "the state of the frames that applied")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^chatwire: frame 2: sequence-gap: `, lines[0])
	assert.Regexp(t, `^chatwire: frame 4: unsupported-version: `, lines[1])
}

func TestDecodeCommandFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sse")
	require.NoError(t, os.WriteFile(path, []byte(v1(1, delta("x"))), 0o644))
	code, stdout, _ := runCmd([]string{"decode", "--from", "v1", path}, "")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `"text":"x"`)

	code, stdout, stderr := runCmd([]string{"decode", filepath.Join(dir, "missing.sse")}, "")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "missing.sse")
}

func TestDecodeCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"decode", "--from", "v2"},
		{"decode", "--max-frame", "0"},
		{"decode", "--max-frame", "lots"},
		{"decode", "--nope"},
		{"decode", "a.sse", "b.sse"},
		{"decode", "--dialect", "klingon"},
		{"decode", "--conversation"},
		{"blocks", "--state"},
		{"blocks", "a", "b"},
		{"conform", "a", "b"},
		{"conform", "--nope"},
	} {
		code, stdout, stderr := runCmd(args, "")
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, stdout, "%q", args)
		assert.Contains(t, stderr, "usage: chatwire", "%q", args)
	}
	for _, args := range [][]string{{"decode", "--help"}, {"blocks", "-h"}, {"conform", "--help"}} {
		code, stdout, _ := runCmd(args, "")
		assert.Equal(t, exitOK, code, "%q", args)
		assert.Contains(t, stdout, "usage: chatwire "+args[0])
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestDecodeCommandWriteError(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"decode"}, strings.NewReader(v1(1, delta("x"))), failingWriter{}, &stderr)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stderr.String(), "file already closed")
}

func TestDecodeCommandReadError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"decode"}, failingReader{}, &stdout, &stderr)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chatwire decode: stdin: file already closed\n", stderr.String())
}

// jsonLine is the envelope of v1 as one JSON line, without its line end.
func jsonLine(seq int, event string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(v1(seq, event), "\n", 2)[1], "data: "), "\n\n")
}

// TestDecodeCommandReadsJSONLines: an input whose first byte other than
// blank space is '{' is JSON lines, one frame per line that is not blank
// (LF or CRLF, a last line without its end, a byte order mark first), its
// violations numbered by line; anything else is SSE.
func TestDecodeCommandReadsJSONLines(t *testing.T) {
	const hello = `"text":"Hello"`
	for name, in := range map[string]string{
		"LF":                    jsonLine(1, delta("Hel")) + "\n" + jsonLine(2, delta("lo")) + "\n",
		"CRLF, blank lines":     "\r\n  \n" + jsonLine(1, delta("Hel")) + "\r\n\r\n\t\n" + jsonLine(2, delta("lo")) + "\r\n",
		"no last line end":      jsonLine(1, delta("Hel")) + "\n" + jsonLine(2, delta("lo")),
		"a byte order mark":     "\xef\xbb\xbf" + jsonLine(1, delta("Hel")) + "\n" + jsonLine(2, delta("lo")) + "\n",
		"SSE after blank space": "\n\n" + v1(1, delta("Hel")) + v1(2, delta("lo")),
	} {
		code, stdout, stderr := runCmd([]string{"decode", "--state"}, in)
		assert.Equal(t, exitOK, code, "%s: %s", name, stderr)
		assert.Contains(t, stdout, hello, name)
	}

	in := jsonLine(1, delta("a")) + "\n\n" + jsonLine(3, delta("b")) + "\n{\"schemaVersion\":1,\n" + jsonLine(2, delta("c")) + "\n"
	code, stdout, stderr := runCmd([]string{"decode", "--keep-going", "--state"}, in)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, `"text":"ac"`)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 2, stderr)
	assert.Regexp(t, `^chatwire: frame 3: sequence-gap: `, lines[0], "numbered by line, blank ones included")
	assert.Regexp(t, `^chatwire: frame 4: invalid-envelope: `, lines[1])

	long := jsonLine(2, delta(strings.Repeat("x", 300)))
	in = jsonLine(1, delta("a")) + "\n" + long + "\n" + jsonLine(2, delta("b")) + "\n"
	code, stdout, stderr = runCmd([]string{"decode", "--keep-going", "--state", "--max-frame", "200"}, in)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, `"text":"ab"`, "the reading goes on after a line too long")
	assert.Regexp(t, `^chatwire: frame 2: frame-too-large: [^\n]+\n$`, stderr)
	code, _, _ = runCmd([]string{"decode", "--state", "--max-frame", "400"}, in)
	assert.Equal(t, exitFail, code, "the line fits, its seq does not")

	code, stdout, stderr = runCmd([]string{"decode", "--conversation", "s-1"}, `{"type":"token","content":"Hi"}`+"\n"+`{"type":"done"}`+"\n")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"type":"delta","text":"Hi"`, "legacy0 frames as JSON lines are upgraded")
}
