package chatprotocol

import (
	"errors"
	"math"
	"reflect"
	"unsafe"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The version-1 codec is table-driven (docs/contract.md sections 5 to 7):
// every object it reads member by member (an event, Usage, Source, a result
// block's members, ChatCapabilities, and the kept cards and blocks of
// codec_kept.go) is described once by an objectSpec, and one walk reads it
// (reader.readMembers), one checks its values (objectSpec.check) and one
// writes it (writer.members). Adding an event type is one entry of
// eventSpecs (event_json.go) and its tests.

// memberKind is the JSON shape of a member and the Go field that holds it.
type memberKind uint8

const (
	kindString  memberKind = iota // a JSON string; a field of string kind
	kindInteger                   // an integer, read exactly (section 5); int64 or *int64
	kindNumber                    // a JSON number; *float64
	kindBool                      // true or false; bool
	kindRaw                       // any JSON value, kept as read; json.RawMessage
	kindObject                    // an object described by sub; a struct or a pointer to one
	kindList                      // an array of objects described by sub; a slice of structs
	kindBlocks                    // grounded result blocks (section 6); []ResultBlock
	kindCard                      // an open card (section 3), its JSON kept; cards.OpenCardSnapshot
	kindStrings                   // an array of strings; []string
	kindBound                     // a card's min or max (section 3): a number or a date string; *cards.CardBound
)

// valueRule is the rule of docs/contract.md section 6 a member's value obeys beyond its
// JSON shape. The parser applies it after reading the whole object and
// checking presence; Marshal applies it before writing anything.
type valueRule uint8

const (
	ruleNone        valueRule = iota
	ruleNonEmpty              // a non-empty string
	ruleID                    // the id rule of section 5 (checkID); when required, "" is missing
	ruleOneOf                 // one of the values valid accepts (an enum)
	ruleNonNegative           // an integer >= 0, when present
	ruleFinite                // a non-negative finite number, when present
	ruleSet                   // not nil: required, though read as optional (a state's snapshot)
	ruleOrdinal               // an integer in 1..MaxSeq (a step's number)
)

// memberSpec describes one member of an object: its wire name, the Go
// field that holds it, its kind, whether it is required, its value rule
// and the code of its refusals ("" means invalid-event).
type memberSpec struct {
	name     string
	field    string
	kind     memberKind
	required bool
	rule     valueRule
	code     refusal.Code
	valid    func(string) bool // ruleOneOf
	sub      *objectSpec       // kindObject, kindList

	index []int // of field in the struct, set by objectOf

	// Where the writer finds the field without reflection, set by objectOf
	// (codec_layout.go): offset bytes from the struct's start, through a
	// pointer when pointer is set.
	offset  uintptr
	pointer bool
}

// member returns the spec of an optional member without a value rule.
func member(name, field string, kind memberKind) memberSpec {
	return memberSpec{name: name, field: field, kind: kind}
}

// need makes the member required: a missing one is refused.
func (m memberSpec) need() memberSpec { m.required = true; return m }

// is sets the member's value rule.
func (m memberSpec) is(rule valueRule) memberSpec { m.rule = rule; return m }

// oneOf sets the rule that the value is one valid accepts.
func (m memberSpec) oneOf(valid func(string) bool) memberSpec {
	m.rule, m.valid = ruleOneOf, valid
	return m
}

// coded sets the code of the member's refusals.
func (m memberSpec) coded(code refusal.Code) memberSpec { m.code = code; return m }

// of sets the spec of a nested object or of a list's elements.
func (m memberSpec) of(sub *objectSpec) memberSpec { m.sub = sub; return m }

// refusalCode returns the code of the member's refusals.
func (m *memberSpec) refusalCode() refusal.Code {
	if m.code == "" {
		return refusal.CodeInvalidEvent
	}
	return m.code
}

// objectSpec describes an object: its members in canonical order and the
// Go struct that holds it, whose field Unknown keeps the members this
// version does not define (docs/contract.md section 5).
//
// A kept object (a card or a report or ask block, see codec_kept.go) has no
// Unknown field: its JSON is kept whole instead. It is read as the card
// types' JSON tags say: no member is required, null leaves a member zero
// (but for an integer, which must be a number), a member of another name
// is skipped. Its required members are those written even when zero; the
// others are omitted when zero, a list when empty.
type objectSpec struct {
	typ       reflect.Type
	members   []memberSpec
	names     []string     // every member name in canonical order, "type" first in an event
	unknown   []int        // index of the Unknown field; nil in a kept object
	unknownAt uintptr      // offset of the Unknown field, when unknown is set
	marshals  bool         // a kept object whose pointer writes its own JSON
	typed     bool         // an event: "type" is its first member, read by the dispatch
	zero      func() Event // an event: a new zero event of the type
	// at returns the struct an event of the type points to, nil for a nil
	// one (an event's descriptor only).
	at func(Event) unsafe.Pointer

	// Sets of members, bit i for the i-th, so that the walks pass over
	// the others at no cost.
	required uint32 // required
	ids      uint32 // required ids, missing when ""
	checked  uint32 // with a value rule, or nested rules
	cards    uint32 // of kindCard
}

// objectOf returns the spec of the struct T with members. A field name
// that T lacks is a mistake in the table, reported on the package's
// first use by any test.
func objectOf[T any](members ...memberSpec) *objectSpec {
	s := keptObjectOf[T](members...)
	s.unknown = fieldIndex(s.typ, "Unknown")
	s.unknownAt = fieldOffset(s.typ, s.unknown)
	return s
}

// keptObjectOf returns the spec of the struct T, a kept object.
func keptObjectOf[T any](members ...memberSpec) *objectSpec {
	t := reflect.TypeFor[T]()
	s := &objectSpec{typ: t, members: members, marshals: reflect.PointerTo(t).Implements(marshalerType)}
	for i := range s.members {
		m := &s.members[i]
		m.index = fieldIndex(t, m.field)
		m.offset, m.pointer = fieldLayout(t, m)
		s.names = append(s.names, m.name)
		bit := uint32(1) << i
		if m.required {
			s.required |= bit
			if m.rule == ruleID {
				s.ids |= bit
			}
		}
		if m.rule != ruleNone || m.kind == kindCard || m.kind == kindBlocks || m.kind == kindObject && m.sub.checked != 0 {
			s.checked |= bit
		}
		if m.kind == kindCard {
			s.cards |= bit
		}
	}
	return s
}

// eventOf returns the spec of the event struct T: members after "type".
func eventOf[T any, P interface {
	*T
	Event
}](members ...memberSpec) *objectSpec {
	s := objectOf[T](members...)
	s.names = append([]string{"type"}, s.names...)
	s.typed = true
	s.zero = func() Event { return P(new(T)) }
	s.at = func(ev Event) unsafe.Pointer { e, _ := ev.(P); return unsafe.Pointer(e) }
	return s
}

// fieldIndex returns the index of the field name of t, which may be the
// field of an embedded struct.
func fieldIndex(t reflect.Type, name string) []int {
	f, ok := t.FieldByName(name)
	if !ok {
		panic("chatprotocol: " + t.Name() + " has no field " + name)
	}
	return f.Index
}

// find returns the index of the member called name, or -1.
func (s *objectSpec) find(name []byte) int {
	for i := range s.members {
		if s.members[i].name == string(name) {
			return i
		}
	}
	return -1
}

// unknownOf returns the Unknown field of v, an object of s.
func (s *objectSpec) unknownOf(v reflect.Value) *[]Member {
	return v.FieldByIndex(s.unknown).Addr().Interface().(*[]Member)
}

// readMembers reads the members of the object at path described by s,
// whose '{' the decoder just read, into v (an addressable struct of s),
// and its '}'. A member's value of the wrong shape is refused with the
// member's code; a name s does not define is kept in Unknown unless it
// is a case variant of one it does (docs/contract.md section 5). It then refuses the first
// required member, in canonical order, that is missing, and decodes the
// kept JSON of a card. It returns the set of members read, bit i for the
// i-th. The value rules are left to check.
func (r *reader) readMembers(s *objectSpec, v reflect.Value, path string) (seen uint32, err error) {
	for r.d.More() {
		name, err := r.d.Name()
		if err != nil {
			return 0, r.fail(err, refusal.CodeInvalidEvent, path, "")
		}
		i := s.find(name)
		switch {
		case i >= 0:
			seen |= 1 << i
			err = r.member(s, &s.members[i], v, path)
		case s.typed && string(name) == "type":
			if err = r.d.Skip(); err != nil {
				err = r.fail(err, refusal.CodeInvalidEvent, path, "type")
			}
		case s.unknown == nil:
			if err = r.d.Skip(); err != nil {
				err = r.fail(err, refusal.CodeInvalidEvent, path, "")
			}
		default:
			err = r.keep(name, refusal.CodeInvalidEvent, path, s.names, s.unknownOf(v))
		}
		if err != nil {
			return 0, err
		}
	}
	if err := r.d.End(); err != nil {
		return 0, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	if s.unknown != nil && (s.required&^seen != 0 || s.ids != 0) {
		for i := range s.members {
			m := &s.members[i]
			if m.required && (seen&(1<<i) == 0 || s.ids&(1<<i) != 0 && v.FieldByIndex(m.index).Len() == 0) {
				return 0, missing(m.refusalCode(), path, m.name)
			}
		}
	}
	for i := range s.members {
		if s.cards&seen&(1<<i) != 0 {
			if err := decodeCardMember(&s.members[i], v, path); err != nil {
				return 0, err
			}
		}
	}
	return seen, nil
}

// member reads the value of m, a member of s, into its field of v.
func (r *reader) member(s *objectSpec, m *memberSpec, v reflect.Value, path string) error {
	f := v.FieldByIndex(m.index)
	code := m.refusalCode()
	if s.unknown == nil && m.kind != kindInteger && r.d.Peek() == 'n' {
		return r.skip(code, path, m.name) // null leaves a kept object's member zero
	}
	var err error
	switch m.kind {
	case kindString:
		var s string
		if s, err = r.d.String(); err == nil {
			f.SetString(s)
		}
	case kindInteger:
		var n int64
		if n, err = r.d.Integer(); err == nil {
			settable(f).SetInt(n)
		}
	case kindNumber:
		var x float64
		if x, err = r.d.Float(); err == nil {
			settable(f).SetFloat(x)
		}
	case kindBool:
		var b bool
		if b, err = r.d.Bool(); err == nil {
			f.SetBool(b)
		}
	case kindRaw:
		var raw []byte
		if raw, err = r.d.Raw(); err == nil {
			f.SetBytes(raw)
		}
	case kindCard:
		var raw []byte
		if raw, err = r.d.RawObject(); err == nil {
			*keptOf(v) = raw
		}
	case kindObject:
		p := path + "/" + m.name
		if err := r.object(code, p, ""); err != nil {
			return err
		}
		_, err := r.readMembers(m.sub, settable(f), p)
		return err
	case kindList, kindStrings:
		return r.list(m, f, path+"/"+m.name)
	case kindBound:
		b := settable(f).Addr().Interface().(*cards.CardBound)
		if r.d.Peek() != '"' {
			b.Number, err = r.d.Float()
		} else if b.Date, err = r.d.String(); err == nil && b.Date == "" {
			err = errEmptyDate
		}
	case kindBlocks:
		bs, err := r.blocks(path + "/" + m.name)
		*f.Addr().Interface().(*[]ResultBlock) = bs
		return err
	}
	if err != nil {
		return r.fail(err, code, path, m.name)
	}
	return nil
}

// errEmptyDate refuses a card bound that is an empty string: a date bound
// is an ISO date (docs/contract.md section 3).
var errEmptyDate = errors.New("card bound: empty date string")

// list reads an array of objects of m.sub, or of strings, into the slice
// f; the array read is never nil, even when empty. In a kept object a null
// element is a zero one.
func (r *reader) list(m *memberSpec, f reflect.Value, path string) error {
	code := m.refusalCode()
	if err := r.array(code, path, ""); err != nil {
		return err
	}
	elems := reflect.MakeSlice(f.Type(), 0, 0)
	for i := 0; r.d.More(); i++ {
		elems = reflect.Append(elems, reflect.New(f.Type().Elem()).Elem())
		elem, p := elems.Index(i), path+"/"+itoa(i)
		var err error
		switch {
		case m.sub == nil || m.sub.unknown == nil && r.d.Peek() == 'n':
			err = r.element(elem, code, p)
		default:
			if err = r.object(code, p, ""); err == nil {
				_, err = r.readMembers(m.sub, elem, p)
			}
		}
		if err != nil {
			return err
		}
	}
	if err := r.d.End(); err != nil {
		return r.fail(err, code, path, "")
	}
	f.Set(elems)
	return nil
}

// element reads an element of a kept list that is null (left zero) or a
// string of a list of strings.
func (r *reader) element(elem reflect.Value, code refusal.Code, path string) error {
	if r.d.Peek() == 'n' {
		return r.skip(code, path, "")
	}
	s, err := r.d.String()
	if err != nil {
		return r.fail(err, code, path, "")
	}
	elem.SetString(s)
	return nil
}

// skip reads and discards the value of member.
func (r *reader) skip(code refusal.Code, path, member string) error {
	return r.failed(r.d.Skip(), code, path, member)
}

// settable returns f, or for a pointer field a new value f points to.
func settable(f reflect.Value) reflect.Value {
	if f.Kind() != reflect.Pointer {
		return f
	}
	p := reflect.New(f.Type().Elem())
	f.Set(p)
	return p.Elem()
}

// cardKeeper is an object with a card member (kindCard), whose JSON as
// read it keeps beside the decoded card (codec_kept.go).
type cardKeeper interface{ keptCard() *[]byte }

// keptOf returns the kept card JSON of v, an object with a card member.
func keptOf(v reflect.Value) *[]byte { return v.Addr().Interface().(cardKeeper).keptCard() }

// decodeCardMember decodes the kept JSON of the card member m of v into its
// field: invalid-card at the member's path (docs/contract.md section 3).
func decodeCardMember(m *memberSpec, v reflect.Value, path string) error {
	return decodeKept(*keptOf(v), v.FieldByIndex(m.index).Addr().Interface(), refusal.CodeInvalidCard, path+"/"+m.name)
}

// check applies the value rules of s to v, an object at path, member by
// member in canonical order, nested objects included (docs/contract.md section 6).
func (s *objectSpec) check(v reflect.Value, path string) error {
	if s.checked == 0 {
		return nil
	}
	for i := 0; s.checked>>i != 0; i++ {
		if s.checked&(1<<i) == 0 {
			continue
		}
		if err := s.members[i].check(v.FieldByIndex(s.members[i].index), path); err != nil {
			return err
		}
	}
	return nil
}

// check applies m's value rule to its field f.
func (m *memberSpec) check(f reflect.Value, path string) error {
	code := m.refusalCode()
	present := f.Kind() != reflect.Pointer || !f.IsNil()
	switch {
	case m.rule == ruleNonEmpty && f.Len() == 0:
		return refusef(code, path+"/"+m.name, "must be a non-empty string")
	case m.rule == ruleID:
		return checkID(code, path, m.name, f.String())
	case m.rule == ruleOneOf && !m.valid(f.String()):
		return refusef(code, path+"/"+m.name, "%q is not one of the values of section 6", f.String())
	case m.rule == ruleNonNegative && present && reflect.Indirect(f).Int() < 0:
		return refusef(code, path+"/"+m.name, "must not be negative")
	case m.rule == ruleFinite && present && !finiteNonNegative(reflect.Indirect(f).Float()):
		return refusef(code, path+"/"+m.name, "must be a non-negative finite number")
	case m.rule == ruleSet && f.IsNil():
		return refusef(code, path+"/"+m.name, "missing")
	case m.rule == ruleOrdinal && (f.Int() < 1 || f.Int() > MaxSeq):
		return refusef(code, path+"/"+m.name, "%d is outside 1..2^53-1", f.Int())
	}
	switch m.kind {
	case kindObject:
		if present {
			return m.sub.check(reflect.Indirect(f), path+"/"+m.name)
		}
	case kindBlocks:
		return validateBlocks(*f.Addr().Interface().(*[]ResultBlock), path)
	case kindCard:
		return prefixed(validateCardSnapshot(f.Addr().Interface().(*cards.OpenCardSnapshot)), path+"/"+m.name)
	}
	return nil
}

// finiteNonNegative reports whether x is a finite number >= 0.
func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
