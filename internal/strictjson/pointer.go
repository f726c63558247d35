package strictjson

import "strings"

// EscapePointer escapes one reference token of a JSON pointer (RFC 6901):
// "~" as "~0", "/" as "~1".
func EscapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
