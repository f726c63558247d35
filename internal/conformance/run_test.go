package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/golden"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata is the module's conformance directory.
const testdata = "../../testdata"

func TestConformance(t *testing.T) {
	if golden.Update() {
		require.NoError(t, Update(testdata))
	}
	r, err := Run(testdata)
	require.NoError(t, err)
	var out strings.Builder
	_, err = r.WriteTo(&out)
	require.NoError(t, err)
	assert.Empty(t, r.Failures, out.String())
	assert.Greater(t, r.Passed, 100)
	t.Log(strings.TrimSpace(out.String()))
}

func itoa(i int) string { return strconv.Itoa(i) }

// copyTestdata copies the conformance directory into a temporary one.
func copyTestdata(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(testdata)))
	return dst
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
}

func failing(t *testing.T, dir string) map[string]string {
	t.Helper()
	r, err := Run(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range r.Failures {
		out[f.Case] += f.Reason + "\n"
	}
	return out
}

func TestRunCatchesDrift(t *testing.T) {
	t.Run("unlisted file", func(t *testing.T) {
		dir := copyTestdata(t)
		write(t, dir, "legacy/scout/token.json", `{}`)
		assert.Contains(t, failing(t, dir)["manifest"], "legacy/scout/token.json: not listed in the manifest")
	})
	t.Run("edited fixture", func(t *testing.T) {
		dir := copyTestdata(t)
		full := filepath.Join(dir, "fixtures", "envelope", "accept-delta.json")
		data, err := os.ReadFile(full)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(full, append(data, ' '), 0o644))
		assert.Contains(t, failing(t, dir)["manifest"], "fixtures/envelope/accept-delta.json: SHA-256 differs")
	})
	t.Run("deleted file", func(t *testing.T) {
		dir := copyTestdata(t)
		require.NoError(t, os.Remove(filepath.Join(dir, "schemas", "blocks.schema.json")))
		assert.Contains(t, failing(t, dir)["manifest"], "schemas/blocks.schema.json: listed in the manifest but missing")
	})
	t.Run("fuzz and streams are outside", func(t *testing.T) {
		dir := copyTestdata(t)
		write(t, dir, "fuzz/FuzzParseEnvelope/seed", "go test fuzz v1\n[]byte(\"{}\")\n")
		write(t, dir, "streams/x.sse", "data: {}\n\n")
		assert.Empty(t, failing(t, dir))
	})
	t.Run("stream changed without regenerating", func(t *testing.T) {
		dir := copyTestdata(t)
		full := filepath.Join(dir, "golden", "v1-tool-turn.jsonl")
		data, err := os.ReadFile(full)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(full, bytes.Replace(data, []byte("30 days"), []byte("31 days"), 1), 0o644))
		got := failing(t, dir)
		assert.Contains(t, got["golden/v1-tool-turn.state.json"], "stream changed")
		require.NoError(t, Update(dir))
		assert.Empty(t, failing(t, dir), "Update regenerates the state and the manifest")
	})
	t.Run("stream without state", func(t *testing.T) {
		dir := copyTestdata(t)
		write(t, dir, "golden/new.jsonl", `{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":"x"}}`+"\n")
		require.NoError(t, writeManifest(dir))
		assert.Contains(t, failing(t, dir)["golden/new.jsonl"], "no golden state")
	})
}

// writeManifest rebuilds dir's manifest without touching golden states.
func writeManifest(dir string) error {
	m, err := BuildManifest(dir)
	if err != nil {
		return err
	}
	out, err := MarshalManifest(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), out, 0o644)
}

