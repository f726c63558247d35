package stream_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// gzipWriter is a compression middleware's ResponseWriter, as the usual
// ones are: it compresses what is written, flushes through, and unwraps to
// the server's writer, so that http.ResponseController finds Hijack there.
type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g *gzipWriter) Write(p []byte) (int, error) { return g.gz.Write(p) }

func (g *gzipWriter) Flush() {
	g.gz.Flush()
	http.NewResponseController(g.ResponseWriter).Flush()
}

func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// gzipped compresses every response of h.
func gzipped(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		defer gz.Close()
		h.ServeHTTP(&gzipWriter{ResponseWriter: w, gz: gz}, r)
	})
}

// openStream GETs url with client and returns the response, whose body is
// decompressed when the server compressed it.
func openStream(t *testing.T, client *http.Client, url string) (*http.Response, io.Reader) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body as sent
	resp, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return resp, resp.Body
	}
	gz, err := gzip.NewReader(resp.Body)
	require.NoError(t, err)
	return resp, gz
}

// nextEnvelope reads frames from dec up to the next envelope and returns
// its seq.
func nextEnvelope(t *testing.T, dec *sse.Decoder) int64 {
	t.Helper()
	for {
		ev, err := dec.Next()
		require.NoError(t, err)
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		env, err := chatprotocol.ParseEnvelope(ev.Data)
		require.NoError(t, err)
		return env.Seq
	}
}

// Behind a compression middleware, a stream that has caught up and goes
// live is written through the middleware's writer, never past it: every
// frame arrives compressed, in order, and the body ends cleanly with the
// turn (net/http's own writer alone lets the Handler take a connection over).
func TestCompressionMiddlewareGetsEveryWrite(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 20, 10)
	appendAll(t, w, keyT1, envs[:2])
	h := newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{HeartbeatInterval: 20 * time.Millisecond}})
	srv := httptest.NewServer(gzipped(mux(h)))
	t.Cleanup(srv.Close)
	resp, body := openStream(t, srv.Client(), srv.URL+path(keyT1))
	require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	dec := sse.NewDecoder(body, nil)
	require.Equal(t, int64(1), nextEnvelope(t, dec))
	require.Equal(t, int64(2), nextEnvelope(t, dec))
	time.Sleep(60 * time.Millisecond) // idle: heartbeats, where the old Handler took the connection over
	for i, env := range envs[2:] {
		appendAll(t, w, keyT1, []*chatprotocol.ChatEventEnvelope{env})
		require.Equal(t, int64(i+3), nextEnvelope(t, dec), "live frame %d", i+3)
	}
	rest, err := io.ReadAll(body)
	require.NoError(t, err, "the turn ended: the compressed body ends cleanly")
	assert.NotContains(t, string(rest), "data:", "nothing after the last frame but comments")
}

// A stream the server ends before its turn did is never a clean end of
// body, in every mode and behind a wrapper: the client's read fails, so
// that it resumes (docs/contract.md section 14.2).
func TestServerEndIsNeverClean(t *testing.T) {
	cases := append(append([]mode{}, modes...), mode{name: "gzip wrapper"})
	for _, m := range cases {
		t.Run(m.name, func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 5, 10)
			appendAll(t, w, keyT1, envs[:3])
			h := newHandler(t, w, &m.opts)
			var handler http.Handler = mux(h)
			if m.name == "gzip wrapper" {
				handler = gzipped(handler)
			}
			srv := m.start(t, handler)
			_, body := openStream(t, srv.Client(), srv.URL+path(keyT1))
			dec := sse.NewDecoder(body, nil)
			for seq := int64(1); seq <= 3; seq++ {
				require.Equal(t, seq, nextEnvelope(t, dec))
			}
			time.Sleep(20 * time.Millisecond) // caught up: parked where it can be
			h.Close()
			var err error
			for err == nil {
				_, err = dec.Next()
			}
			assert.NotErrorIs(t, err, io.EOF, "an aborted body, not the end of the stream: %v", err)
		})
	}
}

// stallWindow stalls on demand: while stalled, Read and Wait block until
// their ctx ends, as a window whose database stopped answering does.
type stallWindow struct {
	replay.Window
	stalled atomic.Bool
	reads   atomic.Int64
}

func (w *stallWindow) stall(ctx context.Context) error {
	if !w.stalled.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (w *stallWindow) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	w.reads.Add(1)
	if err := w.stall(ctx); err != nil {
		return replay.Bounds{}, nil, err
	}
	return w.Window.Read(ctx, key, after, limit)
}

