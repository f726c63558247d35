package legacy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameSchemaFile is the JSON Schema of the version-0 frames, the source
// the round-trip property draws its frames from.
var frameSchemaFile = filepath.Join("..", "testdata", "schemas", "legacy-frame.schema.json")

// tsMember is one member of a TypeScript type: its kind as the schema
// walker names it (string, number, boolean, object, unknown, const, enum:…,
// number|string, a $def's name, or NAME[] for an array of a $def) and
// whether the type requires it.
type tsMember struct {
	kind     string
	required bool
}

// tsTypes transcribes the TypeScript reference's types (src/index.ts of
// Papercusp/chat-protocol) member by member, one entry per $def of
// legacy-frame.schema.json.
var tsTypes = map[string]map[string]tsMember{
	// ChatEvent { type: 'session'; sessionId: string }
	"session": {"type": {"const", true}, "sessionId": {"string", true}},
	// ChatEvent { type: 'token'; content: string }
	"token": {"type": {"const", true}, "content": {"string", true}},
	// ChatEvent { type: 'tool_start'; tool: string }, plus the Scout
	// dialect's optional callId (docs/contract.md section 2.1).
	"tool_start": {"type": {"const", true}, "tool": {"string", true}, "callId": {"string", false}},
	// ChatEvent { type: 'card'; card: OpenCardSnapshot }
	"card": {"type": {"const", true}, "card": {"openCardSnapshot", true}},
	// ChatEvent { type: 'card_closed'; correlationId: string }
	"card_closed": {"type": {"const", true}, "correlationId": {"string", true}},
	// ChatEvent { type: 'state'; version: number; snapshot: unknown }:
	// unknown admits undefined, which JSON.stringify omits, so the JSON
	// form may lack snapshot.
	"state": {"type": {"const", true}, "version": {"number", true}, "snapshot": {"unknown", false}},
	// ChatEvent { type: 'done'; usage?: { totalTokens?: number; costUsd?: number } }
	"done":  {"type": {"const", true}, "usage": {"usage", false}},
	"usage": {"totalTokens": {"number", false}, "costUsd": {"number", false}},
	// ChatEvent { type: 'error'; message: string }
	"error": {"type": {"const", true}, "message": {"string", true}},
	// ChatEvent { type: 'navigate'; href: string }
	"navigate": {"type": {"const", true}, "href": {"string", true}},
	// OpenCardSnapshot extends CardSpec { correlationId: string;
	// createdAt: number; dataSchemaJson?: Record<string, unknown> };
	// CardSpec { prompt: string; presentation?: CardPresentation;
	// fallbackText?: string; allowDecline?: boolean; timeoutMs?: number;
	// report?: ReportBlock }
	"openCardSnapshot": {
		"prompt": {"string", true}, "presentation": {"cardPresentation", false}, "fallbackText": {"string", false},
		"allowDecline": {"boolean", false}, "timeoutMs": {"number", false}, "report": {"reportBlock", false},
		"correlationId": {"string", true}, "createdAt": {"number", true}, "dataSchemaJson": {"object", false},
	},
	// CardPresentation { kind: CardPresentationKind; options?: CardOption[];
	// placeholder?: string; multiline?: boolean; min?: number | string;
	// max?: number | string; step?: number; voiceAnswerable?: boolean },
	// CardPresentationKind 'radio' | 'checkbox' | 'text' | 'date' |
	// 'slider' | 'select'
	"cardPresentation": {
		"kind": {"enum:radio|checkbox|text|date|slider|select", true}, "options": {"cardOption[]", false},
		"placeholder": {"string", false}, "multiline": {"boolean", false}, "min": {"number|string", false},
		"max": {"number|string", false}, "step": {"number", false}, "voiceAnswerable": {"boolean", false},
	},
	// CardOption { id: string; label: string; description?: string;
	// hint?: string; style?: 'default' | 'primary' | 'danger' }
	"cardOption": {
		"id": {"string", true}, "label": {"string", true}, "description": {"string", false},
		"hint": {"string", false}, "style": {"enum:default|primary|danger", false},
	},
	// ReportBlock { title?: string; plans: ReportPlan[] }
	"reportBlock": {"title": {"string", false}, "plans": {"reportPlan[]", true}},
	// ReportPlan { slug?: string; title: string; status?: string;
	// summary?: string; items?: ReportItem[] }
	"reportPlan": {
		"slug": {"string", false}, "title": {"string", true}, "status": {"string", false},
		"summary": {"string", false}, "items": {"reportItem[]", false},
	},
	// ReportItem { id?: string; text: string; status?: string; ref?: string }
	"reportItem": {"id": {"string", false}, "text": {"string", true}, "status": {"string", false}, "ref": {"string", false}},
}

