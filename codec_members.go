package chatprotocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// Member is one object member that this version of the contract does not
// define, kept as read so that re-encoding preserves it (docs/contract.md
// section 5: "unknown members are ignored and kept for re-emission"). Name is
// the member name unescaped; Value is its JSON value, byte for byte as read.
//
// The envelope, every event, Usage, [ResultBlock], Source and
// [ChatCapabilities] carry their unknown members in a field named Unknown, in
// the order they were read; MarshalJSON writes them after the known members. A
// Value set by hand must be one valid JSON value, and a Name must not collide
// with a known member (MarshalJSON and AppendJSON refuse both).
type Member struct {
	Name  string
	Value json.RawMessage
}

// isCaseVariant reports whether name differs from one of known only by case
// (Unicode simple folding, so "ſeq" is a variant of "seq" and "TYPE" of
// "type"). Such a name is refused rather than kept: a consumer whose decoder
// folds case would read it as the known member (docs/contract.md section 5, "member names
// match exactly").
func isCaseVariant(name []byte, known []string) bool {
	for _, k := range known {
		if string(name) != k && strings.EqualFold(string(name), k) {
			return true
		}
	}
	return false
}

// unknown writes kept members after the known ones of an object whose
// opening brace and known members are already written. known lists the
// object's own member names: a kept member may not shadow one. A kept
// member that breaks these rules is refused with the writer's code at its
// path.
func (w *writer) unknown(ms []Member, known []string) {
	for i := range ms {
		m := &ms[i]
		for _, k := range known {
			if strings.EqualFold(m.Name, k) {
				w.fail(w.refuse(m.Name, fmt.Sprintf("kept member %q collides with a member of the contract", m.Name), nil))
				return
			}
		}
		var err error
		if w.check {
			err = strictjson.CheckString(m.Name)
		} else {
			w.dst, err = strictjson.AppendName(w.dst, m.Name)
		}
		if err != nil {
			w.fail(w.refuse("", "kept member name is not valid UTF-8", nil))
			return
		}
		if w.check {
			err = strictjson.CheckRaw(m.Value)
		} else {
			w.dst, err = strictjson.AppendRaw(w.dst, m.Value)
		}
		if err != nil {
			w.fail(w.refuse(m.Name, "kept member is not one strict JSON value", err))
			return
		}
	}
}
