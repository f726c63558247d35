package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ManifestFile is the manifest's name inside the testdata directory.
const ManifestFile = "manifest.json"

// Manifest lists every conformance file of a directory (testdata/manifest.json).
// Files is sorted by Path. The manifest itself and everything under fuzz/
// and streams/ are not listed.
type Manifest struct {
	ManifestVersion int     `json:"manifestVersion"`
	Description     string  `json:"description"`
	Files           []Entry `json:"files"`
}

// Entry is one file of the manifest: its slash-separated path relative to
// the directory, the lowercase hex SHA-256 of its bytes, its role (see
// roleOf), the schema it is validated against ("" for none; a path relative
// to the directory, or the JSON Schema meta-schema URI for schemas), and for
// fixtures their kind and a summary of their expectation.
type Entry struct {
	Path   string       `json:"path"`
	SHA256 string       `json:"sha256"`
	Role   string       `json:"role"`
	Kind   string       `json:"kind,omitzero"`
	Schema string       `json:"schema,omitzero"`
	Expect *ExpectBrief `json:"expect,omitzero"`
}

// ExpectBrief summarises a case's expectation in the manifest: the outcome
// ("accept" or "reject") and, for a refusal, its code and, when the case
// pins one, its JSON pointer.
type ExpectBrief struct {
	Outcome string  `json:"outcome"`
	Code    string  `json:"code,omitzero"`
	Path    *string `json:"path,omitzero"`
}

// The roles of conformance files.
const (
	RoleSchema       = "schema"        // schemas/*.schema.json
	RoleFixture      = "fixture"       // fixtures/**/*.json
	RoleGoldenStream = "golden-stream" // golden/*.jsonl
	RoleGoldenState  = "golden-state"  // golden/*.state.json
	RoleLegacy       = "legacy"        // legacy/**/*.json: legacy frames, host mapping, expected envelopes or refusal
	RoleBlocksParity = "blocks-parity" // blocks-parity.jsonl: {fn, input, want} per line
	// providers/KIND/NAME.sse: a provider's raw stream body; kind is KIND.
	RoleProviderBody = "provider-body"
	// providers/KIND/NAME.jsonl: the envelopes the body must produce.
	RoleProviderStream = "provider-stream"
	// providers/KIND/NAME.state.json: the state they reduce to.
	RoleProviderState = "provider-state"
	RoleDoc           = "doc"  // *.md
	RoleData          = "data" // anything else
)

// metaSchema is the dialect every schema file declares.
const metaSchema = "https://json-schema.org/draft/2020-12/schema"

// excluded reports whether a slash path is outside the manifest.
func excluded(p string) bool {
	return p == ManifestFile || strings.HasPrefix(p, "fuzz/") || strings.HasPrefix(p, "streams/")
}

// roles gives the role of a file by its directory (dir, "" for any) and its
// name's ending, or the whole of its base name (base), with the schema it
// is validated against; the first that matches counts, RoleData when none.
var roles = [...]struct{ dir, suffix, base, role, schema string }{
	{"schemas/", ".schema.json", "", RoleSchema, metaSchema},
	{"fixtures/", ".json", "", RoleFixture, "schemas/fixture.schema.json"},
	{"golden/", ".state.json", "", RoleGoldenState, "schemas/golden.schema.json"},
	{"golden/", ".jsonl", "", RoleGoldenStream, "schemas/envelope.schema.json"},
	{"providers/", ".sse", "", RoleProviderBody, ""},
	{"providers/", ".state.json", "", RoleProviderState, "schemas/golden.schema.json"},
	{"providers/", ".jsonl", "", RoleProviderStream, "schemas/envelope.schema.json"},
	{"legacy/", ".json", "", RoleLegacy, "schemas/legacy.schema.json"},
	{"legacy/", "", "", RoleLegacy, ""},
	{"", "", "blocks-parity.jsonl", RoleBlocksParity, "schemas/blocks-parity.schema.json"},
	{"", ".md", "", RoleDoc, ""},
}

// roleOf gives the role of a file and the schema it is validated against.
func roleOf(p string) (role, schema string) {
	for _, r := range roles {
		if strings.HasPrefix(p, r.dir) && strings.HasSuffix(p, r.suffix) && (r.base == "" || path.Base(p) == r.base) {
			return r.role, r.schema
		}
	}
	return RoleData, ""
}

// BuildManifest computes the manifest of dir from its files.
func BuildManifest(dir string) (Manifest, error) {
	m := Manifest{
		ManifestVersion: 1,
		Description:     "Every conformance file with its SHA-256; rebuilt by `go test ./... -update`, checked by `go test ./...` and `chatwire conform`.",
		Files:           []Entry{},
	}
	err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, full)
		if err != nil {
			return err
		}
		p := filepath.ToSlash(rel)
		if excluded(p) {
			return nil
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, entryOf(p, data))
		return nil
	})
	slices.SortFunc(m.Files, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return m, err
}

// entryOf builds the manifest entry of one file.
func entryOf(p string, data []byte) Entry {
	sum := sha256.Sum256(data)
	e := Entry{Path: p, SHA256: hex.EncodeToString(sum[:])}
	e.Role, e.Schema = roleOf(p)
	switch e.Role {
	case RoleFixture, RoleLegacy:
		var c interface{ brief() (string, *Expectation) }
		var err error
		if e.Role == RoleFixture {
			c, err = decodeFixture(data)
		} else {
			c, err = decodeLegacyCase(data)
		}
		if err != nil {
			return e // listed without expectation; Run reports the case itself
		}
		kind, x := c.brief()
		e.Kind = kind
		e.Expect = &ExpectBrief{Outcome: x.Outcome, Code: x.Code, Path: x.Path}
	case RoleGoldenStream, RoleProviderStream:
		e.Expect = &ExpectBrief{Outcome: "accept"}
	case RoleProviderBody:
		e.Kind = string(providerKind(p))
	}
	return e
}

// ReadManifest reads dir's manifest.json strictly.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(data, &m, json.RejectUnknownMembers(true))
	return m, err
}

// MarshalManifest writes m as the indented JSON of manifest.json.
func MarshalManifest(m Manifest) ([]byte, error) {
	b, err := json.Marshal(m, jsontext.Multiline(true), jsontext.WithIndent("  "))
	return append(b, '\n'), err
}

// diffManifest lists the differences between the manifest on disk and the
// one the files give, one line each.
func diffManifest(onDisk, built Manifest) []string {
	var out []string
	want := map[string]Entry{}
	for _, e := range built.Files {
		want[e.Path] = e
	}
	have := map[string]Entry{}
	for _, e := range onDisk.Files {
		have[e.Path] = e
		w, ok := want[e.Path]
		switch {
		case !ok:
			out = append(out, e.Path+": listed in the manifest but missing")
		case w.SHA256 != e.SHA256:
			out = append(out, e.Path+": SHA-256 differs from the manifest")
		default:
			a, _ := json.Marshal(w, json.Deterministic(true))
			b, _ := json.Marshal(e, json.Deterministic(true))
			if string(a) != string(b) {
				out = append(out, e.Path+": manifest entry is stale: want "+string(a))
			}
		}
	}
	for _, e := range built.Files {
		if _, ok := have[e.Path]; !ok {
			out = append(out, e.Path+": not listed in the manifest")
		}
	}
	if onDisk.ManifestVersion != built.ManifestVersion || onDisk.Description != built.Description {
		out = append(out, ManifestFile+": header differs from the generator's")
	}
	return out
}