func TestRunCatchesWrongExpectations(t *testing.T) {
	tests := map[string]string{
		"accept that is refused":     `{"description":"d","kind":"envelope","frame":"{}","expect":{"outcome":"accept","envelope":{}}}`,
		"wrong code":                 `{"description":"d","kind":"version","version":"2","expect":{"outcome":"reject","code":"invalid-envelope"}}`,
		"wrong path":                 `{"description":"d","kind":"version","version":"2","expect":{"outcome":"reject","code":"unsupported-version","path":"/v"}}`,
		"wrong version":              `{"description":"d","kind":"version","version":"1","expect":{"outcome":"accept","version":0}}`,
		"reject that is accepted":    `{"description":"d","kind":"version","version":"1","expect":{"outcome":"reject","code":"unsupported-version"}}`,
		"wrong envelope":             `{"description":"d","kind":"envelope","frame":"{\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e\",\"seq\":1,\"event\":{\"type\":\"delta\",\"text\":\"a\"}}","expect":{"outcome":"accept","envelope":{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":"b"}}}}`,
		"wrong missing list":         `{"description":"d","kind":"capabilities","declared":{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false},"wanted":["persistedHistory","persistedDecisions"],"expect":{"outcome":"reject","code":"unsupported-capability","missing":["persistedHistory"]}}`,
		"wrong refused frame":        `{"description":"d","kind":"state","frames":["{\"schemaVersion\":1,\"conversationId\":\"c\",\"turnId\":\"t\",\"eventId\":\"e\",\"seq\":2,\"event\":{\"type\":\"delta\",\"text\":\"a\"}}"],"expect":{"outcome":"reject","frame":2,"code":"sequence-gap"}}`,
		"misspelt member":            `{"description":"d","kind":"version","version":"1","expect":{"outcome":"accept","versoin":1}}`,
		"unknown kind":               `{"description":"d","kind":"teleport","expect":{"outcome":"accept"}}`,
		"both frame and frameBase64": `{"description":"d","kind":"envelope","frame":"{}","frameBase64":"e30=","expect":{"outcome":"reject","code":"invalid-envelope"}}`,
	}
	dir := t.TempDir()
	for name, content := range tests {
		write(t, dir, "fixtures/bad/"+strings.ReplaceAll(name, " ", "-")+".json", content)
	}
	write(t, dir, "fixtures/good/ok.json", `{"description":"d","kind":"version","version":"1","expect":{"outcome":"accept","version":1}}`)
	require.NoError(t, writeManifest(dir))
	r, err := Run(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Passed, "the manifest and the good fixture")
	assert.Len(t, r.Failures, len(tests))
	var out strings.Builder
	_, err = r.WriteTo(&out)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out.String(), "\n2 passed, 11 failed\n"), out.String())
}

