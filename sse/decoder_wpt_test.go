package sse_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// Cases drawn from the web-platform-tests eventsource suite (WPT-01 …
// WPT-23), with the events each must give. The MIME cases are in
// mime_test.go.

// wptEvent is what EventSource delivers: type, data, lastEventId.
type wptEvent struct {
	Type, Data, LastEventID string
}

// wptOutcome is what a body gives: the events (comments left out) and the
// stream state at its end.
type wptOutcome struct {
	Events      []wptEvent
	LastEventID string
	Retry       time.Duration
	HasRetry    bool
	Truncated   bool
}

func summarizeWPT(evs []sse.Event, d *sse.Decoder, err error) wptOutcome {
	out := wptOutcome{LastEventID: d.LastEventID(), Truncated: d.Truncated()}
	out.Retry, out.HasRetry = d.Retry()
	if err != nil {
		out.LastEventID = "unexpected error: " + err.Error()
	}
	for _, ev := range evs {
		if !ev.Comment {
			out.Events = append(out.Events, wptEvent{ev.Type, string(ev.Data), ev.LastEventID})
		}
	}
	return out
}

func msg(data string) wptEvent { return wptEvent{"message", data, ""} }

// wptCase is one body of the WPT cases and what it must give.
type wptCase struct {
	name string
	body string
	opts *sse.DecoderOptions
	want wptOutcome
}

