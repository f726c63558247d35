package legacy

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// The round-trip properties draw frames from legacy-frame.schema.json, the
// reference's types, and run 2,000 checks unless -rapid.checks (or
// RAPID_CHECKS) says otherwise:
//
//	go test ./legacy -run PropertyReference -rapid.checks=100000

// defaultChecks makes rapid run n checks in this test when neither the
// environment nor the flag gives another number than rapid's default.
func defaultChecks(t *testing.T, n int) {
	checks := flag.Lookup("rapid.checks")
	if os.Getenv("RAPID_CHECKS") != "" || checks.Value.String() != checks.DefValue {
		return
	}
	require.NoError(t, flag.Set("rapid.checks", strconv.Itoa(n)))
	t.Cleanup(func() { _ = flag.Set("rapid.checks", checks.DefValue) })
}

// site is a member a drawn frame holds, with the kind its schema gives
// it: where a mutation makes the frame one its type does not accept.
type site struct {
	parent   map[string]any
	name     string
	kind     string
	required bool
}

// frameDrawer draws JSON values (as jsjson.Parse gives them) from the
// $defs of legacy-frame.schema.json.
type frameDrawer struct {
	defs  map[string]any
	sites []site
}

func newFrameDrawer(t require.TestingT) *frameDrawer {
	return &frameDrawer{defs: loadFrameSchema(t)["$defs"].(map[string]any)}
}

// frameSchemaValidator compiles legacy-frame.schema.json, so that a test
// can check a drawn frame against it as a JSON Schema validator reads it.
func frameSchemaValidator(t require.TestingT) *jsonschema.Schema {
	abs, err := filepath.Abs(frameSchemaFile)
	require.NoError(t, err)
	sch, err := jsonschema.NewCompiler().Compile(abs)
	require.NoError(t, err)
	return sch
}

// schemaValid reports whether the frame text is valid against sch.
func schemaValid(t require.TestingT, sch *jsonschema.Schema, data []byte) bool {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return sch.Validate(inst) == nil
}

// frame draws a frame of any of the union's types.
func (d *frameDrawer) frame(t *rapid.T, union []string) map[string]any {
	d.sites = d.sites[:0]
	typ := rapid.SampledFrom(union).Draw(t, "type")
	return d.draw(t, d.defs[typ].(map[string]any)).(map[string]any)
}

// draw draws a value of schema s; the schema has no recursion, so its
// nesting bounds the value's.
func (d *frameDrawer) draw(t *rapid.T, s map[string]any) any {
	switch kind := schemaKind(s); {
	case kind == "const":
		return s["const"]
	case kind == "string":
		return drawString(t)
	case kind == "number":
		return drawNumber(t)
	case kind == "boolean":
		return rapid.Bool().Draw(t, "bool")
	case kind == "number|string":
		if rapid.Bool().Draw(t, "bound is a string") {
			return drawString(t)
		}
		return drawNumber(t)
	case kind == "object":
		return drawObject(t, 2)
	case kind == "unknown":
		return drawAny(t, 2)
	}
	if e, ok := s["enum"].([]any); ok {
		return rapid.SampledFrom(e).Draw(t, "literal")
	}
	if ref, ok := s["$ref"].(string); ok {
		return d.draw(t, d.defs[ref[len("#/$defs/"):]].(map[string]any))
	}
	if s["type"] == "array" {
		out := make([]any, rapid.IntRange(0, 3).Draw(t, "items"))
		for i := range out {
			out[i] = d.draw(t, s["items"].(map[string]any))
		}
		return out
	}
	props := s["properties"].(map[string]any)
	var required []string
	for _, r := range s["required"].([]any) {
		required = append(required, r.(string))
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	out := map[string]any{}
	for _, name := range names {
		req := slices.Contains(required, name)
		if !req && !rapid.Bool().Draw(t, name+"?") {
			continue
		}
		ps := props[name].(map[string]any)
		out[name] = d.draw(t, ps)
		if name != "type" {
			d.sites = append(d.sites, site{out, name, schemaKind(ps), req})
		}
	}
	return out
}

// drawString draws any valid UTF-8 string, "" included.
func drawString(t *rapid.T) string {
	return rapid.StringN(0, 8, 32).Draw(t, "string")
}

// drawNumber draws a finite number: whole or not, negative, tiny or huge.
func drawNumber(t *rapid.T) float64 {
	switch rapid.IntRange(0, 3).Draw(t, "number kind") {
	case 0:
		return float64(rapid.Int64Range(-1<<53, 1<<53).Draw(t, "integer"))
	case 1:
		return rapid.Float64Range(-1e6, 1e6).Draw(t, "fraction")
	case 2:
		return float64(rapid.IntRange(0, 3).Draw(t, "small"))
	}
	f := math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0.5
	}
	return f
}

