package bridge

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// Begin opens an SSE frame whose data is a JSON object of type typ:
// data: {"type":"typ". Str and Raw add members, End closes it; the bridges
// write every chunk and event so (docs/contract.md section 18).
func Begin(dst []byte, typ string) []byte {
	dst = append(dst, `data: {"type":"`...)
	dst = append(dst, typ...)
	return append(dst, '"')
}

// Str adds the member "name":s to an open object, after a comma unless it
// is the object's first.
func Str(dst []byte, name, s string) []byte {
	dst, _ = strictjson.AppendString(member(dst, name), s) // strings of an envelope that validated: valid UTF-8
	return dst
}

// Raw adds the member "name":v to an open object, v a JSON value of an
// envelope that validated; an absent v adds nothing.
func Raw(dst []byte, name string, v json.RawMessage) []byte {
	if v == nil {
		return dst
	}
	return append(member(dst, name), v...)
}

// member appends a member's name and colon, after a comma unless the
// object was just opened.
func member(dst []byte, name string) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	return append(append(append(dst, '"'), name...), `":`...)
}

// End closes a chunk and its SSE frame.
func End(dst []byte) []byte { return append(dst, "}\n\n"...) }

// Close ends the part *id names, if one is open: it appends the event of
// type typ naming it by its member idName, and marks it closed ("").
func Close(dst []byte, id *string, typ, idName string) []byte {
	if *id == "" {
		return dst
	}
	dst = End(Str(Begin(dst, typ), idName, *id))
	*id = ""
	return dst
}
