package sse

import (
	"strconv"
	"strings"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Event names with a meaning on the wire (docs/contract.md section 10).
const (
	// EventMessage is the type a reader gives a frame without an event line;
	// [AppendFrame] writes no event line for it.
	EventMessage = "message"
	// EventHeartbeat is the event name of a heartbeat frame, whose data is
	// {"tsMs":N}. Readers of chat streams skip it.
	EventHeartbeat = "heartbeat"
)

// Frame is one event as a host writes it (docs/contract.md section 10). For a
// version-1 envelope ID is the decimal seq and Event is empty: the event
// type is in the data.
//
// ID is written as an id line unless it is empty; it may not contain CR, LF
// or NUL. Event is written as an event line unless it is empty or
// [EventMessage]; it may not contain CR, LF or NUL. Data is the payload: it is
// written as one data line per line, split on CR, LF and CRLF, so a reader
// gets it back with every line break turned into LF; an empty or nil Data
// still writes one data line, so every frame dispatches an event. Retry,
// when positive, is written as a retry line in whole milliseconds (rounded
// down); 0 writes none and a negative Retry is refused.
type Frame struct {
	ID    string
	Event string
	Data  []byte
	Retry time.Duration
}

// validField reports whether s can be an id or event name: no CR or LF,
// which would end its line and inject fields, and no NUL, with which a
// reader ignores an id (docs/contract.md section 10).
func validField(s string) bool { return !strings.ContainsAny(s, "\r\n\x00") }

// check refuses a frame whose fields would break out of their lines.
func (f *Frame) check() error {
	if !validField(f.ID) {
		return refusal.New(refusal.CodeInvalidFrame, "/id", "an SSE id may not contain CR, LF or NUL")
	}
	if !validField(f.Event) {
		return refusal.New(refusal.CodeInvalidFrame, "/event", "an SSE event name may not contain CR, LF or NUL")
	}
	if f.Retry < 0 {
		return refusal.New(refusal.CodeInvalidFrame, "/retry", "an SSE retry may not be negative")
	}
	return nil
}

// AppendFrame appends the bytes of f to dst and returns the extended slice:
// the event, data, retry and id lines in that order, each "name: value"
// ("name:" when the value is empty), LF line ends, then one blank line
// (docs/contract.md section 10.1), for example
//
//	data: {"schemaVersion":1,...}
//	id: 1
//
// The id goes last, so that a client that applies an id line as soon as it
// reads it has read the whole frame but its blank line by then.
//
// A frame whose ID or Event would inject fields, or whose Retry is
// negative, is refused with a [*refusal.Error] of code invalid-frame
// ([refusal.ErrInvalidFrame]) whose Path is "/id", "/event" or "/retry";
// dst is then returned unchanged. AppendFrame does not allocate when dst
// has room.
func AppendFrame(dst []byte, f Frame) ([]byte, error) {
	if err := f.check(); err != nil {
		return dst, err
	}
	if f.Event != "" && f.Event != EventMessage {
		dst = appendField(dst, "event", f.Event)
	}
	dst = appendLines(dst, "data", f.Data)
	if f.Retry > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, f.Retry.Milliseconds(), 10)
		dst = append(dst, '\n')
	}
	if f.ID != "" {
		dst = appendField(dst, "id", f.ID)
	}
	return append(dst, '\n'), nil
}

// AppendComment appends a comment frame to dst: one ": text" line per line
// of text (split on CR, LF and CRLF; ":" alone for an empty line), then a
// blank line, as in ": connected\n\n". A comment carries no id and
// dispatches no event; hosts use it to open a stream or keep it alive.
func AppendComment(dst []byte, text string) []byte {
	return append(appendLines(dst, "", text), '\n')
}

// AppendHeartbeat appends a heartbeat frame to dst:
// "event: heartbeat\ndata: {\"tsMs\":N}\n\n" where N is tsMs, a time in
// Unix epoch milliseconds. A heartbeat carries no id, so it does not move a
// reader's last event id (docs/contract.md section 10).
func AppendHeartbeat(dst []byte, tsMs int64) []byte {
	dst = append(dst, "event: heartbeat\ndata: {\"tsMs\":"...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	return append(dst, "}\n\n"...)
}

// appendField appends one "name: value" line; value holds no line break.
func appendField(dst []byte, name, value string) []byte {
	dst = append(dst, name...)
	dst = append(dst, ':')
	if value != "" {
		dst = append(dst, ' ')
		dst = append(dst, value...)
	}
	return append(dst, '\n')
}

// appendLines appends one "name: line" line per line of p, splitting on CR,
// LF and CRLF; an empty p gives one line.
func appendLines[T string | []byte](dst []byte, name string, p T) []byte {
	for {
		i := indexLineBreak(p)
		end := i
		if i < 0 {
			end = len(p)
		}
		dst = append(dst, name...)
		dst = append(dst, ':')
		if end > 0 {
			dst = append(dst, ' ')
			dst = append(dst, p[:end]...)
		}
		dst = append(dst, '\n')
		if i < 0 {
			return dst
		}
		if p[i] == '\r' && i+1 < len(p) && p[i+1] == '\n' {
			i++
		}
		p = p[i+1:]
	}
}

// indexLineBreak returns the index of the first CR or LF in p, or -1.
func indexLineBreak[T string | []byte](p T) int {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}
