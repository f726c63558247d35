package reqbody

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The defaults of [Limits].
const (
	// DefaultMaxBytes is the largest body read when [Limits.MaxBytes] is 0:
	// 1 MiB, the front-end bridges' bound.
	DefaultMaxBytes = 1 << 20
	// DefaultTimeout is the read deadline of a body when [Limits.Timeout] is
	// 0: 10 s from the start of the read, time enough for 1 MiB at 1 Mbit/s.
	DefaultTimeout = 10 * time.Second
)

// Limits bounds the reading of one request body.
type Limits struct {
	// MaxBytes is the largest body read, in bytes; 0 or negative means
	// [DefaultMaxBytes].
	MaxBytes int64
	// Timeout bounds the whole read, from its start; 0 means
	// [DefaultTimeout], negative no deadline.
	Timeout time.Duration
}

// Read reads r's whole body within lim. A Content-Length over the limit is
// refused before any byte is read; a body that goes on past the limit is
// refused once one byte more is read (with [http.MaxBytesReader], so that
// the server closes the connection rather than read the rest). The read
// deadline is the connection's ([http.ResponseController.SetReadDeadline];
// a writer without one, [http.ErrNotSupported], reads without it), cleared
// once the whole body is read and kept after a failed read, so that the
// server's discarding of an unread rest cannot stall either; over HTTP/1.1
// it replaces, for this body, the deadline of the server's ReadTimeout.
//
// Errors: a [*refusal.Error] of code frame-too-large (413) for a body over
// the limit, else of code unreadable-body (400) wrapping the cause, such as
// [os.ErrDeadlineExceeded] for a body the deadline cut, or the client's
// early end of the body.
func Read(w http.ResponseWriter, r *http.Request, lim Limits) ([]byte, error) {
	limit := lim.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if r.ContentLength > limit {
		return nil, tooLarge(nil)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	timeout := lim.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	rc := http.NewResponseController(w)
	deadline := timeout > 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil // http.ErrNotSupported: no deadline to set
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		// The deadline stays: net/http discards an unread rest of the body
		// before it answers, and a stalled client would hold that read.
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, tooLarge(err)
		}
		return nil, refusal.Wrap(refusal.CodeUnreadableBody, "", "the request body could not be read to its end", err)
	}
	if deadline {
		_ = rc.SetReadDeadline(time.Time{}) // a stream may go on for long after its request
	}
	return body, nil
}

// tooLarge is the refusal of a body over its limit.
func tooLarge(cause error) error {
	return refusal.Wrap(refusal.CodeFrameTooLarge, "", "the request body is over its limit", cause)
}
