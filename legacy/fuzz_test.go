package legacy

import (
	"slices"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzDecodeLegacyChatFrame: no input panics DecodeLegacyChatFrame,
// UpgradeLegacyChatFrame, EncodeLegacyChatFrame or MarshalChatEvent, in either
// dialect, with any of three hosts; every refusal carries a code of the
// contract; and a decoded frame is written and read back as itself. The
// committed corpus (testdata/fuzz/FuzzDecodeLegacyChatFrame) holds the
// known attacks on type dispatch and the frames of the captured streams;
// the seeds below are the table tests' frames.
//
//	go test ./legacy -run '^$' -fuzz FuzzDecodeLegacyChatFrame -fuzztime 60s
func FuzzDecodeLegacyChatFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"session","sessionId":"s-1"}`, `{"type":"token","content":"Hel"}`,
		`{"type":"tool_start","tool":"search"}`, `{"type":"tool_start","tool":"search","callId":"c-9"}`,
		`{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","presentation":{"kind":"radio","options":[{"id":"a","label":"A"}]}}}`,
		`{"type":"card_closed","correlationId":"k"}`, `{"type":"state","version":3,"snapshot":{"inbox":2}}`, `{"type":"state","snapshot":null}`,
		`{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, `{"type":"error","message":"m"}`, `{"type":"navigate","href":"/p"}`,
		`{"type":"products","products":[]}`, `{"type":"delta","text":"Hel"}`, `{"type":"tool_call","name":"n","input":{"q":1}}`,
		`{"type":"tool_result","callId":"c","status":"ok","output":null}`, `{"type":"tool_result","status":"done"}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":""}}`,
	} {
		f.Add([]byte(s))
	}
	codes := refusal.Codes()
	f.Fuzz(func(t *testing.T, data []byte) {
		exercise(t, data, func(t *testing.T, err error) {
			if err != nil && !slices.Contains(codes, refusal.CodeOf(err)) {
				t.Fatalf("%q: refusal without a contract code: %v", data, err)
			}
		})
	})
}
