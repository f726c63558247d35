package writerkit

import (
	"net/http"
	"sync/atomic"
)

// The ResponseWriter wrappers of the scenarios, each what a common
// middleware does to a handler's writer. None offers Hijack: a handler
// reaches the connection only through [http.ResponseController], which
// follows Unwrap.

// HideFlush is a logging middleware whose wrapper offers only Header,
// Write and WriteHeader: no Flush and no Unwrap, so that nothing the
// handler writes can be flushed before it returns.
func HideFlush(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&loggingWriter{w: w}, r)
	})
}

// loggingWriter records the status it passes on, as a logging
// middleware's wrapper does, and offers nothing else.
type loggingWriter struct {
	w      http.ResponseWriter
	status int
}

func (l *loggingWriter) Header() http.Header { return l.w.Header() }

func (l *loggingWriter) Write(p []byte) (int, error) {
	if l.status == 0 {
		l.status = http.StatusOK
	}
	return l.w.Write(p)
}

func (l *loggingWriter) WriteHeader(status int) {
	if l.status == 0 {
		l.status = status
	}
	l.w.WriteHeader(status)
}

// HideFlushUnwrap is the middleware of [HideFlush] whose wrapper also
// offers Unwrap: [http.ResponseController] flushes through it.
func HideFlushUnwrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&unwrappingWriter{loggingWriter{w: w}}, r)
	})
}

// unwrappingWriter is a loggingWriter that offers Unwrap.
type unwrappingWriter struct{ loggingWriter }

func (u *unwrappingWriter) Unwrap() http.ResponseWriter { return u.w }

// Counter is a middleware that counts the bytes of the response bodies
// written through its wrapper, which offers Flush and Unwrap but not
// Hijack. Safe for concurrent use; the zero Counter counts from 0.
type Counter struct {
	n atomic.Int64
}

// Wrap returns h behind the Counter's wrapper.
func (c *Counter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&countingWriter{w: w, c: c}, r)
	})
}

// Bytes returns the body bytes written through the wrapper so far.
func (c *Counter) Bytes() int64 { return c.n.Load() }

// countingWriter counts what it passes on.
type countingWriter struct {
	w http.ResponseWriter
	c *Counter
}

func (cw *countingWriter) Header() http.Header    { return cw.w.Header() }
func (cw *countingWriter) WriteHeader(status int) { cw.w.WriteHeader(status) }

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.c.n.Add(int64(n))
	return n, err
}

// Flush flushes the writer beneath, through its controller.
func (cw *countingWriter) Flush() { _ = http.NewResponseController(cw.w).Flush() }

// Unwrap returns the writer beneath, for [http.ResponseController].
func (cw *countingWriter) Unwrap() http.ResponseWriter { return cw.w }
