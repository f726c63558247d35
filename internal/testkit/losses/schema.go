package losses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// member is one member of the envelope or of an event type, as its JSON
// Schema under testdata/schemas describes it.
type member struct {
	path     string   // its name, or "usage.totalTokens" for a member of a local definition
	kind     string   // the schema's type: string, integer, number, boolean; "" for any other value
	format   string   // the schema's format: date-time
	enum     []string // its values, for an enum
	constant bool     // it has one value only
	optional bool
}

// schemaDoc is the part of a JSON Schema the kit reads.
type schemaDoc struct {
	Required   []string             `json:"required"`
	Properties map[string]schemaDoc `json:"properties"`
	Defs       map[string]schemaDoc `json:"$defs"`
	Ref        string               `json:"$ref"`
	Type       string               `json:"type"`
	Format     string               `json:"format"`
	Enum       []string             `json:"enum"`
	Const      json.RawMessage      `json:"const"`
}

// schemaMembers returns the members of the envelope (under [envelopeType],
// "event" aside) and of every event type of the schemas under dir, each
// type's in name order. A member whose value is an object of a definition
// of the event's own schema (usage) is read as that object's members.
func schemaMembers(t *testing.T, dir string) map[string][]member {
	t.Helper()
	out := map[string][]member{envelopeType: membersOf(readSchema(t, filepath.Join(dir, "envelope.schema.json")), "event")}
	files, err := filepath.Glob(filepath.Join(dir, "events", "*.schema.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the event schemas under %s", dir)
	for _, file := range files {
		s := readSchema(t, file)
		var typ string
		require.NoError(t, json.Unmarshal(s.Properties["type"].Const, &typ), "%s: the const of type", file)
		out[typ] = membersOf(s, "type")
	}
	return out
}

func readSchema(t *testing.T, file string) schemaDoc {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var s schemaDoc
	require.NoError(t, json.Unmarshal(b, &s), file)
	return s
}

// membersOf lists the properties of s but skip, local definitions
// expanded one level.
func membersOf(s schemaDoc, skip string) []member {
	var out []member
	for name, p := range s.Properties {
		if name == skip {
			continue
		}
		optional := !slices.Contains(s.Required, name)
		if def, ok := strings.CutPrefix(p.Ref, "#/$defs/"); ok && s.Defs[def].Properties != nil {
			d := s.Defs[def]
			for sub, sp := range d.Properties {
				out = append(out, memberOf(name+"."+sub, sp, !slices.Contains(d.Required, sub)))
			}
			continue
		}
		out = append(out, memberOf(name, p, optional))
	}
	slices.SortFunc(out, func(a, b member) int { return strings.Compare(a.path, b.path) })
	return out
}

func memberOf(path string, p schemaDoc, optional bool) member {
	return member{path: path, kind: p.Type, format: p.Format, enum: p.Enum, constant: p.Const != nil, optional: optional}
}
