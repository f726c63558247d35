package chatprotocol

import (
	"io"
	"math"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// writer walks the canonical JSON of envelopes, events and ChatStateV1:
// members in the contract's order, no insignificant whitespace, absent
// optional members omitted. It remembers the first error, a refusal of
// code (the zero Code means invalid-event) whose path is under w.path.
//
// The same walk both encodes and checks: with check set it writes
// nothing, and every method applies only the rule its encoding would
// enforce (a string is valid UTF-8, a raw member is one strict JSON value,
// a kept member does not shadow a known one …). So Validate and AppendJSON
// run one routine and refuse the same envelopes with the same refusal,
// and checking never pays for encoding.
type writer struct {
	dst   []byte
	path  string
	code  refusal.Code
	err   error
	check bool // write nothing, only check
	// digest, when set, writes the digest form that ChatStateV1.Apply
	// hashes (docs/contract.md section 7.6): the canonical JSON but for
	// every string member, written between quotes as its length (8 bytes)
	// and its bytes, unescaped, and every integer member, written between
	// quotes as its 8 bytes. A kept card or block (writeKept), a kept
	// unknown member and an array's string stay JSON. Which members are
	// strings or integers follows from the names before them, and every
	// value still ends as JSON does, never with '{' (which name reads as
	// the start of an object), so two envelopes have the same digest form
	// exactly when they have the same canonical JSON; the walk refuses
	// what it refuses when it writes JSON.
	digest bool
	// out, when set, receives dst whenever it holds flushBytes or more at
	// a point where the walk calls flush (ChatStateV1.WriteJSON); nil
	// builds the whole output in dst.
	out io.Writer
}

// flushBytes is the most a streaming writer keeps before it hands its
// output on, give or take one element: 64 KiB.
const flushBytes = 64 << 10

// flush hands dst to out when it holds flushBytes or more. A write error
// ends the output: it is the writer's error, and the rest of the walk
// only checks. Call it only where the next byte written is punctuation or
// the rest of a string, never a member name: name decides on its comma by
// the last byte of dst, which a flush empties.
func (w *writer) flush() {
	if w.out == nil || len(w.dst) < flushBytes {
		return
	}
	w.flushAll()
}

// flushAll hands everything in dst to out.
func (w *writer) flushAll() {
	if w.out == nil || w.check || len(w.dst) == 0 {
		return
	}
	if _, err := w.out.Write(w.dst); err != nil {
		w.fail(err)
		w.check = true
	}
	w.dst = w.dst[:0]
}

// refusalCode is the code of the writer's refusals.
func (w *writer) refusalCode() refusal.Code {
	if w.code == "" {
		return refusal.CodeInvalidEvent
	}
	return w.code
}

// refuse builds the refusal of a member that cannot be written.
func (w *writer) refuse(member, message string, cause error) *refusal.Error {
	code := w.refusalCode()
	path := w.path
	if member != "" {
		path += "/" + strictjson.EscapePointer(member)
	}
	return refuseWrap(code, path, message, cause)
}

func (w *writer) fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// within runs body with the writer's refusals at path with code, then
// restores the writer's own.
func (w *writer) within(path string, code refusal.Code, body func()) {
	outerPath, outerCode := w.path, w.code
	w.path, w.code = path, code
	body()
	w.path, w.code = outerPath, outerCode
}

// punct writes one structural byte.
func (w *writer) punct(c byte) {
	if !w.check {
		w.dst = append(w.dst, c)
	}
}

// open starts an event object with its "type", one of the EventType
// constants: plain ASCII, with nothing to check or escape.
func (w *writer) open(typ string) {
	if !w.check {
		w.dst = append(append(append(w.dst, `{"type":"`...), typ...), '"')
	}
}

// The methods below that write store w.dst once each: with the garbage
// collector marking, every store of a slice through the pointer w costs a
// write barrier, which an append per piece would pay several times.

// name writes a member name, after a comma unless it is the object's first.
func (w *writer) name(name string) {
	if !w.check {
		w.dst = appendName(w.dst, name)
	}
}

// appendName appends a member name as name does.
func appendName(dst []byte, name string) []byte {
	if n := len(dst); n > 0 && dst[n-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// str writes a string member, or its digest form.
func (w *writer) str(name, s string) {
	var err error
	switch {
	case w.check:
		err = strictjson.CheckString(s)
	case w.digest:
		w.dst, err = appendDigestString(appendName(w.dst, name), s)
	default:
		w.dst, err = strictjson.AppendString(appendName(w.dst, name), s)
	}
	if err != nil {
		w.fail(w.refuse(name, "not valid UTF-8", err))
	}
}

// appendDigestString appends the digest form of a string (see writer):
// between quotes, its length in 8 bytes, then its bytes. Invalid UTF-8 is
// AppendString's error, with dst returned unchanged.
func appendDigestString(dst []byte, s string) ([]byte, error) {
	if err := strictjson.CheckString(s); err != nil {
		return dst, err
	}
	return append(append(appendQuoteAndWord(dst, uint64(len(s))), s...), '"'), nil
}

// appendQuoteAndWord appends a quote and x in 8 bytes, little-endian: the
// start of a string or an integer in the digest form.
func appendQuoteAndWord(dst []byte, x uint64) []byte {
	return append(dst, '"', byte(x), byte(x>>8), byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
}

// longStr writes a string member that may be long (a turn's text): to a
// streaming writer in pieces of flushBytes, cut between runes, each handed
// on; otherwise as str does. The bytes are str's either way.
func (w *writer) longStr(name, s string) {
	if w.out == nil || w.check || len(s) <= flushBytes {
		w.str(name, s)
		return
	}
	w.name(name)
	w.dst = append(w.dst, '"')
	for s != "" {
		n := min(len(s), flushBytes)
		for cut := n; cut > n-utf8.UTFMax && cut > 0; cut-- {
			if cut == len(s) || utf8.RuneStart(s[cut]) {
				n = cut
				break
			}
		}
		var err error
		if w.dst, err = strictjson.AppendStringBody(w.dst, s[:n]); err != nil {
			w.fail(w.refuse(name, "not valid UTF-8", err))
			return
		}
		s = s[n:]
		if w.flush(); w.check {
			return // out failed: nothing more is written
		}
	}
	w.dst = append(w.dst, '"')
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
	if err := w.rawValue(raw); err != nil {
		w.fail(w.refuse(name, "not one strict JSON value", err))
	}
}

// rawValue writes a raw JSON value, compacted, or in check mode only
// checks it: the error is strictjson's, for the caller to keep.
func (w *writer) rawValue(raw []byte) error {
	if w.check {
		return strictjson.CheckRaw(raw)
	}
	var err error
	w.dst, err = strictjson.AppendRaw(w.dst, raw)
	return err
}

// int writes an integer member, or its digest form.
func (w *writer) int(name string, n int64) {
	switch {
	case w.check:
	case w.digest:
		w.dst = append(appendQuoteAndWord(appendName(w.dst, name), uint64(n)), '"')
	default:
		w.dst = strictjson.AppendInt(appendName(w.dst, name), n)
	}
}

// bool writes a boolean member.
func (w *writer) bool(name string, b bool) {
	if !w.check {
		w.dst = strictjson.AppendBool(appendName(w.dst, name), b)
	}
}

// keptErr takes the error of writing the kept value at path (a card or
// block): a refusal is kept as it is, any other error becomes one of code
// (keptRefusal).
func (w *writer) keptErr(err error, code refusal.Code, path string) {
	if err != nil {
		w.fail(keptRefusal(err, code, path))
	}
}

// close writes the kept unknown members and the closing brace.
func (w *writer) close(unknown []Member, known []string) {
	w.unknown(unknown, known)
	w.punct('}')
}

// list writes n elements as a JSON array, elem writing the i-th.
func (w *writer) list(n int, elem func(i int)) {
	w.punct('[')
	for i := range n {
		if i > 0 {
			w.punct(',')
		}
		elem(i)
		w.flush()
	}
	w.punct(']')
}

// errorMembers writes the members of an error (docs/contract.md section 6), shared by the
// error event and a turn's error in ChatStateV1.
func (w *writer) errorMembers(code, message string, retryable bool, retryAfterMs *int64) {
	w.str("code", code)
	w.str("message", message)
	w.bool("retryable", retryable)
	if retryAfterMs != nil {
		w.int("retryAfterMs", *retryAfterMs)
	}
}

// provenance writes the members of a provenance record (docs/contract.md section 6).
func (w *writer) provenance(provider, model, requestID string) {
	w.str("provider", provider)
	w.optStr("model", model)
	w.optStr("requestId", requestID)
}

// result writes the members of a tool result (docs/contract.md section 6), shared by the
// tool_result event and a tool call in ChatStateV1.
func (w *writer) result(status string, output []byte, blocks []ResultBlock) {
	w.str("status", status)
	w.optRaw("output", output)
	if blocks != nil {
		w.name("blocks")
		w.blocks(blocks)
	}
}

// usage writes a Usage object (its descriptor, usageSpec).
func (w *writer) usage(u *Usage) {
	writeObject(w, usageSpec, u, w.path)
}

// float writes a number member. NaN and the infinities, which JSON has
// no number for, are refused.
func (w *writer) float(name string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		w.fail(w.refuse(name, "not a finite number", nil))
		return
	}
	if !w.check {
		w.dst = strictjson.AppendFloat(appendName(w.dst, name), x)
	}
}

// strElem writes a string element of an array; path is its pointer. It
// writes JSON in the digest form too, where a string is a member only.
func (w *writer) strElem(s, path string) {
	var err error
	if w.check {
		err = strictjson.CheckString(s)
	} else {
		w.dst, err = strictjson.AppendString(w.dst, s)
	}
	if err != nil {
		w.fail(refuseWrap(w.refusalCode(), path, "not valid UTF-8", err))
	}
}

// blocks writes grounded result blocks.
func (w *writer) blocks(bs []ResultBlock) {
	w.list(len(bs), func(i int) { w.block(&bs[i], i) })
}

// block writes the i-th block of a blocks member.
func (w *writer) block(b *ResultBlock, i int) {
	w.punct('{')
	w.str("kind", string(b.Kind))
	switch b.Kind {
	case ResultBlockText:
		w.str("text", b.Text)
		if b.Sources != nil {
			w.name("sources")
			w.list(len(b.Sources), func(i int) { writeObject(w, sourceSpec, &b.Sources[i], w.path) })
		}
	case ResultBlockReport:
		w.name("report")
		writeKept(w, b.Report, b.kept, w.refusalCode(), w.path+"/blocks/"+itoa(i)+"/report")
	case ResultBlockAsk:
		w.name("ask")
		writeKept(w, b.Ask, b.kept, w.refusalCode(), w.path+"/blocks/"+itoa(i)+"/ask")
	}
	w.close(b.Unknown, blockSpec.names)
}
