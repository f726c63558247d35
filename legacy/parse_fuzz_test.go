package legacy

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// FuzzParseChatEvent: no input panics; nil exactly when the text is not an
// object with a string type; an app frame keeps the frame; and one
// re-encoding reaches a fixed point that parses to the same type.
func FuzzParseChatEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"session","sessionId":"s"}`, `{"type":"token","content":"x"}`, `{"type":"tool_start","tool":"t","callId":"c"}`,
		scoutCard, `{"type":"card_closed","correlationId":"c"}`, `{"type":"state","version":3,"snapshot":{"inbox":2}}`,
		`{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, `{"type":"error","message":"m"}`,
		`{"type":"navigate","href":"/x"}`, `{"type":"products","products":[]}`,
		`{"TYPE":"token","content":"x"}`, `{"typeſ":"token"}`, "{\"type\\u0000\":\"token\"}", `{"type":"token","type":"error","message":"m"}`,
		`{"type":"state","version":1e400}`, "\ufeff{\"type\":\"token\",\"content\":\"x\"}", `{"type":"token","content":"\ud800"}`,
		`{"type":"card","card":{"correlationId":"c","prompt":"p","presentation":{"kind":"date","min":"2026-01-01","max":5}}}`,
		`{"type":"card","card":{"correlationId":"","createdAt":0.5,"prompt":"","presentation":{"kind":"radio","options":[{"id":"","label":"","style":"danger"}],"placeholder":"","multiline":false,"min":"","max":-1,"step":0,"voiceAnswerable":false},"allowDecline":false,"timeoutMs":0,"fallbackText":"","report":{"plans":[{"title":"","items":[]}],"title":""},"dataSchemaJson":{"a":[null]}}}`,
		`{"type":"state","version":0,"snapshot":null}`, `{"type":"tool_start","tool":"t","callId":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := ParseChatEvent(data)
		v, ok := jsjson.Parse(data)
		obj, isObj := v.(map[string]any)
		_, typed := obj["type"].(string)
		if (ev != nil) != (ok && isObj && typed) {
			t.Fatalf("ParseChatEvent(%q) = %#v", data, ev)
		}
		if ev == nil {
			return
		}
		if a, isApp := ev.(*AppFrame); isApp && !bytes.Equal(a.Raw, bytes.Trim(jsjson.DecodeUTF8(data), " \t\r\n")) {
			t.Fatalf("app frame raw %q, frame %q", a.Raw, data)
		}
		out1, err := MarshalChatEvent(ev)
		if err != nil {
			t.Fatalf("MarshalChatEvent(%#v): %v", ev, err)
		}
		ev2 := ParseChatEvent(out1)
		if ev2 == nil || ev2.FrameType() != ev.FrameType() || reflect.TypeOf(ev2) != reflect.TypeOf(ev) {
			t.Fatalf("%q re-encoded as %q parses to %#v", data, out1, ev2)
		}
		out2, err := MarshalChatEvent(ev2)
		if err != nil || !bytes.Equal(out1, out2) {
			t.Fatalf("no fixed point: %q then %q (%v)", out1, out2, err)
		}
	})
}
