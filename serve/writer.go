package serve

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// flushes reports whether w can flush, as [http.ResponseController.Flush]
// finds out: w, or a writer its Unwrap chain returns, offers Flush. It
// writes nothing, so a writer that cannot flush is refused before any byte
// of a body.
func flushes(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}

// takesOver reports whether the Engine may take r's connection over once
// its stream is idle: w itself offers [http.Hijacker] (net/http's own
// ResponseWriter does; a middleware's wrapper, which may transform or count
// the body, offers it only if it says the connection may be taken), and the
// response is an HTTP/1.1 chunked body, the framing the parked writes
// continue. A POST's body was read whole before its stream began. What
// the writer offers is known at once; whether a middleware encodes the
// body is known only once the first bytes were flushed ([encoded]).
func takesOver(w http.ResponseWriter, r *http.Request) bool {
	if r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.Method == http.MethodHead {
		return false
	}
	_, ok := w.(http.Hijacker)
	return ok
}

// encoded reports whether a middleware encodes the response whose headers
// are h (a compressor such as gzhttp offers Hijack for upgrades): its
// connection is then never taken over, since writing to it bare would
// bypass the encoding.
func encoded(h http.Header) bool { return h.Get("Content-Encoding") != "" }

// reusable reports whether r's connection may serve the client's next
// request once r's stream ended cleanly, as net/http would decide it: the
// client did not ask to close it, the response does not say it closes, and
// r's body was read to its end, since the server would read what is left
// of a body as a request. It is asked before the response's headers are
// written, after which net/http has closed the body, and reads it: io.EOF
// at once for a body read whole. Of one that was not, a body of known
// length is read nothing (an empty read never blocks) and a chunked one a
// byte, which may wait for it as the server's own discarding of its rest
// would.
func reusable(w http.ResponseWriter, r *http.Request) bool {
	if r.Close || saysClose(w.Header()) {
		return false
	}
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	var one [1]byte
	p := one[:0]
	if r.ContentLength < 0 {
		p = one[:]
	}
	n, err := r.Body.Read(p)
	return n == 0 && err == io.EOF
}

// saysClose reports whether h holds the Connection option close.
func saysClose(h http.Header) bool {
	for _, v := range h.Values("Connection") {
		for opt := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(opt), "close") {
				return true
			}
		}
	}
	return false
}

// response writes a stream on its request's goroutine: each write within
// WriteTimeout, then a flush.
type response struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// write writes p and flushes it.
func (o *response) write(p []byte) error {
	if o.timeout > 0 {
		o.rc.SetWriteDeadline(time.Now().Add(o.timeout)) // http.ErrNotSupported: no deadline to set
	}
	if len(p) > 0 {
		if _, err := o.w.Write(p); err != nil {
			return err
		}
	}
	return o.rc.Flush()
}

// chunkHead is the room beginChunk leaves for a chunk's size line: up to
// 14 hex digits and CRLF.
const chunkHead = 16

// maxChunk is the size of the buffer a woken stream writes in one go:
// frames are batched into chunks of about this size.
const maxChunk = 32 << 10

// lastChunk ends a chunked body.
const lastChunk = "0\r\n\r\n"

// beginChunk starts a chunk in dst: room for its size line.
func beginChunk(dst []byte) []byte {
	return append(dst[:0], make([]byte, chunkHead)...)
}

// writeChunk completes the chunk in buf (HTTP/1.1 chunked transfer coding:
// size in hex, CRLF, data, CRLF) and writes it to conn in one call within
// timeout. It returns buf emptied.
func writeChunk(conn net.Conn, timeout time.Duration, buf []byte) ([]byte, error) {
	size := len(buf) - chunkHead
	if size <= 0 {
		return buf[:0], nil
	}
	var head [chunkHead]byte
	line := append(strconv.AppendInt(head[:0], int64(size), 16), '\r', '\n')
	start := chunkHead - len(line)
	copy(buf[start:], line)
	buf = append(buf, '\r', '\n')
	err := writeConn(conn, timeout, buf[start:])
	return buf[:0], err
}

// writeConn writes p to conn within timeout (none when 0).
func writeConn(conn net.Conn, timeout time.Duration, p []byte) error {
	if timeout > 0 {
		conn.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err := conn.Write(p)
	return err
}
