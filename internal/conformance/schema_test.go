package conformance

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemas compiles every schema of the conformance directory. Schemas are
// loaded from their files, so relative $refs resolve to sibling files.
type schemas struct {
	t   *testing.T
	c   *jsonschema.Compiler
	dir string
	got map[string]*jsonschema.Schema
}

func newSchemas(t *testing.T, dir string) *schemas {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	return &schemas{t: t, c: c, dir: dir, got: map[string]*jsonschema.Schema{}}
}

func (s *schemas) get(rel string) *jsonschema.Schema {
	s.t.Helper()
	if sch, ok := s.got[rel]; ok {
		return sch
	}
	abs, err := filepath.Abs(filepath.Join(s.dir, filepath.FromSlash(rel)))
	require.NoError(s.t, err)
	sch, err := s.c.Compile(abs)
	require.NoError(s.t, err, "compile %s", rel)
	s.got[rel] = sch
	return sch
}

// validate checks one JSON text against the schema at rel.
func (s *schemas) validate(rel string, data []byte, what string) {
	s.t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(s.t, err, what)
	assert.NoError(s.t, s.get(rel).Validate(inst), "%s against %s", what, rel)
}

// TestSchemasValidateEveryFile compiles every schema (which checks it
// against the 2020-12 meta-schema) and validates every file the manifest
// lists against its declared schema: fixtures, golden states, each line of
// each golden stream, and the manifest itself. Accepted envelope frames,
// their expected envelopes and accepted capability declarations are also
// validated against the wire schemas, so the schemas and the
// implementation cannot drift apart on what is valid.
func TestSchemasValidateEveryFile(t *testing.T) {
	s := newSchemas(t, testdata)
	m, err := BuildManifest(testdata)
	require.NoError(t, err)
	manifest, err := os.ReadFile(filepath.Join(testdata, ManifestFile))
	require.NoError(t, err)
	s.validate("schemas/manifest.schema.json", manifest, ManifestFile)
	counts := map[string]int{}
	for _, e := range m.Files {
		data, err := os.ReadFile(filepath.Join(testdata, filepath.FromSlash(e.Path)))
		require.NoError(t, err)
		switch {
		case e.Role == RoleSchema:
			s.get(e.Path)
		case e.Role == RoleGoldenStream || e.Role == RoleBlocksParity || e.Role == RoleProviderStream:
			for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				s.validate(e.Schema, line, e.Path+" line "+itoa(i+1))
			}
		case e.Schema != "":
			s.validate(e.Schema, data, e.Path)
		}
		if e.Role == RoleFixture {
			f, err := decodeFixture(data)
			require.NoError(t, err, e.Path)
			if f.Kind == "envelope" && f.Expect.Outcome == "accept" {
				frame, err := f.frameBytes()
				require.NoError(t, err)
				s.validate("schemas/envelope.schema.json", frame, e.Path+" frame")
			}
			if f.Kind == "capabilities" && f.Expect.Code != "invalid-event" {
				s.validate("schemas/capabilities.schema.json", f.Declared, e.Path+" declared")
			}
		}
		counts[e.Role]++
	}
	assert.Equal(t, 29, counts[RoleSchema])
	assert.Positive(t, counts[RoleLegacy])
	assert.Positive(t, counts[RoleFixture])
	assert.Positive(t, counts[RoleGoldenState])
	assert.GreaterOrEqual(t, counts[RoleProviderBody], 24)
	assert.Equal(t, counts[RoleProviderBody], counts[RoleProviderStream])
	assert.Equal(t, counts[RoleProviderBody], counts[RoleProviderState])
}