func (w *stallWindow) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	if err := w.stall(ctx); err != nil {
		return replay.Bounds{}, err
	}
	return w.Window.Wait(ctx, key, after)
}

// countComments reads dec in the background and counts its comments, and
// the envelopes by seq.
type streamCounter struct {
	comments atomic.Int64
	latest   atomic.Int64
	done     chan error
}

func countStream(dec *sse.Decoder) *streamCounter {
	c := &streamCounter{done: make(chan error, 1)}
	go func() {
		for {
			ev, err := dec.Next()
			if err != nil {
				c.done <- err
				return
			}
			switch {
			case ev.Comment:
				c.comments.Add(1)
			case ev.Type != sse.EventHeartbeat:
				env, err := chatprotocol.ParseEnvelope(ev.Data)
				if err != nil {
					c.done <- err
					return
				}
				c.latest.Store(env.Seq)
			}
		}
	}()
	return c
}

// While the window stalls, every stream still gets a heartbeat per
// interval and a new request gets 503 with Retry-After within
// WindowTimeout; once the window answers again the streams go on.
func TestWindowStallKeepsStreamsAlive(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := &stallWindow{Window: newWindow()}
			envs := script(keyT1, 3, 10)
			appendAll(t, w, keyT1, envs[:2])
			o := m.opts
			o.HeartbeatInterval = 50 * time.Millisecond
			o.WindowTimeout = 100 * time.Millisecond
			h := newHandler(t, w, &o)
			srv := m.start(t, mux(h))
			_, body := openStream(t, srv.Client(), srv.URL+path(keyT1))
			dec := sse.NewDecoder(body, nil)
			require.Equal(t, int64(1), nextEnvelope(t, dec))
			require.Equal(t, int64(2), nextEnvelope(t, dec))
			c := countStream(dec)

			w.stalled.Store(true)
			appendAll(t, w.Window, keyT1, envs[2:3]) // a frame the stalled window will not hand out
			before := c.comments.Load()
			time.Sleep(600 * time.Millisecond)
			assert.GreaterOrEqual(t, c.comments.Load()-before, int64(4), "heartbeats through the stall")

			start := time.Now()
			resp, err := srv.Client().Get(srv.URL + path(keyT1))
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			assert.Equal(t, "2", resp.Header.Get("Retry-After"), "the stream's reconnection delay, 2 s")
			assert.Less(t, time.Since(start), time.Second, "a status within WindowTimeout")

			w.stalled.Store(false)
			appendAll(t, w.Window, keyT1, envs[3:])
			select {
			case err := <-c.done:
				assert.ErrorIs(t, err, io.EOF, "the turn ended cleanly")
			case <-time.After(5 * time.Second):
				t.Fatal("the stream did not go on after the stall")
			}
			assert.Equal(t, int64(len(envs)), c.latest.Load())
		})
	}
}

// pageWindow records the limit of every Read and the bytes it returned.
type pageWindow struct {
	replay.Window
	mu    sync.Mutex
	pages [][2]int // limit, bytes returned
}

func (w *pageWindow) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	b, frames, err := w.Window.Read(ctx, key, after, limit)
	size := 0
	for _, f := range frames {
		size += len(f.Data)
	}
	w.mu.Lock()
	w.pages = append(w.pages, [2]int{limit, size})
	w.mu.Unlock()
	return b, frames, err
}

// A reader far behind is served page by page, each Read asking for at
// most PageBytes, and gets every frame once, in order.
func TestReplayReadsPages(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := &pageWindow{Window: newWindow()}
			envs := script(keyT1, 200, 300)
			appendAll(t, w, keyT1, envs)
			o := m.opts
			o.PageBytes = 2000
			h := newHandler(t, w, &o)
			srv := m.start(t, mux(h))
			var got seqRecorder
			_, err := stream.Follow(context.Background(), srv.URL+path(keyT1), &stream.FollowOptions{Client: srv.Client(), OnEnvelope: got.on})
			require.NoError(t, err)
			assert.Equal(t, seqsUpTo(len(envs)), got.seqs)
			w.mu.Lock()
			defer w.mu.Unlock()
			assert.Greater(t, len(w.pages), 20, "the suffix was read in pages")
			for _, p := range w.pages {
				assert.Equal(t, 2000, p[0])
				assert.LessOrEqual(t, p[1], 2000)
			}
		})
	}
}

