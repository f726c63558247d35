// Package losses is a test kit: it checks a front-end bridge's table of
// losses (docs/contract.md sections 18.1 and 18.2) against the version-1
// JSON Schemas under testdata/schemas and against the bridge's output.
//
// Every member of the envelope and of each event type the schemas define,
// and the unknown members of each (section 5.4), must have a row: one for
// every status of the event, or one for each status. Each row is checked
// by serving turns that differ in that member alone: a second value (the
// next of an enum, a string with a character added, a number plus one, a
// boolean negated, a value of the kit's own for any other), and, for an
// optional member, none. "kept": the outputs differ and each holds its
// value's canonical JSON byte for byte; "in text": they differ and each
// holds its value's text in a string; "mapped": they differ; "dropped":
// they are the same bytes. Every output must pass the client's schemas.
package losses

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Bridge is a front-end bridge as [Check] drives it.
type Bridge struct {
	// Section is the section of docs/contract.md whose table of losses is
	// checked: "18.1" or "18.2".
	Section string
	// Mount returns the bridge's handler over w, a POST of Path with Body
	// starting key's turn, whose envelopes start at seq 1 and end with a
	// terminal lifecycle, in a window holding nothing else. The handler
	// maps the registered events of docs/contract.md section 6.5 ([Registry]).
	Mount func(t *testing.T, w replay.Window, key replay.Key) http.Handler
	// Path and Body are the POST that streams the turn.
	Path, Body string
	// Client names the check of internal/testkit/uiclients' schemas.mjs
	// that every chunk or event the bridge streamed must pass: "ui" or
	// "agui".
	Client string
}

// Registry returns the registry of the kit's turns: its filler product
// type and the registered events of docs/contract.md section 6.5, which a
// bridge's Mount gives its handler.
func Registry(t *testing.T) *chatprotocol.Registry {
	t.Helper()
	reg, err := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{fillerType: chatprotocol.ChannelEvent},
		chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	return reg
}

// Serve returns the body of the response that streams turn through b.
func (b *Bridge) Serve(t *testing.T, turn []*chatprotocol.ChatEventEnvelope) []byte {
	t.Helper()
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: turn[0].ConversationID, TurnID: turn[0].TurnID}
	for _, env := range turn {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	srv := httptest.NewServer(b.Mount(t, w, key))
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(srv.URL+b.Path, "application/json", strings.NewReader(b.Body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

// validate checks body, the bodies of the turns served one after another,
// against the client's schemas.
func (b *Bridge) validate(t *testing.T, body []byte) {
	var out struct {
		Checked int
		Errors  []string
	}
	require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 60*time.Second, body, "schemas.mjs", b.Client), &out))
	assert.Empty(t, out.Errors)
	assert.Positive(t, out.Checked)
}

// Check checks b's table of losses: against the schemas, then row by row
// against b's output (see the package doc).
func Check(t *testing.T, b Bridge) {
	root := rootDir(t)
	members := schemaMembers(t, filepath.Join(root, "testdata", "schemas"))
	rows := readTable(t, filepath.Join(root, "docs", "contract.md"), b.Section)
	types := slices.DeleteFunc(slices.Collect(maps.Keys(members)), func(typ string) bool { return typ == envelopeType })
	assert.ElementsMatch(t, append(chatprotocol.EventTypes(), chatprotocol.EventTypeReasoning, chatprotocol.EventTypeSource), types,
		"the event types of the schemas are those of version 1 and its registered events")
	if !coverage(t, members, rows) {
		return
	}
	c := &checker{bridge: b, members: members, outputs: map[string][]byte{}}
	for _, r := range rows {
		t.Run(strings.ReplaceAll(r.typ+" "+strings.Join(r.statuses, ",")+" "+r.member, " ", "_"), func(t *testing.T) { c.check(t, r) })
	}
	var all []byte
	for _, key := range slices.Sorted(maps.Keys(c.outputs)) {
		all = append(all, c.outputs[key]...)
	}
	b.validate(t, all)
}

// rootDir is the module's root, found from this file's path.
func rootDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok, "the kit's source path")
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	_, err := os.Stat(filepath.Join(root, "docs", "contract.md"))
	require.NoError(t, err)
	return root
}

