package chatprotocol

import (
	"encoding/json"
	"errors"
	"reflect"
	"unsafe"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The write walk of the table-driven codec (codec.go) reads each member's
// field at its offset in the struct, found once per descriptor by
// fieldLayout, not through reflect.Value. fieldLayout checks, on the
// package's first use, that every field has the Go type its kind is read
// as, so no read at an offset takes a field for another type.

// marshalerType is json.Marshaler, which a report or ask block implements.
var marshalerType = reflect.TypeFor[json.Marshaler]()

// errNoDescriptor is a write of an object with a descriptor of another
// type: a mistake in the package, never an input's.
var errNoDescriptor = errors.New("chatprotocol: object written with the descriptor of another type")

// fieldOffset returns the offset of the field at index in the struct t.
// The path to it must not pass through a pointer (an embedded struct is
// embedded by value); one that does is a mistake in the table.
func fieldOffset(t reflect.Type, index []int) uintptr {
	var off uintptr
	for _, x := range index {
		if t.Kind() != reflect.Struct {
			panic("chatprotocol: a member's field is reached through " + t.String())
		}
		f := t.Field(x)
		off += f.Offset
		t = f.Type
	}
	return off
}

// fieldLayout returns where m's field lies in the struct t, and whether
// it is a pointer to its value. A field whose Go type is not the one m's
// kind is read as is a mistake in the table.
func fieldLayout(t reflect.Type, m *memberSpec) (offset uintptr, pointer bool) {
	ft := t.FieldByIndex(m.index).Type
	pointer = ft.Kind() == reflect.Pointer
	value := ft
	if pointer {
		value = ft.Elem()
	}
	var ok bool
	switch m.kind {
	case kindString:
		ok = ft.Kind() == reflect.String
	case kindInteger:
		ok = value.Kind() == reflect.Int64
	case kindNumber:
		ok = value.Kind() == reflect.Float64
	case kindBool:
		ok = ft.Kind() == reflect.Bool
	case kindRaw:
		ok = ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8
	case kindObject:
		ok = value == m.sub.typ
	case kindList:
		ok = ft.Kind() == reflect.Slice && ft.Elem() == m.sub.typ
	case kindStrings:
		ok = ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String
	case kindBound:
		ok = ft == reflect.TypeFor[*cards.CardBound]()
	case kindBlocks:
		ok = ft == reflect.TypeFor[[]ResultBlock]()
	case kindCard:
		ok = ft == reflect.TypeFor[cards.OpenCardSnapshot]()
	}
	if !ok {
		panic("chatprotocol: field " + t.Name() + "." + m.field + " is a " + ft.String() + ", not of the member's kind")
	}
	return fieldOffset(t, m.index), pointer
}

// listLen returns the length of the slice at f, of any element type, and
// whether it is nil.
func listLen(f unsafe.Pointer) (n int, isNil bool) {
	l := *(*[]byte)(f)
	return len(l), l == nil
}

// absent reports whether f, the field of m in an object of s (for a
// pointer field, the value it points to), holds nothing to write: the zero
// value of a field that is not a pointer, or in a kept object an empty
// list.
func (m *memberSpec) absent(s *objectSpec, f unsafe.Pointer) bool {
	switch m.kind {
	case kindString:
		return *(*string)(f) == ""
	case kindInteger:
		return !m.pointer && *(*int64)(f) == 0
	case kindNumber:
		return !m.pointer && *(*float64)(f) == 0 // -0 too, as reflect.Value.IsZero
	case kindBool:
		return !*(*bool)(f)
	case kindRaw, kindList, kindStrings, kindBlocks:
		n, isNil := listLen(f)
		return isNil || s.unknown == nil && n == 0
	case kindObject:
		return !m.pointer && reflect.NewAt(m.sub.typ, f).Elem().IsZero()
	}
	return false // a bound (a pointer, set) or a card (required)
}

// members writes the members of the object of s at p, in canonical order:
// a required member always, an optional one unless absent says it holds
// nothing; a nil pointer is never written. The caller writes the braces
// and the kept members.
func (w *writer) members(s *objectSpec, p unsafe.Pointer, path string) {
	for i := range s.members {
		m := &s.members[i]
		f := unsafe.Add(p, m.offset)
		if m.pointer {
			if f = *(*unsafe.Pointer)(f); f == nil {
				continue
			}
		}
		if !m.required && m.absent(s, f) {
			continue
		}
		switch m.kind {
		case kindString:
			w.str(m.name, *(*string)(f))
		case kindInteger:
			w.int(m.name, *(*int64)(f))
		case kindNumber:
			w.float(m.name, *(*float64)(f))
		case kindBool:
			w.bool(m.name, *(*bool)(f))
		case kindRaw:
			w.optRaw(m.name, *(*[]byte)(f))
		case kindObject:
			w.name(m.name)
			at := path + "/" + m.name
			w.within(at, w.code, func() { w.object(m.sub, f, at) })
		case kindList:
			w.name(m.name)
			n, _ := listLen(f)
			first, size := unsafe.Pointer(unsafe.SliceData(*(*[]byte)(f))), m.sub.typ.Size()
			w.list(n, func(i int) {
				at := path + "/" + m.name + "/" + itoa(i)
				w.within(at, w.code, func() { w.object(m.sub, unsafe.Add(first, uintptr(i)*size), at) })
			})
		case kindStrings:
			w.name(m.name)
			strs := *(*[]string)(f)
			w.list(len(strs), func(i int) { w.strElem(strs[i], path+"/"+m.name+"/"+itoa(i)) })
		case kindBound:
			if b := (*cards.CardBound)(f); b.IsDate() {
				w.str(m.name, b.Date)
			} else {
				w.float(m.name, b.Number)
			}
		case kindBlocks:
			w.name(m.name)
			w.blocks(*(*[]ResultBlock)(f))
		case kindCard:
			w.name(m.name)
			kept := reflect.NewAt(s.typ, p).Interface().(cardKeeper).keptCard()
			writeKept(w, (*cards.OpenCardSnapshot)(f), *kept, refusal.CodeInvalidCard, path+"/"+m.name)
		}
	}
}

// keptAt returns the kept unknown members of the object of s at p.
func (s *objectSpec) keptAt(p unsafe.Pointer) []Member {
	return *(*[]Member)(unsafe.Add(p, s.unknownAt))
}

// object writes the object of s at p, at path: its members, its kept
// unknown members, its braces. A kept object whose type writes its own
// JSON (a report or ask block: JSON.stringify's form, docs/contract.md
// section 4) is written by its MarshalJSON.
func (w *writer) object(s *objectSpec, p unsafe.Pointer, path string) {
	if s.unknown == nil && s.marshals {
		b, err := reflect.NewAt(s.typ, p).Interface().(json.Marshaler).MarshalJSON()
		if err == nil {
			err = w.rawValue(b)
		}
		w.fail(err)
		return
	}
	w.punct('{')
	w.members(s, p, path)
	if s.unknown != nil {
		w.close(s.keptAt(p), s.names)
	} else {
		w.punct('}')
	}
}

// writeObject writes *v, an object of s at path, whose Go type must be
// s's.
func writeObject[T any](w *writer, s *objectSpec, v *T, path string) {
	if s == nil || s.typ != reflect.TypeFor[T]() {
		w.fail(errNoDescriptor)
		return
	}
	w.object(s, unsafe.Pointer(v), path)
}
