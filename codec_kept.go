package chatprotocol

import (
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Cards (docs/contract.md section 3) and report and ask blocks (docs/contract.md section 4) have Go types of
// their own, shared with version 0, that hold no unknown members. Inside a
// version-1 event they are decoded from their JSON and the JSON is kept
// beside the value: Marshal re-emits it, members unknown to this version
// included, as long as the value still equals what the JSON decodes to
// (docs/contract.md sections 5 and 6).
//
// They are read and written by the same table-driven walks as the events
// (codec.go), with the descriptors below, which follow the types' JSON
// tags: members in the Go types' order, the embedded cards.CardSpec inlined,
// "omitempty"/"omitzero" members omitted when zero, integers read by
// value. A report or ask block writes itself (its MarshalJSON, in the
// reference's canonical form).
var (
	cardSpec = keptObjectOf[cards.OpenCardSnapshot](
		member("correlationId", "CorrelationID", kindString).need(),
		member("createdAt", "CreatedAt", kindInteger).need(),
		member("prompt", "Prompt", kindString).need(),
		member("presentation", "Presentation", kindObject).of(presentationSpec),
		member("allowDecline", "AllowDecline", kindBool),
		member("timeoutMs", "TimeoutMs", kindInteger),
		member("fallbackText", "FallbackText", kindString),
		member("report", "Report", kindObject).of(reportSpec),
		member("dataSchemaJson", "DataSchemaJSON", kindString))
	presentationSpec = keptObjectOf[cards.CardPresentation](
		member("kind", "Kind", kindString).need(),
		member("options", "Options", kindList).of(optionSpec),
		member("placeholder", "Placeholder", kindString),
		member("multiline", "Multiline", kindBool),
		member("min", "Min", kindBound),
		member("max", "Max", kindBound),
		member("step", "Step", kindNumber),
		member("voiceAnswerable", "VoiceAnswerable", kindBool))
	optionSpec = keptObjectOf[cards.CardOption](
		member("id", "ID", kindString).need(),
		member("label", "Label", kindString).need(),
		member("description", "Description", kindString),
		member("hint", "Hint", kindString),
		member("style", "Style", kindString))
	reportSpec = keptObjectOf[blocks.ReportBlock](
		member("plans", "Plans", kindList).of(planSpec),
		member("title", "Title", kindString))
	planSpec = keptObjectOf[blocks.ReportPlan](
		member("slug", "Slug", kindString),
		member("title", "Title", kindString),
		member("status", "Status", kindString),
		member("summary", "Summary", kindString),
		member("items", "Items", kindList).of(itemSpec))
	itemSpec = keptObjectOf[blocks.ReportItem](
		member("id", "ID", kindString),
		member("text", "Text", kindString),
		member("status", "Status", kindString),
		member("ref", "Ref", kindString))
	askSpec = keptObjectOf[blocks.AskBlock](
		member("question", "Question", kindString),
		member("options", "Options", kindList).of(askOptionSpec),
		member("refs", "Refs", kindStrings))
	askOptionSpec = keptObjectOf[blocks.AskOption](
		member("id", "ID", kindString),
		member("label", "Label", kindString),
		member("description", "Description", kindString))
)

// keptSpecOf returns the descriptor of a kept type: a card, a report or an
// ask block.
func keptSpecOf(t reflect.Type) *objectSpec {
	for _, s := range [...]*objectSpec{cardSpec, reportSpec, askSpec} {
		if s.typ == t {
			return s
		}
	}
	return nil
}

// decodeKept decodes raw, a card or block object, into dst. Member names
// match exactly and duplicates are refused by the decoder; a name that
// differs only by case from another name of the same object, or from a
// member the object's Go type defines, is refused here, because the kept
// JSON is re-emitted and a case-folding consumer would read it as that
// member (docs/contract.md section 5), as ParseEnvelope refuses "TYPE" beside or instead of
// "type". Those refusals, and JSON that is not strict, are
// invalid-envelope; a member of the wrong type or value is code, at the
// member's path.
func decodeKept(raw []byte, dst any, code refusal.Code, path string) error {
	p, ok, err := strictjson.FoldCollision(raw, reflect.TypeOf(dst), maxKeptDepth)
	if err != nil {
		return refuseWrap(refusal.CodeInvalidEnvelope, path, "not one strict JSON value", err)
	}
	if ok {
		return refusef(refusal.CodeInvalidEnvelope, path+p, "member name differs from another name of the object, or from a member of the contract, only by case")
	}
	return decodeInto(raw, dst, code, path)
}

// decodeInto reads raw, strict JSON, into dst, a pointer to a kept type,
// with its descriptor: null is a zero value (docs/contract.md section 3). An integer member
// is read by its value, exactly, as ParseEnvelope reads seq: 1.0 and 1e3
// are integers, 1.5 is not (strictjson.ParseInteger). A member of the
// wrong type is refused with code at its path.
func decodeInto(raw []byte, dst any, code refusal.Code, path string) error {
	v := reflect.ValueOf(dst).Elem()
	s := keptSpecOf(v.Type())
	if s == nil {
		return refusef(code, path, "no descriptor for %v", v.Type())
	}
	d := strictjson.Get(raw, string(raw), 0, 0, maxKeptDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: maxKeptDepth, prefix: path}
	if d.Peek() == 'n' {
		return nil
	}
	if err := r.object(code, path, ""); err != nil {
		return err
	}
	_, err := r.readMembers(s, v, path)
	if err == nil {
		err = d.Finish()
	}
	if err != nil {
		return recoded(err, code, path)
	}
	return nil
}

// maxKeptDepth bounds the nesting of kept JSON, whose depth the frame's
// reader has already bounded.
const maxKeptDepth = 10000

// recoded returns the refusal of reading a kept object: the reader's own,
// a member's value refused with code in place of invalid-event.
func recoded(err error, code refusal.Code, path string) error {
	if e, ok := err.(*refusal.Error); ok {
		if e.Code == refusal.CodeInvalidEvent {
			e.Code = code
		}
		return e
	}
	return refuseWrap(code, path, "wrong type or value", err)
}

// writeKept writes v: the kept JSON when v still equals what it decodes
// to, else v's canonical encoding by its descriptor (members in the Go
// type's order, absent ones omitted). In check mode it writes nothing:
// kept JSON that still matches was strict when it was read, and any other
// value is checked by the same walk that would encode it. A member that
// cannot be written is refused with code at its pointer under path. In
// the digest form too it writes canonical JSON, which its kept JSON may
// be.
func writeKept[T any](w *writer, v *T, kept []byte, code refusal.Code, path string) {
	if w.digest {
		w.digest = false
		defer func() { w.digest = true }()
	}
	if kept != nil {
		var orig T
		if decodeInto(kept, &orig, code, path) == nil && reflect.DeepEqual(&orig, v) {
			if !w.check {
				var err error
				w.dst, err = strictjson.AppendRaw(w.dst, kept)
				w.keptErr(err, code, path)
			}
			return
		}
	}
	outer := w.err
	w.within(path, code, func() { writeObject(w, keptSpecOf(reflect.TypeFor[T]()), v, path) })
	if w.err != outer {
		w.err = keptRefusal(w.err, code, path)
	}
}

// keptRefusal turns an error of writeKept, for the card or block at path,
// into a refusal of code: a refusal of the walk is kept as it is; any
// other error (the kept JSON, or a block's own JSON, is not strict) is
// refused at path.
func keptRefusal(err error, code refusal.Code, path string) error {
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		return e
	}
	return refuseWrap(code, path, "cannot encode: not valid UTF-8, or not a finite number", err)
}