// coverage checks that the rows cover every member of the schemas, and the
// unknown members of every type, once for each status, and name nothing
// else. It reports whether they do.
func coverage(t *testing.T, members map[string][]member, rows []row) bool {
	t.Helper()
	ok := true
	byMember := map[[2]string][]row{}
	for _, r := range rows {
		byMember[[2]string{r.typ, r.member}] = append(byMember[[2]string{r.typ, r.member}], r)
	}
	for typ, ms := range members {
		names := []string{unknown}
		for _, m := range ms {
			names = append(names, m.path)
		}
		status := statusOf(ms)
		for _, name := range names {
			rs := byMember[[2]string{typ, name}]
			delete(byMember, [2]string{typ, name})
			switch {
			case len(rs) == 0:
				ok = assert.Failf(t, "a member without a row", "%s %s: no row", typ, name)
			case len(rs) == 1 && rs[0].statuses == nil:
			case status == nil || name == "status":
				ok = assert.Failf(t, "rows by status", "%s %s (lines %v): one row for every status, as %s has no status or this is it", typ, name, lines(rs), typ)
			default:
				var got []string
				for _, r := range rs {
					if r.statuses == nil {
						ok = assert.Failf(t, "rows by status", "line %d: a row for every status beside rows by status", r.line)
					}
					got = append(got, r.statuses...)
				}
				ok = assert.ElementsMatch(t, status.enum, got, "%s %s (lines %v): each status once", typ, name, lines(rs)) && ok
			}
		}
	}
	for _, rs := range byMember {
		ok = assert.Failf(t, "a row for a member the schemas do not define", "lines %v: %s %s", lines(rs), rs[0].typ, rs[0].member)
	}
	return ok
}

func lines(rs []row) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.line)
	}
	return out
}

// statusOf returns the status member of an event type, nil when it has
// none.
func statusOf(ms []member) *member {
	for i := range ms {
		if ms[i].path == "status" && ms[i].enum != nil {
			return &ms[i]
		}
	}
	return nil
}

// checker checks rows, serving each distinct turn once.
type checker struct {
	bridge  Bridge
	members map[string][]member
	outputs map[string][]byte // by the turn's frames
}

// variant is one turn of a row's check: its output and the canonical JSON
// of the member (nil when absent).
type variant struct {
	name  string
	out   []byte
	value []byte
}

// check checks row r under each status it is about.
func (c *checker) check(t *testing.T, r row) {
	statuses := r.statuses
	if status := statusOf(c.members[r.typ]); statuses == nil && status != nil && r.member != "status" {
		statuses = status.enum // a row for every status holds for each
	}
	if statuses == nil {
		statuses = []string{""}
	}
	for _, status := range statuses {
		vs := c.variants(t, r, status)
		if vs == nil {
			continue
		}
		c.judge(t, r, status, vs)
	}
}

// variants serves the turns of row r, the event's status set to status:
// the scenario, then each of the member's other values and its absence.
// It returns nil for a constant, which cannot vary.
func (c *checker) variants(t *testing.T, r row, status string) []variant {
	base := newTurn(t, r.typ, status)
	var m member
	if r.member != unknown {
		i := slices.IndexFunc(c.members[r.typ], func(m member) bool { return m.path == r.member })
		m = c.members[r.typ][i]
	}
	if m.constant {
		t.Logf("line %d: %s is constant; nothing to vary", r.line, r.member)
		return nil
	}
	var turns []*turn
	var names []string
	add := func(name string, change func(tn *turn)) {
		tn := base.clone(t)
		change(tn)
		turns, names = append(turns, tn), append(names, name)
	}
	add("as in the scenario", func(*turn) {})
	obj := base.object(r.typ)
	switch cur, present := get(obj, r.member); {
	case r.member == unknown:
		add("with an unknown member", func(tn *turn) { tn.object(r.typ)[unknownName] = decodeValue(t, unknownValue) })
	case r.typ == envelopeType && r.member == "seq":
		add("one frame later", func(tn *turn) { tn.filler = true })
	default:
		require.True(t, present, "line %d: the %s scenario carries %s", r.line, r.typ, r.member)
		for _, v := range c.others(t, r, m, cur) {
			add("with "+string(encode(t, v)), func(tn *turn) { set(tn.object(r.typ), r.member, v) })
		}
		if m.optional {
			add("without it", func(tn *turn) { del(tn.object(r.typ), r.member) })
		}
	}
	vs := make([]variant, len(turns))
	for i, tn := range turns {
		envs, frame := tn.frames(t, r.typ)
		vs[i] = variant{name: names[i], out: c.serve(t, envs), value: valueIn(t, frame, r)}
	}
	return vs
}

// others returns the member's other values: the enum's, or one of its
// type's.
func (c *checker) others(t *testing.T, r row, m member, cur any) []any {
	switch {
	case m.enum != nil:
		var out []any
		for _, e := range m.enum {
			if e != cur {
				out = append(out, e)
			}
		}
		return out
	case m.format == "date-time":
		return []any{otherAt}
	case m.kind == "string":
		return []any{cur.(string) + "~"}
	case m.kind == "integer":
		n, err := strconv.ParseInt(string(cur.(json.Number)), 10, 64)
		require.NoError(t, err)
		return []any{json.Number(strconv.FormatInt(n+1, 10))}
	case m.kind == "number":
		x, err := strconv.ParseFloat(string(cur.(json.Number)), 64)
		require.NoError(t, err)
		return []any{json.Number(strconv.FormatFloat(x+1, 'f', -1, 64))}
	case m.kind == "boolean":
		return []any{!cur.(bool)}
	}
	alt, ok := scenarios[r.typ].alt[r.member]
	require.True(t, ok, "line %d: the %s scenario has no second value of %s", r.line, r.typ, r.member)
	return []any{decodeValue(t, alt)}
}