// drawAny draws any JSON value nested at most depth levels, null included.
func drawAny(t *rapid.T, depth int) any {
	kinds := 4
	if depth > 0 {
		kinds = 6
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "json kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return drawNumber(t)
	case 3:
		return drawString(t)
	case 4:
		out := make([]any, rapid.IntRange(0, 3).Draw(t, "len"))
		for i := range out {
			out[i] = drawAny(t, depth-1)
		}
		return out
	}
	return drawObject(t, depth-1)
}

func drawObject(t *rapid.T, depth int) map[string]any {
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "members") {
		m[drawString(t)] = drawAny(t, depth)
	}
	return m
}

// union lists the nine frame types of the reference's ChatEvent.
var union = []string{TypeSession, TypeToken, TypeToolStart, TypeCard, TypeCardClosed, TypeState, TypeDone, TypeError, TypeNavigate}

// TestPropertyReferenceFramesRoundTrip: every frame the reference's types
// accept (drawn from their schema, and valid against it) is read by
// ParseChatEvent as its typed frame and written back by MarshalChatEvent as
// the same JSON value: nothing invented, nothing dropped, every member's
// presence kept (docs/contract.md section 2.4).
func TestPropertyReferenceFramesRoundTrip(t *testing.T) {
	defaultChecks(t, 2000)
	d := newFrameDrawer(t)
	sch := frameSchemaValidator(t)
	rapid.Check(t, func(t *rapid.T) {
		v := d.frame(t, union)
		data := jsjson.AppendValue(nil, v)
		require.True(t, schemaValid(t, sch, data), "%s", data)
		f := ParseChatEvent(data)
		require.NotNil(t, f, "%s", data)
		require.NotEqual(t, "app", kindOf(f), "%s: read as an app frame", data)
		require.Equal(t, v["type"], f.FrameType())
		out, err := MarshalChatEvent(f)
		require.NoError(t, err, "%s", data)
		want, _ := jsjson.Parse(data)
		got, ok := jsjson.Parse(out)
		require.True(t, ok, "%s", out)
		require.Equal(t, want, got, "read %s\nwrote %s", data, out)
	})
}

// TestPropertyReferenceMisfitsAreAppFrames: a drawn frame made one its
// type does not accept (a required member removed, or a member given a
// value of another JSON type, null included) is read as an app frame of
// its type holding the frame whole, never a repaired typed frame; the
// schema rejects it too, and DecodeLegacyChatFrame refuses it.
func TestPropertyReferenceMisfitsAreAppFrames(t *testing.T) {
	defaultChecks(t, 2000)
	d := newFrameDrawer(t)
	sch := frameSchemaValidator(t)
	rapid.Check(t, func(t *rapid.T) {
		v := d.frame(t, union)
		var sites []site
		for _, s := range d.sites {
			if s.required || s.kind != "unknown" {
				sites = append(sites, s)
			}
		}
		if len(sites) == 0 {
			t.Skip("no member to break")
		}
		s := rapid.SampledFrom(sites).Draw(t, "site")
		if s.required && rapid.Bool().Draw(t, "remove") {
			delete(s.parent, s.name)
		} else {
			s.parent[s.name] = misfit(t, s.kind)
		}
		data := jsjson.AppendValue(nil, v)
		require.False(t, schemaValid(t, sch, data), "%s", data)
		f := ParseChatEvent(data)
		require.IsType(t, &AppFrame{}, f, "%s", data)
		require.Equal(t, v["type"], f.FrameType())
		require.Equal(t, string(data), string(f.(*AppFrame).Raw))
		_, err := DecodeLegacyChatFrame(data, Scout)
		require.Error(t, err, "%s", data)
	})
}

// misfit draws a value of a JSON type the kind does not accept.
func misfit(t *rapid.T, kind string) any {
	wrong := []any{nil, true, 1.0, "x", []any{}, map[string]any{}}
	return rapid.SampledFrom(slices.DeleteFunc(wrong, func(v any) bool { return fits(kind, v) })).Draw(t, "misfit")
}

// fits reports whether a value of v's JSON type may have kind: a literal
// enum only takes its literals, so "x" misfits it.
func fits(kind string, v any) bool {
	switch v.(type) {
	case string:
		return kind == "string" || kind == "number|string"
	case float64:
		return kind == "number" || kind == "number|string"
	case bool:
		return kind == "boolean"
	case []any:
		return len(kind) > 2 && kind[len(kind)-2:] == "[]"
	case map[string]any:
		return kind == "object" || (kind != "unknown" && !isScalarKind(kind) && kind[len(kind)-2:] != "[]")
	}
	return false
}

func isScalarKind(kind string) bool {
	switch kind {
	case "string", "number", "boolean", "number|string", "const":
		return true
	}
	return len(kind) > 5 && kind[:5] == "enum:"
}

// kindOf names what ParseChatEvent gave: "app", "none" or "typed".
func kindOf(f Frame) string {
	switch f.(type) {
	case nil:
		return "none"
	case *AppFrame:
		return "app"
	}
	return "typed"
}