func TestRunCatchesWrongLegacyExpectations(t *testing.T) {
	const token = `"{\"type\":\"token\",\"content\":\"Hel\"}"`
	const delta = `{"schemaVersion":1,"conversationId":"c","turnId":"turn-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}`
	tests := map[string]string{
		"wrong envelope":         `{"description":"d","kind":"upgrade","dialect":"scout","host":{"conversationId":"c"},"frames":[` + token + `],"expect":{"outcome":"accept","envelopes":[` + strings.Replace(delta, "Hel", "Hello", 1) + `]}}`,
		"missing envelope":       `{"description":"d","kind":"upgrade","dialect":"scout","host":{"conversationId":"c"},"frames":[` + token + `,` + token + `],"expect":{"outcome":"accept","envelopes":[` + delta + `]}}`,
		"accept that is refused": `{"description":"d","kind":"upgrade","dialect":"papercusp","host":{"conversationId":"c"},"frames":[` + token + `],"expect":{"outcome":"accept","envelopes":[` + delta + `]}}`,
		"wrong code":             `{"description":"d","kind":"upgrade","dialect":"papercusp","host":{"conversationId":"c"},"frames":[` + token + `],"expect":{"outcome":"reject","frame":1,"code":"invalid-event"}}`,
		"wrong refused frame":    `{"description":"d","kind":"upgrade","dialect":"scout","frames":[` + token + `,` + token + `],"expect":{"outcome":"reject","frame":2,"code":"invalid-envelope"}}`,
		"wrong path":             `{"description":"d","kind":"upgrade","dialect":"scout","frames":[` + token + `],"expect":{"outcome":"reject","frame":1,"code":"invalid-envelope","path":"/turnId"}}`,
		"reject that upgrades":   `{"description":"d","kind":"upgrade","dialect":"scout","host":{"conversationId":"c"},"frames":[` + token + `],"expect":{"outcome":"reject","frame":1,"code":"invalid-event"}}`,
		"wrong legacy frame":     `{"description":"d","kind":"encode","dialect":"scout","envelope":` + strconv.Quote(delta) + `,"expect":{"outcome":"accept","frame":{"type":"delta","text":"Hel"}}}`,
		"encode that is refused": `{"description":"d","kind":"encode","dialect":"scout","envelope":` + strconv.Quote(strings.Replace(delta, `"type":"delta","text":"Hel"`, `"type":"lifecycle","status":"started"`, 1)) + `,"expect":{"outcome":"accept","frame":{"type":"done"}}}`,
		"unknown dialect":        `{"description":"d","kind":"upgrade","dialect":"klingon","frames":[` + token + `],"expect":{"outcome":"reject","frame":1,"code":"unsupported-version"}}`,
		"misspelt member":        `{"description":"d","kind":"upgrade","dialect":"scout","frames":[` + token + `],"expect":{"outcome":"reject","frmae":1,"code":"invalid-envelope"}}`,
		"unknown kind":           `{"description":"d","kind":"downgrade","dialect":"scout","expect":{"outcome":"accept"}}`,
	}
	dir := t.TempDir()
	for name, content := range tests {
		write(t, dir, "legacy/bad/"+strings.ReplaceAll(name, " ", "-")+".json", content)
	}
	write(t, dir, "legacy/good/ok.json", `{"description":"d","kind":"upgrade","dialect":"scout","host":{"conversationId":"c"},"frames":[`+token+`],"expect":{"outcome":"accept","envelopes":[`+delta+`]}}`)
	require.NoError(t, writeManifest(dir))
	r, err := Run(dir)
	require.NoError(t, err)
	var out strings.Builder
	_, err = r.WriteTo(&out)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Passed, "the manifest and the good case:\n%s", out.String())
	assert.Len(t, r.Failures, len(tests), out.String())
}

// TestRunChecksEveryParityLine proves the blocks parity file is executed
// line by line: a wrong answer fails exactly its own line.
func TestRunChecksEveryParityLine(t *testing.T) {
	dir := copyTestdata(t)
	full := filepath.Join(dir, "blocks-parity.jsonl")
	data, err := os.ReadFile(full)
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	require.Len(t, lines, 78)
	lines[1] = []byte(`{"fn":"ask-body","input":"{\"question\":\" q \"}","want":{"question":" q "}}`)
	lines[2] = []byte(`{"fn":"no-such-fn","input":"","want":null}`)
	require.NoError(t, os.WriteFile(full, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644))
	require.NoError(t, writeManifest(dir))

	r, err := Run(dir)
	require.NoError(t, err)
	got := map[string]string{}
	for _, f := range r.Failures {
		got[f.Case] = f.Reason
	}
	require.Len(t, got, 2, "%v", got)
	assert.Contains(t, got["blocks-parity.jsonl:2"], `want {"question":" q "}`)
	assert.Contains(t, got["blocks-parity.jsonl:3"], `unknown fn "no-such-fn"`)
}

func TestParity(t *testing.T) {
	out, ok := Parity("ask-tag", "x <ASK>{\"question\":\"q\"}</ASK>")
	require.True(t, ok)
	assert.Equal(t, `{"question":"q"}`, string(out))
	out, ok = Parity("report-body", "{}")
	require.True(t, ok)
	assert.Equal(t, "null", string(out))
	out, ok = Parity("channel", "navigate\r\n")
	require.True(t, ok)
	assert.Equal(t, `{"state":false,"replayable":false}`, string(out))
	_, ok = Parity("Ask-Tag", "")
	assert.False(t, ok)
}
