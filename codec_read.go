package chatprotocol

import (
	"errors"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// reader reads the members of a version-1 frame and turns the decoder's
// errors into refusals. Paths are JSON pointers into the frame; they are
// built only when a refusal is returned, so a frame that is accepted costs
// no path strings.
type reader struct {
	d        *strictjson.Decoder
	prefix   string // pointer of the decoder's root within the frame
	maxDepth int
	reg      *Registry
	// whole is the code of the refusals that concern the input as a whole
	// rather than one member's value (not strict JSON, nested too deep, a
	// case-variant member name); "" means invalid-envelope, as for a frame.
	whole refusal.Code
}

// wholeCode returns the code of refusals of the input as a whole.
func (r *reader) wholeCode() refusal.Code {
	if r.whole == "" {
		return refusal.CodeInvalidEnvelope
	}
	return r.whole
}

// fail turns an error of the decoder into a refusal. Syntax errors (broken
// JSON, invalid UTF-8, duplicated names) and excessive nesting concern the
// frame and are invalid-envelope (docs/contract.md section 5), or r.whole; a value of the
// wrong type or range is code at path+"/"+member (member may be "").
func (r *reader) fail(err error, code refusal.Code, path, member string) error {
	if _, ok := errors.AsType[*refusal.Error](err); ok {
		return err
	}
	if se, ok := errors.AsType[*strictjson.SyntaxError](err); ok {
		msg := "not one strict JSON text"
		if se.IsDuplicateName() {
			msg = "duplicated member name"
		}
		return refuseWrap(r.wholeCode(), r.prefix+se.Pointer, msg, err)
	}
	if member != "" {
		path += "/" + strictjson.EscapePointer(member)
	}
	if errors.Is(err, strictjson.ErrTooDeep) {
		return refusef(r.wholeCode(), path, "objects and arrays nested deeper than %d", r.maxDepth)
	}
	return refuseWrap(code, path, "wrong type or value", err)
}

// failed returns fail's refusal of err, or nil when err is nil.
func (r *reader) failed(err error, code refusal.Code, path, member string) error {
	if err == nil {
		return nil
	}
	return r.fail(err, code, path, member)
}

// members reads the members of the object whose '{' the decoder just read,
// and its '}'. For each name, member reports whether it handled the member
// (reading its value); an unhandled name is kept in unknown, unless it is a
// case variant of a name in known (refused, docs/contract.md section 5).
func (r *reader) members(code refusal.Code, path string, known []string, unknown *[]Member, member func(name []byte) (bool, error)) error {
	for r.d.More() {
		name, err := r.d.Name()
		if err != nil {
			return r.fail(err, code, path, "")
		}
		handled, err := member(name)
		if err != nil {
			return err
		}
		if !handled {
			if err := r.keep(name, code, path, known, unknown); err != nil {
				return err
			}
		}
	}
	if err := r.d.End(); err != nil {
		return r.fail(err, code, path, "")
	}
	return nil
}

// keep reads the value of the unknown member name into dst.
func (r *reader) keep(name []byte, code refusal.Code, path string, known []string, dst *[]Member) error {
	if isCaseVariant(name, known) {
		return refusef(r.wholeCode(), path+"/"+strictjson.EscapePointer(string(name)), "member name differs from a member of the contract only by case")
	}
	n := string(name)
	v, err := r.d.Raw()
	if err != nil {
		return r.fail(err, code, path, n)
	}
	*dst = append(*dst, Member{Name: n, Value: v})
	return nil
}

// object reads the '{' of an object member value.
func (r *reader) object(code refusal.Code, path, member string) error {
	return r.failed(r.d.Begin('{'), code, path, member)
}

// array reads the '[' of an array member value.
func (r *reader) array(code refusal.Code, path, member string) error {
	return r.failed(r.d.Begin('['), code, path, member)
}

// The readers of one member value below refuse a value of the wrong type
// with code at path+"/"+member (failed), and set dst to its zero value then.

// str reads a string member value into dst.
func (r *reader) str(dst *string, code refusal.Code, path, member string) (err error) {
	*dst, err = r.d.String()
	return r.failed(err, code, path, member)
}

// integer reads an integer member value (exactly, see strictjson.ParseInteger).
func (r *reader) integer(dst *int64, code refusal.Code, path, member string) (err error) {
	*dst, err = r.d.Integer()
	return r.failed(err, code, path, member)
}

// raw reads any member value and keeps a copy of its bytes.
func (r *reader) raw(dst *[]byte, code refusal.Code, path, member string) (err error) {
	*dst, err = r.d.Raw()
	return r.failed(err, code, path, member)
}

// missing is the refusal of an absent required member.
func missing(code refusal.Code, path, member string) error {
	return refusef(code, path+"/"+member, "missing")
}
