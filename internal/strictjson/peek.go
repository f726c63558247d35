package strictjson

// PeekFirstMember looks ahead, without reading, at the next value: when it
// is an object whose first member is named name (written without escapes)
// and whose value is a string of printable ASCII without escapes, it returns
// that string's bytes and true. Otherwise it returns false, and the caller
// reads the object the slow way; nothing has been consumed either way. The
// bytes are valid until the next call on d.
//
// This is the fast path for dispatching on a discriminator that canonical
// producers write first ("type" in an event, "kind" in a result block).
func (d *Decoder) PeekFirstMember(name string) ([]byte, bool) {
	b := d.dec.UnreadBuffer()
	if len(b) == 0 {
		d.dec.PeekKind() // nothing was fetched yet
		b = d.dec.UnreadBuffer()
	}
	i := skipWS(b, 0)
	if i < len(b) && (b[i] == ':' || b[i] == ',') {
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipWS(b, i+1)
	if len(b)-i < len(name)+2 || b[i] != '"' || string(b[i+1:i+1+len(name)]) != name || b[i+1+len(name)] != '"' {
		return nil, false
	}
	i = skipWS(b, i+2+len(name))
	if i >= len(b) || b[i] != ':' {
		return nil, false
	}
	i = skipWS(b, i+1)
	if i >= len(b) || b[i] != '"' {
		return nil, false
	}
	start := i + 1
	for j := start; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			return b[start:j], true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return nil, false
		}
	}
	return nil, false
}

// StartsWithMember reports whether data, after whitespace, opens an object
// whose first member is named name written without escapes.
func StartsWithMember(data []byte, name string) bool {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipWS(data, i+1)
	return len(data)-i >= len(name)+2 && data[i] == '"' &&
		string(data[i+1:i+1+len(name)]) == name && data[i+1+len(name)] == '"'
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
