package writerkit

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// Key is the turn every scenario serves: a Subject's hooks name it
// whatever the request carries.
var Key = replay.Key{ConversationID: "chat-w", TurnID: "turn-w"}

// Options are the handler options a scenario sets, by the names the three
// handlers share; every zero field means the handler's default.
type Options struct {
	// HeartbeatInterval and WindowTimeout are the handler's options of the
	// same names.
	HeartbeatInterval, WindowTimeout time.Duration
	// WaitOnRequest keeps every stream on its request's goroutine; set only
	// for a Subject whose [Subject.WaitOnRequest] is true.
	WaitOnRequest bool
}

// Request is the request that streams [Key]'s turn from its first frame.
type Request struct {
	Method string
	Path   string // from the server's root, such as "/api/chat"
	// Body and ContentType are a POST's; "" for none.
	Body, ContentType string
}

// Subject is one handler under test, as a package's test file describes
// it to the scenarios.
type Subject struct {
	// New returns the handler of window with opts, routed as the package
	// documents it (a mux when it has several endpoints), serving [Key]'s
	// turn for [Subject.Request], and the handler's Close: the graceful
	// shutdown that aborts every stream.
	New func(t testing.TB, window replay.Window, opts Options) (h http.Handler, closeHandler func())
	// Request is the request that streams [Key]'s turn.
	Request Request
	// WaitOnRequest tells that the handler has the option of that name
	// (the version-1 stream's): the scenarios then run with it too.
	WaitOnRequest bool
}

// Mode is one way a scenario runs a [Subject]: options, and whether a
// pass-through middleware (a [Counter]'s, which offers Unwrap and Flush but
// not Hijack) stands in front of the handler.
type Mode struct {
	Name    string
	Options Options
	Wrapped bool
}

// Modes returns the ways the abort scenario runs s: bare; behind a
// pass-through wrapper, which keeps a stream on its request's goroutine;
// and with WaitOnRequest when s has it.
func (s Subject) Modes() []Mode {
	modes := []Mode{{Name: "bare"}, {Name: "wrapped", Wrapped: true}}
	if s.WaitOnRequest {
		modes = append(modes, Mode{Name: "wait-on-request", Options: Options{WaitOnRequest: true}})
	}
	return modes
}

// HTTPRequest returns s's request to the server at base.
func (s Subject) HTTPRequest(t testing.TB, base string) *http.Request {
	t.Helper()
	var body io.Reader
	if s.Request.Body != "" {
		body = strings.NewReader(s.Request.Body)
	}
	r, err := http.NewRequestWithContext(t.Context(), s.Request.Method, base+s.Request.Path, body)
	if err != nil {
		t.Fatalf("writerkit: the request: %v", err)
	}
	if s.Request.ContentType != "" {
		r.Header.Set("Content-Type", s.Request.ContentType)
	}
	return r
}
