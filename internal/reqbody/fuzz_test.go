package reqbody_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// fuzzRequest is a request's shape with every kind of member the bridges
// read: a pointer, a string, an integer, a slice of structs, a nested
// struct, raw JSON and a map.
type fuzzRequest struct {
	ID       *string       `json:"id"`
	Trigger  string        `json:"trigger"`
	Count    int           `json:"count"`
	Messages []fuzzMessage `json:"messages"`
	Answer   *struct {
		SubmissionID string          `json:"submissionId"`
		Response     json.RawMessage `json:"response"`
	} `json:"answer"`
	Extra map[string]any `json:"extra"`
}

type fuzzMessage struct {
	ID    string           `json:"id"`
	Role  string           `json:"role"`
	Parts []map[string]any `json:"parts"`
}

// FuzzUnmarshal: a body Unmarshal accepts has no object with two names
// equal under case folding, and encoding/json, which folds case and keeps
// the last of duplicated names, reads from it either nothing (an error)
// or the very request Unmarshal read; a refusal is always invalid-input.
// The committed corpus holds the clients' bodies and the known attacks
// (duplicates, case variants with the Kelvin sign and the long s, invalid
// UTF-8, lone surrogates, data after the value).
func FuzzUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var got fuzzRequest
		err := reqbody.Unmarshal(body, &got)
		if err != nil {
			if !errors.Is(err, refusal.ErrInvalidInput) {
				t.Fatalf("Unmarshal(%q): %v, not invalid-input", body, err)
			}
			return
		}
		if a, b, ok := foldPair(t, body); ok {
			t.Fatalf("Unmarshal(%q) accepted the names %q and %q of one object", body, a, b)
		}
		var v1 fuzzRequest
		if json.Unmarshal(body, &v1) != nil {
			return
		}
		if !reflect.DeepEqual(got, v1) {
			t.Fatalf("Unmarshal(%q) = %+v; encoding/json reads %+v", body, got, v1)
		}
	})
}

// foldPair returns two names of one object in body that are equal under
// strings.EqualFold, comparing every pair.
func foldPair(t *testing.T, body []byte) (string, string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number beyond float64 is still a token
	type frame struct {
		object bool
		key    bool // the next string token is a name
		names  []string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return "", "", false
		}
		if err != nil {
			t.Fatalf("accepted %q, which encoding/json cannot tokenize: %v", body, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.key {
			for _, n := range top.names {
				if strings.EqualFold(n, s) {
					return n, s, true
				}
			}
			top.names = append(top.names, s)
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &frame{object: tok == json.Delim('{'), key: true})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			} else {
				top = nil
			}
		}
		if top != nil && top.object {
			top.key = true // a value ended: a name comes next
		}
	}
}