// loadFrameSchema reads legacy-frame.schema.json.
func loadFrameSchema(t require.TestingT) map[string]any {
	data, err := os.ReadFile(frameSchemaFile)
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	return s
}

// schemaKind names the kind of a member's schema, as tsMember does.
func schemaKind(s map[string]any) string {
	if ref, ok := s["$ref"].(string); ok {
		return strings.TrimPrefix(ref, "#/$defs/")
	}
	if _, ok := s["const"]; ok {
		return "const"
	}
	if e, ok := s["enum"].([]any); ok {
		names := make([]string, len(e))
		for i, v := range e {
			names[i], _ = v.(string)
		}
		return "enum:" + strings.Join(names, "|")
	}
	if alts, ok := s["oneOf"].([]any); ok {
		names := make([]string, len(alts))
		for i, a := range alts {
			names[i] = schemaKind(a.(map[string]any))
		}
		return strings.Join(names, "|")
	}
	switch typ, _ := s["type"].(string); typ {
	case "array":
		return schemaKind(s["items"].(map[string]any)) + "[]"
	case "object":
		if _, shaped := s["properties"]; shaped {
			return "shaped object"
		}
		return "object"
	case "":
		return "unknown"
	default:
		return typ
	}
}

// TestFrameSchemaIsTheTypeScriptTypes walks every $def of
// legacy-frame.schema.json and requires exactly the members, kinds and
// required flags of tsTypes, and the union to list the nine frame types.
func TestFrameSchemaIsTheTypeScriptTypes(t *testing.T) {
	s := loadFrameSchema(t)
	defs := s["$defs"].(map[string]any)
	var defNames, tsNames []string
	for name := range defs {
		defNames = append(defNames, name)
	}
	for name := range tsTypes {
		tsNames = append(tsNames, name)
	}
	slices.Sort(defNames)
	slices.Sort(tsNames)
	require.Equal(t, tsNames, defNames)
	for name, def := range defs {
		def := def.(map[string]any)
		assert.Equal(t, "object", def["type"], name)
		props, _ := def["properties"].(map[string]any)
		var required []string
		for _, r := range def["required"].([]any) {
			required = append(required, r.(string))
		}
		got := map[string]tsMember{}
		for member, ps := range props {
			got[member] = tsMember{schemaKind(ps.(map[string]any)), slices.Contains(required, member)}
		}
		assert.Equal(t, tsTypes[name], got, name)
		for _, r := range required {
			assert.Contains(t, props, r, "%s requires a member it does not describe", name)
		}
		if c, ok := props["type"].(map[string]any); ok {
			assert.Equal(t, name, c["const"], "the $def of a frame type is named by it")
		}
	}
	var union []string
	for _, alt := range s["oneOf"].([]any) {
		union = append(union, schemaKind(alt.(map[string]any)))
	}
	assert.Equal(t, []string{TypeSession, TypeToken, TypeToolStart, TypeCard, TypeCardClosed, TypeState, TypeDone, TypeError, TypeNavigate}, union)
	assert.Equal(t, cardKinds, strings.Split(strings.TrimPrefix(tsTypes["cardPresentation"]["kind"].kind, "enum:"), "|"))
	assert.Equal(t, optionStyles, strings.Split(strings.TrimPrefix(tsTypes["cardOption"]["style"].kind, "enum:"), "|"))
}
