package chatprotocol

import (
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// writer appends the canonical JSON of events and of ChatStateV1: members
// in the contract's order, no insignificant whitespace, absent optional
// members omitted. It remembers the first error, a refusal of code (the
// zero Code means invalid-event) whose path is under w.path.
type writer struct {
	dst  []byte
	path string
	code Code
	err  error
}

// refusalCode is the code of the writer's refusals.
func (w *writer) refusalCode() Code {
	if w.code == "" {
		return CodeInvalidEvent
	}
	return w.code
}

// refuse builds the refusal of a member that cannot be written.
func (w *writer) refuse(member, message string, cause error) *Error {
	code := w.refusalCode()
	path := w.path
	if member != "" {
		path += "/" + escapePointer(member)
	}
	return refuseWrap(code, path, message, cause)
}

func (w *writer) fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// open starts an event object with its "type".
func (w *writer) open(typ string) {
	w.dst = append(w.dst, '{')
	w.str("type", typ)
}

// name writes a member name, after a comma unless it is the object's first.
func (w *writer) name(name string) {
	if n := len(w.dst); n > 0 && w.dst[n-1] != '{' {
		w.dst = append(w.dst, ',')
	}
	w.dst = append(w.dst, '"')
	w.dst = append(w.dst, name...)
	w.dst = append(w.dst, '"', ':')
}

// str writes a string member.
func (w *writer) str(name, s string) {
	w.name(name)
	var err error
	if w.dst, err = strictjson.AppendString(w.dst, s); err != nil {
		w.fail(w.refuse(name, "not valid UTF-8", err))
	}
}

// optStr writes a string member unless s is "".
func (w *writer) optStr(name, s string) {
	if s != "" {
		w.str(name, s)
	}
}

// optRaw writes a raw JSON member, compacted, unless raw is nil.
func (w *writer) optRaw(name string, raw []byte) {
	if raw == nil {
		return
	}
	w.name(name)
	var err error
	if w.dst, err = strictjson.AppendRaw(w.dst, raw); err != nil {
		w.fail(w.refuse(name, "not one strict JSON value", err))
	}
}

// int writes an integer member.
func (w *writer) int(name string, n int64) {
	w.name(name)
	w.dst = strictjson.AppendInt(w.dst, n)
}

// kept takes the result of an append that may fail; a refusal is kept as
// it is, any other error becomes one.
func (w *writer) kept(dst []byte, err error) {
	w.dst = dst
	if _, ok := err.(*Error); ok || err == nil {
		w.fail(err)
		return
	}
	w.fail(w.refuse("", "cannot encode", err))
}

// close writes the kept unknown members and the closing brace.
func (w *writer) close(unknown []Member, known []string) {
	var err error
	w.dst, err = appendUnknown(w.dst, unknown, known, w.refusalCode(), w.path)
	w.fail(err)
	w.dst = append(w.dst, '}')
}

// list writes n elements as a JSON array, elem writing the i-th.
func (w *writer) list(n int, elem func(i int)) {
	w.dst = append(w.dst, '[')
	for i := range n {
		if i > 0 {
			w.dst = append(w.dst, ',')
		}
		elem(i)
	}
	w.dst = append(w.dst, ']')
}

// errorMembers writes the members of an error (section 6), shared by the
// error event and a turn's error in ChatStateV1.
func (w *writer) errorMembers(code, message string, retryable bool, retryAfterMs *int64) {
	w.str("code", code)
	w.str("message", message)
	w.name("retryable")
	w.dst = strictjson.AppendBool(w.dst, retryable)
	if retryAfterMs != nil {
		w.int("retryAfterMs", *retryAfterMs)
	}
}

// provenance writes the members of a provenance record (section 6).
func (w *writer) provenance(provider, model, requestID string) {
	w.str("provider", provider)
	w.optStr("model", model)
	w.optStr("requestId", requestID)
}

// result writes the members of a tool result (section 6), shared by the
// tool_result event and a tool call in ChatStateV1.
func (w *writer) result(status string, output []byte, blocks []ResultBlock) {
	w.str("status", status)
	w.optRaw("output", output)
	if blocks != nil {
		w.name("blocks")
		w.blocks(blocks)
	}
}

// usage writes a Usage object.
func (w *writer) usage(u *Usage) {
	w.dst = append(w.dst, '{')
	if u.TotalTokens != nil {
		w.int("totalTokens", *u.TotalTokens)
	}
	if u.CostUSD != nil {
		w.name("costUsd")
		w.dst = strictjson.AppendFloat(w.dst, *u.CostUSD)
	}
	w.close(u.Unknown, usageNames)
}

// blocks writes grounded result blocks.
func (w *writer) blocks(bs []ResultBlock) {
	w.list(len(bs), func(i int) { w.block(&bs[i], i) })
}

// block writes the i-th block of a blocks member.
func (w *writer) block(b *ResultBlock, i int) {
	w.dst = append(w.dst, '{')
	w.str("kind", string(b.Kind))
	switch b.Kind {
	case ResultBlockText:
		w.str("text", b.Text)
		if b.Sources != nil {
			w.name("sources")
			w.list(len(b.Sources), func(i int) {
				s := &b.Sources[i]
				w.dst = append(w.dst, '{')
				w.str("ref", s.Ref)
				w.optStr("label", s.Label)
				w.close(s.Unknown, sourceNames)
			})
		}
	case ResultBlockReport:
		w.name("report")
		dst, err := appendKept(w.dst, b.Report, b.kept)
		if err != nil {
			err = keptRefusal(err, w.refusalCode(), w.path+"/blocks/"+itoa(i)+"/report")
		}
		w.kept(dst, err)
	case ResultBlockAsk:
		w.name("ask")
		dst, err := appendKept(w.dst, b.Ask, b.kept)
		if err != nil {
			err = keptRefusal(err, w.refusalCode(), w.path+"/blocks/"+itoa(i)+"/ask")
		}
		w.kept(dst, err)
	}
	w.close(b.Unknown, blockNames)
}
