package sse_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/sse"
)

func TestIsEventStream(t *testing.T) {
	cases := []struct {
		contentType string
		want        bool
		why         string
	}{
		{"text/event-stream", true, "the type"},
		{"x bogus", false, "WPT-18 format-mime-bogus: unparseable"},
		{"text/event-stream;", true, "WPT-19 format-mime-trailing-semicolon"},
		{"text/x-bogus", false, "WPT-20 format-mime-valid-bogus: well formed, wrong type"},
		{"text/event-stream;charset=windows-1252", true, "WPT-23 format-utf-8: parameters ignored"},
		{"Text/Event-Stream", true, "case-insensitive essence"},
		{" \ttext/event-stream \t", true, "HTTP whitespace around"},
		{"text/event-stream ; charset=utf-8", true, "whitespace before the parameters"},
		{"text/event-stream; foo", true, "a bad parameter does not fail the essence"},
		{"text/event-stream; a=1; a=2", true, "duplicate parameters"},
		{"", false, "empty"},
		{"text/", false, "empty subtype"},
		{"/event-stream", false, "empty type"},
		{"text /event-stream", false, "space in the type"},
		{"text/event stream", false, "space in the subtype"},
		{"text/event-stream/x", false, "a second slash"},
		{"text/event-streams", false, "another subtype"},
		{"application/event-stream", false, "another type"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, sse.IsEventStream(tc.contentType), "%q: %s", tc.contentType, tc.why)
	}
}
