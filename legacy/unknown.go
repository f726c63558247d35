package legacy

import (
	"bytes"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// The member names each object of a typed frame's type defines; any other
// member is kept in the object's Unknown (docs/contract.md section 2.4). A
// frame's own names include "type".
var (
	sessionNames    = []string{"type", "sessionId"}
	tokenNames      = []string{"type", "content"}
	toolStartNames  = []string{"type", "tool", "callId"}
	cardFrameNames  = []string{"type", "card"}
	cardClosedNames = []string{"type", "correlationId"}
	stateNames      = []string{"type", "version", "snapshot"}
	doneNames       = []string{"type", "usage"}
	errorNames      = []string{"type", "message"}
	navigateNames   = []string{"type", "href"}
	deltaNames      = []string{"type", "text"}
	toolCallNames   = []string{"type", "callId", "name", "input"}
	toolResultNames = []string{"type", "callId", "status", "output"}

	usageNames        = []string{"totalTokens", "costUsd"}
	cardNames         = []string{"correlationId", "createdAt", "prompt", "presentation", "fallbackText", "allowDecline", "timeoutMs", "report", "dataSchemaJson"}
	presentationNames = []string{"kind", "options", "placeholder", "multiline", "min", "max", "step", "voiceAnswerable"}
	optionNames       = []string{"id", "label", "description", "hint", "style"}
	reportNames       = []string{"title", "plans"}
	planNames         = []string{"slug", "title", "status", "summary", "items"}
	itemNames         = []string{"id", "text", "status", "ref"}
)

// manyMembers is the count of members beyond which duplicate names are
// found through a map rather than by looking back.
const manyMembers = 16

// keptMembers returns the members of an object, listed by spans in the
// order they are written, whose names are not in known: in the order each
// name first appears, with the last value of a name given twice, as
// JSON.parse keeps them; nil when there are none. Values are copies.
func keptMembers(spans jsjson.Spans, known []string) []chatprotocol.Member {
	var (
		out []chatprotocol.Member
		at  map[string]int // name -> index in out, once out is long
	)
	for _, sp := range spans {
		if slices.Contains(known, sp.Name) {
			continue
		}
		if i := memberIndex(out, at, sp.Name); i >= 0 {
			out[i].Value = bytes.Clone(sp.Value)
			continue
		}
		out = append(out, chatprotocol.Member{Name: sp.Name, Value: bytes.Clone(sp.Value)})
		if at != nil {
			at[sp.Name] = len(out) - 1
		} else if len(out) > manyMembers {
			at = make(map[string]int, len(spans))
			for i := range out {
				at[out[i].Name] = i
			}
		}
	}
	return out
}

// memberIndex returns the index in ms of the member called name, or -1:
// through at when it is not nil (it then indexes ms), else by looking.
func memberIndex(ms []chatprotocol.Member, at map[string]int, name string) int {
	if at != nil {
		if i, ok := at[name]; ok {
			return i
		}
		return -1
	}
	return slices.IndexFunc(ms, func(m chatprotocol.Member) bool { return m.Name == name })
}

// unknown writes ms, the kept members of the object being written, after
// its known members, whose names known lists. It refuses, at the member's
// path, a member whose name is one of known or of an earlier kept member
// (JSON.parse would then read another value than the frame's) and one
// whose Value is not one JSON value.
func (w *frameWriter) unknown(ms []chatprotocol.Member, known []string) {
	var seen map[string]bool
	if len(ms) > manyMembers {
		seen = make(map[string]bool, len(ms))
	}
	for i := range ms {
		m := &ms[i]
		var problem string
		switch {
		case slices.Contains(known, m.Name):
			problem = "kept member has the name of a member of the type"
		case seen != nil && seen[m.Name], seen == nil && memberIndex(ms[:i], nil, m.Name) >= 0:
			problem = "kept member name given twice"
		case !jsjson.Valid(m.Value):
			problem = "kept member is not one JSON value"
		}
		if problem != "" {
			w.fail(string(jsontext.Pointer(w.at).AppendToken(m.Name)), problem)
			return
		}
		if seen != nil {
			seen[m.Name] = true
		}
		if !w.first {
			w.b = append(w.b, ',')
		}
		w.first = false
		w.b = jsjson.AppendString(w.b, m.Name, false)
		w.b = append(w.b, ':')
		w.b = append(w.b, bytes.Trim(m.Value, " \t\r\n")...)
	}
}