// serve returns the bridge's output of a turn, served once.
func (c *checker) serve(t *testing.T, envs []*chatprotocol.ChatEventEnvelope) []byte {
	var key []byte
	for _, env := range envs {
		b, err := env.AppendJSON(nil)
		require.NoError(t, err)
		key = append(append(key, b...), '\n')
	}
	if out, ok := c.outputs[string(key)]; ok {
		return out
	}
	var out []byte // the data lines, each an SSE event: not a keep-alive comment, should the machine be slow
	for line := range bytes.Lines(c.bridge.Serve(t, envs)) {
		if bytes.HasPrefix(line, []byte("data: ")) {
			out = append(append(out, line...), '\n')
		}
	}
	c.outputs[string(key)] = out
	return out
}

// valueIn returns the canonical JSON of row r's member in frame, the
// canonical envelope of the event under test: for unknown members, the
// added member, name and value; nil when absent.
func valueIn(t *testing.T, frame []byte, r row) []byte {
	var path []string
	if r.typ != envelopeType {
		path = append(path, "event")
	}
	name := r.member
	if r.member == unknown {
		name = unknownName
	}
	v := rawAt(t, frame, append(path, strings.Split(name, ".")...))
	if v != nil && r.member == unknown {
		v = append([]byte(`"`+unknownName+`":`), v...)
	}
	return v
}

// rawAt returns the value at the member path of doc, as written; nil when
// absent.
func rawAt(t *testing.T, doc []byte, path []string) []byte {
	d := jsontext.NewDecoder(bytes.NewReader(doc))
	for _, name := range path {
		tok, err := d.ReadToken()
		require.NoError(t, err)
		if tok.Kind() != '{' {
			return nil
		}
		for {
			if d.PeekKind() == '}' {
				return nil
			}
			tok, err := d.ReadToken()
			require.NoError(t, err)
			if tok.String() == name {
				break
			}
			require.NoError(t, d.SkipValue())
		}
	}
	v, err := d.ReadValue()
	require.NoError(t, err)
	return bytes.Clone(v)
}

// judge checks the outputs of a row's turns against its fate.
func (c *checker) judge(t *testing.T, r row, status string, vs []variant) {
	where := "line " + strconv.Itoa(r.line)
	if status != "" {
		where += ", status " + status
	}
	base := vs[0]
	switch r.fate {
	case dropped:
		for _, v := range vs[1:] {
			assert.Equal(t, string(base.out), string(v.out), "%s: %s is dropped, yet the turn %s streams other bytes", where, r.member, v.name)
		}
		return
	case mapped:
		differs := false
		for _, v := range vs[1:] {
			differs = differs || !bytes.Equal(base.out, v.out)
		}
		assert.True(t, differs, "%s: %s is mapped, yet no other value of it changes the output", where, r.member)
		for _, e := range enumOf(c.members[r.typ], r.member) {
			assert.Contains(t, r.writes, "`"+e+"`", "%s: the row says what %s %s gives", where, r.member, e)
		}
		return
	}
	for i, v := range vs {
		if v.value == nil {
			continue // absent
		}
		if i > 0 {
			assert.NotEqual(t, string(base.out), string(v.out), "%s: %s is %s, yet the turn %s streams the same bytes", where, r.member, r.fate, v.name)
		}
		want := v.value
		if r.fate == inText {
			want = textOf(t, v.value)
		}
		assert.True(t, bytes.Contains(v.out, want), "%s: %s is %s, yet the output of the turn %s does not hold %s:\n%s", where, r.member, r.fate, v.name, want, v.out)
	}
}

// enumOf returns the values of an enum member of ms.
func enumOf(ms []member, path string) []string {
	for _, m := range ms {
		if m.path == path {
			return m.enum
		}
	}
	return nil
}

// textOf returns the text a JSON value has in a string of the output, as
// escaped there: a string's own text, any other value's JSON.
func textOf(t *testing.T, raw []byte) []byte {
	s := string(raw)
	if raw[0] == '"' {
		require.NoError(t, json.Unmarshal(raw, &s))
	}
	b, err := strictjson.AppendString(nil, s)
	require.NoError(t, err)
	return b[1 : len(b)-1]
}
