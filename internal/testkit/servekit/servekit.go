// Package servekit serves the turns of one replay window in each of the
// three protocols the module speaks, for the benchmarks that compare them
// in one run: the version-1 stream ([stream.NewHandler]), the AI SDK UI
// message stream ([uistream.NewHandler], a GET that resumes the chat's
// running turn) and AG-UI ([agui.NewHandler], a POST whose runId names the
// turn, as a host that maps a runId it has seen to its turn answers a
// reconnect), every hook allowing. It writes each protocol's request for a
// turn ([NewRequest]) and tells, among a stream's lines, those that deliver
// a text delta ([Delta]). Nothing here is part of the module's API; only
// tests and the fan-out harness import it.
package servekit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// The protocols, by the names the benchmarks give them.
const (
	Stream   = "stream"   // the version-1 stream, [stream.Handler]
	UIStream = "uistream" // the AI SDK UI message stream, [uistream.Handler]
	AGUI     = "agui"     // AG-UI, [agui.Handler]
)

// Protocols returns the three protocols, in the order the benchmarks
// alternate them.
func Protocols() []string { return []string{Stream, UIStream, AGUI} }

// The paths Mount serves under.
const (
	streamPattern = "GET /conversations/{conversation}/turns/{turn}/events"
	uiAPI         = "/api/chat"
	aguiPath      = "/api/ag-ui"
)

// Options configures [Mount].
type Options struct {
	// Conversation is the conversation of every turn the bridges serve:
	// uistream's chat id and agui's runId name the turn only.
	Conversation string
	// HeartbeatInterval is the handler's; 0 means its default.
	HeartbeatInterval time.Duration
}

// Mount mounts on mux the handler of proto serving window's turns, on the
// path [NewRequest] asks: the version-1 stream under GET
// /conversations/{conversation}/turns/{turn}/events, uistream under
// /api/chat (its resume is GET /api/chat/{turn}/stream), agui under
// /api/ag-ui. It returns the handler's Close, and fails for an unknown
// proto or when the handler refuses its options.
func Mount(mux *http.ServeMux, proto string, window replay.Window, opts Options) (func(), error) {
	switch proto {
	case Stream:
		h, err := stream.NewHandler(window, &stream.HandlerOptions{
			Authorize: func(*http.Request, replay.Key) error { return nil },
			Options:   serve.Options{HeartbeatInterval: opts.HeartbeatInterval},
		})
		if err != nil {
			return nil, err
		}
		mux.Handle(streamPattern, h)
		return h.Close, nil
	case UIStream:
		h, err := uistream.NewHandler(window, &uistream.HandlerOptions{
			StartTurn: func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) {
				return replay.Key{}, errNoStart
			},
			ActiveTurn: func(_ context.Context, _ *http.Request, chatID string) (replay.Key, bool, error) {
				return replay.Key{ConversationID: opts.Conversation, TurnID: chatID}, true, nil
			},
			Options: serve.Options{HeartbeatInterval: opts.HeartbeatInterval},
		})
		if err != nil {
			return nil, err
		}
		h.Register(mux, uiAPI)
		return h.Close, nil
	case AGUI:
		h, err := agui.NewHandler(window, &agui.HandlerOptions{
			StartRun: func(_ context.Context, _ *http.Request, in *agui.RunInput) (replay.Key, error) {
				return replay.Key{ConversationID: opts.Conversation, TurnID: in.RunID}, nil
			},
			Options: serve.Options{HeartbeatInterval: opts.HeartbeatInterval},
		})
		if err != nil {
			return nil, err
		}
		mux.Handle(aguiPath, h)
		return h.Close, nil
	}
	return nil, fmt.Errorf("servekit: unknown protocol %q", proto)
}

// errNoStart refuses uistream's POST: the benchmarks start their turns
// themselves and resume them.
var errNoStart = errors.New("servekit: turns are resumed here, not started")

// NewRequest returns the request that reads key's turn in proto from the
// server at base (such as "http://127.0.0.1:8080"), as Mount serves it:
// the bridges' key.ConversationID is the server's [Options.Conversation].
// It asks for no compression, so that it can also be written to a raw
// connection with [http.Request.Write].
func NewRequest(ctx context.Context, proto, base string, key replay.Key) (*http.Request, error) {
	var (
		req *http.Request
		err error
	)
	switch proto {
	case Stream:
		req, err = http.NewRequestWithContext(ctx, http.MethodGet,
			base+"/conversations/"+url.PathEscape(key.ConversationID)+"/turns/"+url.PathEscape(key.TurnID)+"/events", nil)
	case UIStream:
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+uiAPI+"/"+url.PathEscape(key.TurnID)+"/stream", nil)
	case AGUI:
		body, merr := json.Marshal(map[string]any{"threadId": key.ConversationID, "runId": key.TurnID, "messages": []any{}})
		if merr != nil {
			return nil, merr
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, base+aguiPath, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	default:
		return nil, fmt.Errorf("servekit: unknown protocol %q", proto)
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// Opening is the number of data lines a stream in proto sends, for a turn
// whose only frame is lifecycle started, before the first delta can come:
// the version-1 stream's opening heartbeat and the frame; uistream's start
// and start-step chunks; agui's RUN_STARTED.
func Opening(proto string) int {
	if proto == AGUI {
		return 1
	}
	return 2
}

// The beginnings of the lines that deliver a text delta, and of its text.
var (
	dataLine    = []byte("data: {")
	streamDelta = []byte(`,"event":{"type":"delta","text":"`)
	uiDelta     = []byte(`data: {"type":"text-delta",`)
	aguiDelta   = []byte(`data: {"type":"TEXT_MESSAGE_CONTENT",`)
	deltaMember = []byte(`,"delta":"`)
)

// Delta reports whether line, a line of a stream in proto or its first
// bytes (at least up to the delta's text), is a data line that delivers a
// text delta: a version-1 delta event; a text-delta chunk (uistream); a
// TEXT_MESSAGE_CONTENT event (agui). text is the delta's JSON string as
// line holds it, escapes kept, up to its closing quote or the end of line.
// It reads the members in the order the handlers write them: the type
// first in the bridges' objects, after the envelope's ids in version 1.
func Delta(proto string, line []byte) (text []byte, ok bool) {
	var at int
	switch proto {
	case Stream:
		if !bytes.HasPrefix(line, dataLine) {
			return nil, false
		}
		at = bytes.Index(line, streamDelta) + len(streamDelta)
		if at < len(streamDelta) {
			return nil, false
		}
	case UIStream, AGUI:
		prefix := uiDelta
		if proto == AGUI {
			prefix = aguiDelta
		}
		if !bytes.HasPrefix(line, prefix) {
			return nil, false
		}
		at = bytes.Index(line[len(prefix)-1:], deltaMember) + len(deltaMember)
		if at < len(deltaMember) {
			return nil, false
		}
		at += len(prefix) - 1
	default:
		return nil, false
	}
	text = line[at:]
	if end := closingQuote(text); end >= 0 {
		text = text[:end]
	}
	return text, true
}

// closingQuote is the index of the quote that ends the JSON string whose
// contents s begins with, -1 when s holds none.
func closingQuote(s []byte) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
