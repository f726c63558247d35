package mediatype_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/internal/mediatype"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   mediatype.Kind
	}{
		{nil, mediatype.None},
		{[]string{"application/json"}, mediatype.ApplicationJSON},
		{[]string{"Application/JSON; charset=UTF-8"}, mediatype.ApplicationJSON},
		{[]string{"application/json; charset=utf-8; profile=x"}, mediatype.ApplicationJSON},
		{[]string{"application/json; charset=latin1"}, mediatype.Other},
		{[]string{"text/plain"}, mediatype.Other},
		{[]string{"text/plain;charset=UTF-8"}, mediatype.Other},
		{[]string{"application/x-www-form-urlencoded"}, mediatype.Other},
		{[]string{"multipart/form-data; boundary=x"}, mediatype.Other},
		{[]string{"application/jsonx"}, mediatype.Other},
		{[]string{""}, mediatype.Other},
		{[]string{"application/json;"}, mediatype.ApplicationJSON},
		{[]string{"application/json; charset"}, mediatype.Other},
		{[]string{"application/json", "application/json"}, mediatype.Other},
	} {
		h := http.Header{}
		if c.values != nil {
			h["Content-Type"] = c.values
		}
		assert.Equal(t, c.want, mediatype.Of(h), "%q", c.values)
	}
}

// FuzzOf: any Content-Type header gets one of the three kinds, and
// ApplicationJSON only for application/json, whatever its case, with a
// charset of utf-8 at most; it never panics.
func FuzzOf(f *testing.F) {
	for _, s := range []string{"application/json", "Application/JSON; charset=UTF-8", "application/json;charset=latin1",
		"text/plain", "application/x-www-form-urlencoded", "application/problem+json", "", ";", "application/json; a=\"b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Content-Type", v)
		if mediatype.Of(h) == mediatype.ApplicationJSON && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "application/json") {
			t.Fatalf("%q taken for JSON", v)
		}
	})
}
