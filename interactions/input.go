package interactions

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// checkInput refuses, with refusal.ErrInvalidInput, ids and texts that no
// store can hold as sent: a NUL character or invalid UTF-8. It runs before
// any other check that could answer differently, and before the store is
// asked, so that every store (the fakes, pgstore) gives the same answer, and
// never one (store-unavailable, checkpoint-write-failed) that invites a
// retry that cannot succeed.
func checkInput(texts ...string) error {
	for _, s := range texts {
		if !wire.Storable(s) {
			return refusal.New(refusal.CodeInvalidInput, "", "an id or text holds a NUL character or invalid UTF-8")
		}
	}
	return nil
}

// callerTexts returns the members of c, for checkInput.
func callerTexts(c Caller) []string {
	return []string{c.Principal, c.Tenant, c.Customer, c.PublicOwner}
}

// checkJSONInput refuses, with refusal.ErrInvalidInput, JSON text whose
// strings (member names included) hold U+0000, escaped or not: PostgreSQL's
// text and jsonb refuse it, as do many stores. raw is valid JSON.
func checkJSONInput(path string, raw []byte) error {
	if !bytes.Contains(raw, []byte(`\u0000`)) && bytes.IndexByte(raw, 0) < 0 {
		return nil // the common case: no string can hold U+0000
	}
	d := jsontext.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return refusal.Wrap(refusal.CodeInvalidInput, path, "not valid JSON", err)
		}
		if tok.Kind() == '"' && strings.IndexByte(tok.String(), 0) >= 0 {
			return refusal.New(refusal.CodeInvalidInput, path, "a string holds U+0000")
		}
	}
}

// checkSpecInput refuses a card spec whose JSON form holds U+0000.
func checkSpecInput(spec cards.CardSpec) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return refusal.Wrap(refusal.CodeInvalidCard, "", "the card spec does not encode", err)
	}
	return checkJSONInput("/spec", b)
}
