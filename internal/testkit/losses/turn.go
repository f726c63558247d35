package losses

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// scenario is the turn the rows of one event type are checked on: lifecycle
// started, the events before, the event under test carrying every member
// its schema defines, then end unless the event ends the turn itself.
type scenario struct {
	before []string
	event  string
	end    string // a terminal lifecycle event; "" for completed
	// alt is a second value of each member of a type the kit cannot vary
	// by itself (an object, an array, any JSON).
	alt map[string]string
}

// The card of the scenarios: an unknown member, strings holding <, > and &.
const (
	cardID   = "card-1"
	cardJSON = `{"correlationId":"card-1","createdAt":1700000000000,"prompt":"Pick <one> & go","presentation":{"kind":"radio","options":[{"id":"a","label":"A & B"},{"id":"b","label":"<b>"}]},"timeoutMs":60000,"dataSchemaJson":"{\"type\":\"object\"}","zFuture":{"k":"x > y"}}`
)

// scenarios are the turns of every event type of version 1; the envelope's
// rows are checked on the delta's turn.
var scenarios = map[string]scenario{
	"session":   {event: `{"type":"session","sessionId":"session <&> 1"}`},
	"lifecycle": {before: []string{`{"type":"card","card":` + cardJSON + `}`}, event: `{"type":"lifecycle","status":"completed","reason":"reason <&> 1","usage":{"totalTokens":7301,"costUsd":0.25}}`},
	"delta":     {event: `{"type":"delta","text":"text <&> 1"}`},
	"tool_call": {event: `{"type":"tool_call","callId":"call-1","name":"search <&>","input":{"q":"<&>","n":[1,2.5]}}`,
		alt: map[string]string{"input": `["other",{"q":"<&>"}]`}},
	"tool_result": {before: []string{`{"type":"tool_call","callId":"call-1","name":"search"}`},
		event: `{"type":"tool_result","callId":"call-1","status":"ok","output":{"hits":[{"t":"<&>"}]},"blocks":[{"kind":"text","text":"grounded <&>","sources":[{"ref":"ref-1"}]}]}`,
		alt:   map[string]string{"output": `"it broke <&>"`, "blocks": `[{"kind":"text","text":"other"}]`}},
	"result": {event: `{"type":"result","blocks":[{"kind":"text","text":"grounded <&>","sources":[{"ref":"ref-1","label":"L & M"}]},{"kind":"ask","ask":{"question":"Which <one>?","zNew":1}}]}`,
		alt: map[string]string{"blocks": `[]`}},
	"provenance": {event: `{"type":"provenance","provider":"provider <&>","model":"model-1","requestId":"request-1"}`},
	"step": {before: []string{`{"type":"step","step":1,"status":"started"}`, `{"type":"delta","text":"step text"}`},
		event: `{"type":"step","step":1,"status":"finished","reason":"reason <&> 2","usage":{"totalTokens":7304,"costUsd":0.5}}`},
	"error": {event: `{"type":"error","code":"code-1","message":"message <&> 1","retryable":true,"retryAfterMs":7302}`, end: `{"type":"lifecycle","status":"failed"}`},
	"card": {event: `{"type":"card","card":` + cardJSON + `}`,
		alt: map[string]string{"card": strings.Replace(cardJSON, "Pick <one>", "Pick <two>", 1)}},
	"card_closed": {before: []string{`{"type":"card","card":` + cardJSON + `}`}, event: `{"type":"card_closed","correlationId":"card-1","outcome":"answered <&>"}`},
	"state":       {event: `{"type":"state","version":7303,"snapshot":{"s":"<&>","n":[1,2.5]}}`, alt: map[string]string{"snapshot": `[true]`}},
	"capabilities": {event: `{"type":"capabilities","capabilities":{"connectionReplay":true,"persistedHistory":true,"persistedDecisions":false,"completedToolCheckpoints":true,"interruptedTurnRecovery":false,"zFuture":true}}`,
		alt: map[string]string{"capabilities": `{"connectionReplay":false,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`}},
	"navigate":  {event: `{"type":"navigate","href":"/page?a=<&>"}`},
	"reasoning": {event: `{"type":"reasoning","text":"thinking <&> 1"}`},
	"source":    {event: `{"type":"source","url":"https://example.com/a?b=<&>","title":"title <&> 1"}`},
}

// The values of the turns' envelopes, and the second value of a date-time.
const (
	conversationID = "conversation-1"
	turnID         = "turn-1"
	eventIDPrefix  = "event-1:" // an envelope's eventId is the prefix and its seq
	at             = "2026-01-02T03:04:05.678Z"
	otherAt        = "2027-06-07T08:09:10+02:00"
)

