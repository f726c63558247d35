package sse

import "strings"

// ContentType is the media type of an event stream, which Writer sets.
const ContentType = "text/event-stream"

// IsEventStream reports whether contentType, the value of a Content-Type
// header, is an event stream: its MIME essence is text/event-stream (ASCII
// case-insensitive), whatever its parameters, as EventSource requires
// (WHATWG HTML, "server-sent events"; the web-platform-tests cases
// format-mime-*). A value that does not parse as a MIME type (no "/", an
// empty or non-token type or subtype) is not an event stream, and neither
// is a well-formed other type such as text/x-bogus. Parameters, charset
// included, are ignored: the stream is always UTF-8.
func IsEventStream(contentType string) bool {
	typ, sub, ok := mimeEssence(contentType)
	return ok && strings.EqualFold(typ, "text") && strings.EqualFold(sub, "event-stream")
}

// mimeEssence splits a MIME type into type and subtype, following the
// WHATWG MIME Sniffing standard's "parse a MIME type" up to the
// parameters, which it does not read.
func mimeEssence(s string) (typ, sub string, ok bool) {
	s = strings.Trim(s, httpWhitespace)
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return "", "", false
	}
	typ, sub = s[:slash], s[slash+1:]
	if semi := strings.IndexByte(sub, ';'); semi >= 0 {
		sub = sub[:semi]
	}
	sub = strings.TrimRight(sub, httpWhitespace)
	if !isToken(typ) || !isToken(sub) {
		return "", "", false
	}
	return typ, sub, true
}

// httpWhitespace is the HTTP whitespace of the Fetch standard.
const httpWhitespace = " \t\r\n"

// isToken reports whether s is a non-empty HTTP token (RFC 9110 section
// 5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
