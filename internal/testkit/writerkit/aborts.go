package writerkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// abortInterval is the heartbeat interval of the abort scenario: the first
// heartbeat tells the client the stream is caught up and idle.
const abortInterval = 100 * time.Millisecond

// outcome is one way a live stream ends in the abort scenario.
type outcome struct {
	name  string
	abort bool // the stream ends before its turn: the client must see an error
	do    func(t testing.TB, srv *httptest.Server, closeHandler func(), turn *Turn)
}

var outcomes = []outcome{
	{"handler-close", true, func(_ testing.TB, _ *httptest.Server, closeHandler func(), _ *Turn) { closeHandler() }},
	{"server-closes-connections", true, func(_ testing.TB, srv *httptest.Server, _ func(), _ *Turn) { srv.CloseClientConnections() }},
	{"turn-ends", false, func(t testing.TB, _ *httptest.Server, _ func(), turn *Turn) { turn.Complete(t) }},
}

// FetchAborts checks, with Node's own fetch reading the body, that a
// stream the server ends before its turn did reads as an error, and the
// turn's real end as a clean end (docs/contract.md section 14.2), in each
// of [Subject.Modes]: the handler's Close (a graceful shutdown), the server
// closing its client connections, or the terminal frame, each once the
// stream is caught up and idle (a heartbeat came). It also checks that
// the response of a live turn carries no Connection: close, under which
// undici reads a body cut without its last chunk as a clean end.
func FetchAborts(t *testing.T, s Subject) {
	node := Node(t)
	for _, m := range s.Modes() {
		for _, o := range outcomes {
			t.Run(m.Name+"/"+o.name, func(t *testing.T) {
				if o.name == "server-closes-connections" && !m.Wrapped && !m.Options.WaitOnRequest {
					// A connection the handler took over is no longer the
					// server's: neither CloseClientConnections nor
					// http.Server.Close reaches it; the handler's Close,
					// registered on shutdown, does (handler-close).
					t.Skip("a parked stream's connection is the handler's, not the server's")
				}
				t.Parallel()
				window := replay.NewMemory(nil)
				turn := BeginTurn(t, window)
				opts := m.Options
				opts.HeartbeatInterval = abortInterval
				h, closeHandler := s.New(t, window, opts)
				if m.Wrapped {
					h = new(Counter).Wrap(h)
				}
				srv := Serve(t, h, closeHandler)
				f := StartFetch(t, node, s, srv.URL, "\n"+HeartbeatLine+"\n")
				open := f.Open(t, ShortWait)
				require.Equal(t, http.StatusOK, open.Status)
				assert.NotContains(t, strings.ToLower(open.Headers["connection"]), "close",
					"a live turn's response carries no Connection: close (undici then reads an abort as a clean end)")
				f.Signal(t, ShortWait) // a heartbeat: caught up and idle

				o.do(t, srv, closeHandler, turn)
				end := f.End(t, ShortWait)
				t.Logf("%s: %d bytes, clean %v, error %s", o.name, end.Bytes, end.Clean, end.Error)
				require.False(t, end.Timeout, "the script's own timeout ended the read")
				if o.abort {
					assert.False(t, end.Clean, "Node's fetch reads the abort as an error, not a clean end")
					assert.NotNil(t, end.Error, "Node's fetch reports an error")
				} else {
					assert.True(t, end.Clean, "Node's fetch reads the turn's end as a clean end; error %s", end.Error)
				}
			})
		}
	}
}