// unknownName and unknownValue are the member a row of unknown members
// adds.
const (
	unknownName  = "zUnknown"
	unknownValue = `{"u":"unknown <&>","n":[1,2.5]}`
)

// fillerType is a product type the bridges map to nothing: a turn whose
// seqs are one higher starts with it.
const fillerType = "x.filler"

// turn is one turn the kit serves: the envelope members every frame has,
// its events, the index of the one under test.
type turn struct {
	envelope map[string]any // conversationId, turnId, eventId (the prefix), at, unknown ones
	events   []map[string]any
	test     int
	filler   bool
}

// newTurn returns the scenario of typ (the delta's for the envelope) with
// the event's status set to status, unless "".
func newTurn(t *testing.T, typ, status string) *turn {
	t.Helper()
	s, ok := scenarios[typ]
	if typ == envelopeType {
		s, ok = scenarios["delta"], true
	}
	require.True(t, ok, "no scenario for event type %q", typ)
	tn := &turn{envelope: map[string]any{"conversationId": conversationID, "turnId": turnID, "eventId": eventIDPrefix, "at": at}}
	tn.events = append(tn.events, decode(t, `{"type":"lifecycle","status":"started"}`))
	for _, ev := range s.before {
		tn.events = append(tn.events, decode(t, ev))
	}
	tn.test = len(tn.events)
	ev := decode(t, s.event)
	if status != "" {
		ev["status"] = status
	}
	tn.events = append(tn.events, ev)
	return tn
}

// frames returns the turn's envelopes, its end appended unless the event
// under test ends it, each as a new value, and the canonical JSON of the
// one under test.
func (tn *turn) frames(t *testing.T, typ string) ([]*chatprotocol.ChatEventEnvelope, []byte) {
	t.Helper()
	events := tn.events
	last := events[len(events)-1]
	if status, _ := last["status"].(string); last["type"] != "lifecycle" || !chatprotocol.LifecycleStatus(status).Terminal() {
		end := scenarios[typ].end
		if end == "" {
			end = `{"type":"lifecycle","status":"completed"}`
		}
		events = append(slices.Clip(events), decode(t, end))
	}
	parser := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: Registry(t)})
	if tn.filler {
		events = append([]map[string]any{{"type": fillerType}}, events...)
	}
	var envs []*chatprotocol.ChatEventEnvelope
	var test []byte
	for i, ev := range events {
		seq := int64(i + 1)
		env := make(map[string]any, len(tn.envelope)+3)
		for k, v := range tn.envelope {
			env[k] = v
		}
		env["schemaVersion"], env["seq"], env["event"] = 1, seq, ev
		prefix, _ := tn.envelope["eventId"].(string)
		env["eventId"] = prefix + strconv.FormatInt(seq, 10)
		parsed, err := parser.Parse(encode(t, env))
		require.NoError(t, err, "frame %d of a %s turn", seq, typ)
		envs = append(envs, &parsed)
		if i == tn.test+b2i(tn.filler) {
			test, err = parsed.AppendJSON(nil)
			require.NoError(t, err)
		}
	}
	return envs, test
}

// object returns the object a row's member is in: the envelope's members
// or the event under test.
func (tn *turn) object(typ string) map[string]any {
	if typ == envelopeType {
		return tn.envelope
	}
	return tn.events[tn.test]
}

// clone returns a deep copy of tn.
func (tn *turn) clone(t *testing.T) *turn {
	c := &turn{test: tn.test, filler: tn.filler}
	c.envelope = decode(t, string(encode(t, tn.envelope)))
	for _, ev := range tn.events {
		c.events = append(c.events, decode(t, string(encode(t, ev))))
	}
	return c
}

// get, set and del read and write the member at a dotted path of obj.
func get(obj map[string]any, path string) (any, bool) {
	parent, name := walk(obj, path)
	if parent == nil {
		return nil, false
	}
	v, ok := parent[name]
	return v, ok
}

func set(obj map[string]any, path string, v any) {
	if parent, name := walk(obj, path); parent != nil {
		parent[name] = v
	}
}

func del(obj map[string]any, path string) {
	if parent, name := walk(obj, path); parent != nil {
		delete(parent, name)
	}
}

func walk(obj map[string]any, path string) (map[string]any, string) {
	names := strings.Split(path, ".")
	for _, n := range names[:len(names)-1] {
		next, ok := obj[n].(map[string]any)
		if !ok {
			return nil, ""
		}
		obj = next
	}
	return obj, names[len(names)-1]
}

// decode reads JSON, numbers kept as written.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	require.NoError(t, d.Decode(&v), s)
	return v
}

// decodeValue reads one JSON value, numbers kept as written.
func decodeValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	require.NoError(t, d.Decode(&v), s)
	return v
}

// encode writes v as JSON without escaping <, > and &.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	require.NoError(t, e.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