func wptCases() []wptCase {
	x := strings.Repeat("x", 2048)
	return []wptCase{
		{"WPT-01 format-bom", "\xEF\xBB\xBFdata:1\n\n\xEF\xBB\xBFdata:2\n\ndata:3\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("1"), msg("3")}}},
		{"WPT-02 format-bom-2", "\xEF\xBB\xBF\xEF\xBB\xBFdata:1\n\ndata:2\n\ndata:3\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("2"), msg("3")}}},
		{"WPT-03 format-comments", "data:1\r:\x00\n:\r\ndata:2\n:" + x + "\rdata:3\n:data:fail\r:" + x + "\ndata:4\n" + "\n", nil,
			wptOutcome{Events: []wptEvent{msg("1\n2\n3\n4")}}},
		{"WPT-04 format-data-before-final-empty-line", "retry:1000\ndata:test1\n\nid:test\ndata:test2\n", nil,
			wptOutcome{Events: []wptEvent{msg("test1")}, Retry: time.Second, HasRetry: true, Truncated: true}},
		{"WPT-05 format-field-data", "data:\n\ndata\ndata\n\ndata:test\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg(""), msg("\n"), msg("test")}}},
		{"WPT-06 format-field-event", "event:test\ndata:x\n\ndata:x\n\n\n", nil,
			wptOutcome{Events: []wptEvent{{"test", "x", ""}, msg("x")}}},
		{"WPT-07 format-field-event-empty", "event: \ndata:data\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("data")}}},
		{"WPT-08 format-field-id, first response", "id: \u2026\nretry: 200\ndata: hello\n\n", nil,
			wptOutcome{Events: []wptEvent{{"message", "hello", "…"}}, LastEventID: "…", Retry: 200 * time.Millisecond, HasRetry: true}},
		{"WPT-08 format-field-id, second response", "data: \u2026\n\n", &sse.DecoderOptions{LastEventID: "\xE2\x80\xA6"},
			wptOutcome{Events: []wptEvent{{"message", "…", "…"}}, LastEventID: "…"}},
		{"WPT-10 persists", "id: 1\ndata: 1\n\ndata:2\n\n", nil,
			wptOutcome{Events: []wptEvent{{"message", "1", "1"}, {"message", "2", "1"}}, LastEventID: "1"}},
		{"WPT-10 changes+persists", "id: 1\ndata: 1\n\nid: 2\ndata:2\n\ndata:3\n\n", nil,
			wptOutcome{Events: []wptEvent{{"message", "1", "1"}, {"message", "2", "2"}, {"message", "3", "2"}}, LastEventID: "2"}},
		{"WPT-10 resets", "id: 1\ndata: 1\n\nid:\ndata:2\n\ndata:3\n\n", nil,
			wptOutcome{Events: []wptEvent{{"message", "1", "1"}, {"message", "2", ""}, {"message", "3", ""}}, LastEventID: ""}},
		{"WPT-11 format-field-id-null", "id: \x00\x00\nretry: 200\ndata: hello\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("hello")}, Retry: 200 * time.Millisecond, HasRetry: true}},
		{"WPT-12 format-field-parsing", "data:\x00\ndata:  2\rData:1\ndata\x00:2\ndata:1\r\x00data:4\nda-ta:3\rdata_5\ndata:3\rdata:\r\n data:32\ndata:4\n" + "\n", nil,
			wptOutcome{Events: []wptEvent{msg("\x00\n 2\n1\n3\n\n4")}}},
		{"WPT-13 format-field-retry", "retry:02000\ndata:x\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("x")}, Retry: 2 * time.Second, HasRetry: true}},
		{"WPT-14 format-field-retry-bogus", "retry:2000\nretry:1000x\ndata:x\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("x")}, Retry: 2 * time.Second, HasRetry: true}},
		{"WPT-15 format-field-retry-empty", "retry\ndata:test\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("test")}}},
		{"WPT-16 format-field-unknown", "data:test\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:test\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("test\n\ntest")}}},
		{"WPT-17 format-leading-space", "data:\ttest\rdata: \ndata:test\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("\ttest\n\ntest")}}},
		{"WPT-18 format-mime-bogus (body)", "data: data\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("data")}}},
		{"WPT-21 format-newlines", "data:test\r\ndata\ndata:test\r\n\r" + "\n", nil,
			wptOutcome{Events: []wptEvent{msg("test\n\ntest")}}},
		{"WPT-22 format-null-character", "data:\x00\n\n" + "\n", nil,
			wptOutcome{Events: []wptEvent{msg("\x00")}}},
		{"WPT-23 format-utf-8", "data:ok\xE2\x80\xA6\n\n\n", nil,
			wptOutcome{Events: []wptEvent{msg("ok…")}}},
	}
}

func TestWPTBodies(t *testing.T) {
	for _, tc := range wptCases() {
		t.Run(tc.name, func(t *testing.T) {
			forEachFeeding(t, []byte(tc.body), tc.opts, tc.want, summarizeWPT)
		})
	}
}

// WPT-08 and WPT-09: the last event id survives reconnects. The client
// gives each new Decoder the previous one's LastEventID (what it sends as
// Last-Event-ID); responses after the first carry no id line.
func TestWPTLastEventIDAcrossReconnects(t *testing.T) {
	responses := []string{
		"id: \u2026\nretry: 200\ndata: hello\n\n",
		"data: \u2026\n\n",
		"data: \u2026\n\n",
	}
	var got []wptEvent
	last := ""
	for _, body := range responses {
		evs, d, err := decodeAll(strings.NewReader(body), &sse.DecoderOptions{LastEventID: last})
		require.NoError(t, err)
		for _, ev := range evs {
			got = append(got, wptEvent{ev.Type, string(ev.Data), ev.LastEventID})
		}
		last = d.LastEventID()
		assert.Equal(t, "\xE2\x80\xA6", last, "the UTF-8 bytes of U+2026 are sent on reconnect")
	}
	assert.Equal(t, []wptEvent{{"message", "hello", "…"}, {"message", "…", "…"}, {"message", "…", "…"}}, got)
}

// WPT-04 and WPT-11: an id that was not committed (frame cut by the end of
// the stream, or holding NUL) is not sent on reconnect, so the replayed
// event again has no last event id.
func TestWPTUncommittedIDIsNotResent(t *testing.T) {
	for _, body := range []string{
		"retry:1000\ndata:test1\n\nid:test\ndata:test2\n",
		"id: \x00\x00\nretry: 200\ndata: hello\n\n",
	} {
		_, first, err := decodeAll(strings.NewReader(body), nil)
		require.NoError(t, err)
		assert.Empty(t, first.LastEventID())
		evs, _, err := decodeAll(strings.NewReader(body), &sse.DecoderOptions{LastEventID: first.LastEventID()})
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		assert.Empty(t, evs[0].LastEventID)
	}
}