// An HTTP/1.0 request is never given chunk framing: its body is the event
// stream itself, ended by closing the connection with the turn.
func TestHTTP10GetsNoChunkFraming(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 10, 10)
	appendAll(t, w, keyT1, envs[:2])
	srv := newServer(t, newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{HeartbeatInterval: 10 * time.Millisecond}}))
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET "+path(keyT1)+" HTTP/1.0\r\nHost: test\r\n\r\n")
	require.NoError(t, err)
	go func() {
		time.Sleep(50 * time.Millisecond) // caught up and idle
		appendAll(t, w, keyT1, envs[2:])
	}()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	assert.Empty(t, resp.TransferEncoding)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the connection closes with the turn")
	assert.NotContains(t, string(raw), "\r\n", "no chunk framing in the body")
	var seqs []int64
	r := chatprotocol.NewEnvelopeReader(bytes.NewReader(raw), nil)
	for {
		env, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		seqs = append(seqs, env.Seq)
	}
	assert.Equal(t, seqsUpTo(len(envs)), seqs)
}

// earlyIDClient reads an event stream as the clients that apply an id line
// as soon as they read it do, up to a cut: the frames it dispatched (by
// seq) and the last id it applied.
func earlyIDClient(t *testing.T, body []byte) (dispatched []int64, lastID int64) {
	t.Helper()
	var data []string
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		if i < 0 {
			break // a partial line: not read
		}
		line := string(body[:i])
		body = body[i+1:]
		switch {
		case line == "":
			if len(data) > 0 {
				env, err := chatprotocol.ParseEnvelope([]byte(strings.Join(data, "\n")))
				if err == nil {
					dispatched = append(dispatched, env.Seq)
				}
			}
			data = nil
		case strings.HasPrefix(line, "id: "):
			id, err := strconv.ParseInt(line[4:], 10, 64)
			require.NoError(t, err)
			lastID = id
		case strings.HasPrefix(line, "data: "):
			data = append(data, line[6:])
		}
	}
	return dispatched, lastID
}

// A client that applies id lines early loses no frame wherever a cut falls
// in the stream, but at one position per frame: between its id line and
// the blank line that ends it (docs/contract.md section 10.1).
func TestEarlyIDClientLosesOnlyAtTheOnePosition(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 6, 20)
	appendAll(t, w, keyT1, envs)
	srv := newServer(t, newHandler(t, w, nil))
	bodyAfter := func(cursor int64) []byte {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path(keyT1), nil)
		require.NoError(t, err)
		req.Header.Set("Last-Event-ID", strconv.FormatInt(cursor, 10))
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent {
			return nil
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return b
	}
	full := bodyAfter(0)
	lost := 0
	for cut := 0; cut <= len(full); cut++ {
		got, last := earlyIDClient(t, full[:cut])
		resumed, _ := earlyIDClient(t, bodyAfter(last))
		got = append(got, resumed...)
		if assert.ObjectsAreEqual(seqsUpTo(len(envs)), got) {
			continue
		}
		lost++
		// The only loss: the cut falls right after an id line, before the
		// blank line of that frame.
		before := full[:cut]
		require.True(t, bytes.HasSuffix(before, []byte("\n")) && !bytes.HasSuffix(before, []byte("\n\n")), "cut at %d: %q", cut, before[max(0, cut-40):])
		j := bytes.LastIndexByte(before[:len(before)-1], '\n')
		require.True(t, strings.HasPrefix(string(before[j+1:]), "id: "), "cut at %d loses a frame after %q", cut, before[j+1:])
	}
	assert.Equal(t, len(envs), lost, "one position per frame")
}

// A refusal of code turn-not-found is what a 503 is not: the stall test's
// Retry-After comes only with store-unavailable.
func TestUnavailableAnswerCarriesRetryAfter(t *testing.T) {
	h := newHandler(t, newWindow(), nil)
	key := keyT1
	key.ConversationID = "down"
	rec := record(h, httptest.NewRequest(http.MethodGet, path(key), nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, refusal.CodeStoreUnavailable, refusalOf(t, rec).Code)
	assert.Equal(t, "2", rec.Header().Get("Retry-After"))
	rec = record(h, httptest.NewRequest(http.MethodGet, path(replay.Key{ConversationID: "c-9", TurnID: "t"}), nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
	assert.Empty(t, rec.Header().Get("Retry-After"))
}
