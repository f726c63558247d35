package writerkit

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// NotFlushableCode is the code of the refusal a handler answers, with
// status 500 before any body, when its ResponseWriter cannot flush: a
// stream that cannot reach its client until the handler returns is a
// server's misconfiguration, which no retry mends.
const NotFlushableCode = refusal.CodeInternal // TODO: confirm, or give it a code of its own: only this line changes

// timeoutHandlerAfter is the timeout of the [http.TimeoutHandler] around
// the handler: far beyond the answer the scenario expects at once.
const timeoutHandlerAfter = 5 * time.Second

// NonFlushingWriters checks that a handler whose ResponseWriter cannot
// flush (under [http.TimeoutHandler], or a logging middleware's wrapper
// that hides Flush and offers no Unwrap, [HideFlush]) answers 500 with the
// JSON [refusal.Body] of [NotFlushableCode] before any body, and that one
// whose wrapper hides Flush but offers Unwrap ([HideFlushUnwrap]) streams:
// its frames arrive before the turn ends.
func NonFlushingWriters(t *testing.T, s Subject) {
	refused := map[string]func(http.Handler) http.Handler{
		"timeout-handler": func(h http.Handler) http.Handler { return http.TimeoutHandler(h, timeoutHandlerAfter, "timeout") },
		"hidden-flush":    HideFlush,
	}
	for _, name := range []string{"timeout-handler", "hidden-flush"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			window := replay.NewMemory(nil)
			BeginTurn(t, window)
			h, closeHandler := s.New(t, window, Options{})
			srv := Serve(t, refused[name](h), closeHandler)
			resp, err := Client(t).Do(s.HTTPRequest(t, srv.URL))
			require.NoError(t, err, "the request is answered, not aborted")
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err, "the answer's body ends cleanly")
			require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "body %q", body)
			ctype, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			require.NoError(t, err, "Content-Type %q", resp.Header.Get("Content-Type"))
			assert.Equal(t, "application/json", ctype)
			var got refusal.Body
			require.NoError(t, json.Unmarshal(body, &got), "the whole body is one refusal body: %q", body)
			assert.Equal(t, NotFlushableCode, got.Code)
		})
	}
	t.Run("hidden-flush-with-unwrap", func(t *testing.T) {
		t.Parallel()
		window := replay.NewMemory(nil)
		turn := BeginTurn(t, window)
		h, closeHandler := s.New(t, window, Options{})
		srv := Serve(t, HideFlushUnwrap(h), closeHandler)
		resp := Open(t, s, srv.URL)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body := ReadBody(resp.Body)
		body.AwaitText(t, FirstDelta, ShortWait, "the frames stream through a wrapper that offers Unwrap")
		turn.Complete(t)
		ended, err := body.End(ShortWait)
		require.True(t, ended, "the stream ends with its turn")
		require.NoError(t, err, "a clean end")
	})
}