// TestSchemasRejectWhatTheyShould proves the schemas are not vacuous: a
// few refused frames whose fault JSON Schema can express fail validation.
func TestSchemasRejectWhatTheyShould(t *testing.T) {
	s := newSchemas(t, testdata)
	env := s.get("schemas/envelope.schema.json")
	for _, frame := range []string{
		`{"schemaVersion":2,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":""}}`,
		`{"schemaVersion":1,"conversationId":"","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":""}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":0,"event":{"type":"delta","text":""}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1.5,"event":{"type":"delta","text":""}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"tool_result","callId":"c","status":"done"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"error","code":"c","message":"m"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"result","blocks":[{"kind":"text","text":"t","ask":{"question":"q"}}]}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"capabilities","capabilities":{"connectionReplay":true}}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"at":"noon","event":{"type":"delta","text":""}}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(frame)))
		require.NoError(t, err)
		assert.Error(t, env.Validate(inst), frame)
	}
	legacyCase := s.get("schemas/legacy.schema.json")
	for _, c := range []string{
		`{"description":"d","kind":"upgrade","dialect":"scout","expect":{"outcome":"accept","envelopes":[]}}`,
		`{"description":"d","kind":"upgrade","dialect":"scout","frames":["{}"],"expect":{"outcome":"reject","code":"invalid-event"}}`,
		`{"description":"d","kind":"upgrade","dialect":"scout","frames":["{}"],"expect":{"outcome":"accept","frame":1}}`,
		`{"description":"d","kind":"upgrade","dialect":"klingon","frames":["{}"],"expect":{"outcome":"reject","frame":1,"code":"invalid-event"}}`,
		`{"description":"d","kind":"upgrade","dialect":"scout","frames":["{}"],"expect":{"outcome":"accept","envelopes":[{"schemaVersion":1}]}}`,
		`{"description":"d","kind":"encode","dialect":"scout","envelope":"{}","expect":{"outcome":"accept"}}`,
		`{"description":"d","kind":"encode","dialect":"scout","envelope":"{}","host":{"turnId":"t"},"expect":{"outcome":"reject","code":"unsupported-event"}}`,
		`{"description":"d","kind":"encode","dialect":"scout","frames":["{}"],"envelope":"{}","expect":{"outcome":"reject","code":"unsupported-event"}}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c)))
		require.NoError(t, err)
		assert.Error(t, legacyCase.Validate(inst), c)
	}
	fixture := s.get("schemas/fixture.schema.json")
	for _, f := range []string{
		`{"description":"d","kind":"envelope","expect":{"outcome":"accept"}}`,
		`{"description":"d","kind":"envelope","frame":"{}","expect":{"outcome":"reject"}}`,
		`{"description":"d","kind":"state","frames":["{}"],"expect":{"outcome":"reject","code":"sequence-gap"}}`,
		`{"description":"d","kind":"envelope","frame":"{}","frameBase64":"` + base64.StdEncoding.EncodeToString([]byte("{}")) + `","expect":{"outcome":"reject","code":"x"}}`,
		`{"description":"d","kind":"teleport","expect":{"outcome":"accept"}}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(f)))
		require.NoError(t, err)
		assert.Error(t, fixture.Validate(inst), f)
	}
}

// TestLegacyParseCasesAgreeWithTheFrameSchema: a parse case's frame that
// reads as a typed frame is valid against legacy-frame.schema.json, the
// reference's types, and one that reads as an app frame is not; so the
// schema and the tolerant reader accept the same frames.
func TestLegacyParseCasesAgreeWithTheFrameSchema(t *testing.T) {
	s := newSchemas(t, testdata)
	frames := s.get("schemas/legacy-frame.schema.json")
	m, err := BuildManifest(testdata)
	require.NoError(t, err)
	n := 0
	for _, e := range m.Files {
		if e.Kind != "parse" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(testdata, filepath.FromSlash(e.Path)))
		require.NoError(t, err)
		c, err := decodeLegacyCase(data)
		require.NoError(t, err, e.Path)
		if c.Expect.Parsed == "none" {
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.Frames[0])))
		require.NoError(t, err, e.Path)
		if c.Expect.Parsed == "typed" {
			assert.NoError(t, frames.Validate(inst), e.Path)
		} else {
			assert.Error(t, frames.Validate(inst), e.Path)
		}
		n++
	}
	assert.Greater(t, n, 20)
}
