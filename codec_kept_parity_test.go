package chatprotocol

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The kept types (cards, report and ask blocks) were once decoded and
// encoded by github.com/go-json-experiment/json following their JSON
// tags; their descriptors (codec_kept.go) replace it. FuzzKeptParity holds the
// descriptors to that decoder's results: the same values, the same
// refused member, the same bytes written.
func FuzzKeptParity(f *testing.F) {
	for _, seed := range []string{
		`{"correlationId":"k","createdAt":1,"prompt":"p"}`,
		`{"correlationId":null,"createdAt":1.0e3,"prompt":"a<b\u2028","allowDecline":true,"timeoutMs":5,"fallbackText":"f","dataSchemaJson":"{}"}`,
		`{"correlationId":"k","createdAt":null,"prompt":"p"}`,
		`{"correlationId":"k","createdAt":"1","prompt":5}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"slider","step":1e400}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"slider","min":null,"max":"2020<","step":-0}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"slider","min":true,"step":null}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"slider","min":1e21,"max":-1.5e-7}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"date","min":"","max":{}}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[{"id":1}]}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":{}}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[null,{"id":"a","label":"A","style":"danger","hint":"h","description":"d"}],"multiline":null,"placeholder":"x","voiceAnswerable":true}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":null,"report":null,"timeoutMs":1.0e3}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[]},"allowDecline":null}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","report":{"plans":[{"title":"t","items":[{"text":1}]}]}}`,
		`{"correlationId":"k","createdAt":1,"prompt":"p","report":{"title":"T","plans":[{"slug":"s","title":"t","status":"x","summary":"y","items":[{"id":"i","text":"x","status":"s","ref":"r"},null]}]},"extra":[1,{"a":null}]}`,
		`{"correlationId":"k","createdAt":9007199254740993,"prompt":"p","presentation":{"kind":"text","step":0.1}}`,
		`{"correlationId":"k","createdAt":1e400,"prompt":"p"}`,
		`{"correlationId":"k","createdAt":-1.5,"prompt":"p"}`,
		`null`, `5`, `[]`, `{}`, `"x"`,
		`{"question":null,"refs":["a",null]}`,
		`{"question":"q","refs":[1]}`,
		`{"question":"q","refs":{}}`,
		`{"question":"q","options":[null,{"id":"a","label":"\u0000<&>","description":"d"}]}`,
		`{"plans":[]}`, `{"plans":null,"title":"t"}`, `{"plans":[{"title":5}]}`, `{"plans":[5]}`,
	} {
		for typ := range uint8(3) {
			f.Add([]byte(seed), typ)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, typ uint8) {
		if !jsonValid(raw) {
			return
		}
		if _, found, err := strictjson.FoldCollision(raw, nil, maxKeptDepth); err != nil || found {
			return
		}
		switch typ % 3 {
		case 0:
			checkKeptParity[cards.OpenCardSnapshot](t, raw)
		case 1:
			checkKeptParity[blocks.ReportBlock](t, raw)
		case 2:
			checkKeptParity[blocks.AskBlock](t, raw)
		}
	})
}

// jsonValid reports whether raw is one strict JSON value.
func jsonValid(raw []byte) bool {
	return strictjson.CheckRaw(raw) == nil && len(bytes.TrimSpace(raw)) > 0
}

func checkKeptParity[T any](t *testing.T, raw []byte) {
	var want T
	werr := json.Unmarshal(raw, &want, json.WithUnmarshalers(json.UnmarshalFunc(func(b []byte, n *int64) error {
		v, err := strictjson.ParseInteger(b)
		if err == nil {
			*n = v
		}
		return err
	})))
	var got T
	gerr := decodeInto(raw, &got, refusal.CodeInvalidCard, "/card")
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: json: %v, descriptor: %v", raw, werr, gerr)
	}
	if werr != nil {
		var se *json.SemanticError
		if !errors.As(werr, &se) {
			t.Fatalf("%s: json error %v is not semantic", raw, werr)
		}
		if p := gerr.(*refusal.Error).Path; p != "/card"+string(se.JSONPointer) || refusal.CodeOf(gerr) != refusal.CodeInvalidCard {
			t.Fatalf("%s: json refuses %q, descriptor %s at %q", raw, se.JSONPointer, refusal.CodeOf(gerr), p)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: json reads %#v, descriptor %#v", raw, want, got)
	}
	wout, werr := json.Marshal(&want)
	w := writer{}
	writeKept(&w, &got, nil, refusal.CodeInvalidCard, "/card")
	check := writer{check: true}
	writeKept(&check, &got, nil, refusal.CodeInvalidCard, "/card")
	if (werr == nil) != (w.err == nil) || (w.err == nil) != (check.err == nil) {
		t.Fatalf("%s: json writes %v, descriptor %v, check %v", raw, werr, w.err, check.err)
	}
	if werr == nil && !bytes.Equal(wout, w.dst) {
		t.Fatalf("%s: json writes\n%s\ndescriptor\n%s", raw, wout, w.dst)
	}
}