// checkKeptStrings refuses, with code at the string's pointer relative to
// v, the first string of a card or block v (walked by its JSON names) that
// is not valid UTF-8: a hand-built value, or one a version-0 frame carried
// (a lone surrogate escape). Version-1 text is UTF-8 (docs/contract.md section 5), and the
// blocks' own MarshalJSON would silently write U+FFFD in its place.
func checkKeptStrings(v any, code refusal.Code) error {
	if p, bad := invalidString(reflect.ValueOf(v)); bad {
		return refusef(code, p, "not valid UTF-8")
	}
	return nil
}

// invalidString returns the JSON pointer, relative to v, of the first
// string in v that is not valid UTF-8. Struct fields are named by their
// json tags, embedded structs inlined; a struct that writes its own JSON
// from untagged fields (cards.CardBound) is one value.
func invalidString(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidString(v.Elem())
		}
	case reflect.String:
		return "", !utf8.ValidString(v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // raw JSON, checked where it is read
		}
		for i := range v.Len() {
			if p, bad := invalidString(v.Index(i)); bad {
				return "/" + itoa(i) + p, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag, tagged := f.Tag.Lookup("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			p, bad := invalidString(v.Field(i))
			switch {
			case !bad:
				continue
			case !tagged && !f.Anonymous:
				return "", true // a value of its own, such as a cards.CardBound's date
			case f.Anonymous && strings.HasPrefix(tag, ","), f.Anonymous && tag == "":
				return p, true
			}
			name, _, _ := strings.Cut(tag, ",")
			return "/" + strictjson.EscapePointer(name) + p, true
		}
	}
	return "", false
}
