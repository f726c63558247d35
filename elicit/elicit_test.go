package elicit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/elicit"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The examples of the MCP specification's elicitation page (revision
// 2025-11-25): its two requests and its schema examples, each as the one
// property of a form.
const (
	simpleText = `{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	structured = `{"mode":"form","message":"Please provide your contact information","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"Your full name"},"email":{"type":"string","format":"email","description":"Your email address"},"age":{"type":"number","minimum":18,"description":"Your age"}},"required":["name","email"]}}`
	urlMode    = `{"mode":"url","elicitationId":"550e8400-e29b-41d4-a716-446655440000","url":"https://mcp.example.com/ui/set_api_key","message":"Please provide your API key to continue."}`

	stringSchema   = `{"type":"string","title":"Display Name","description":"Description text","minLength":3,"maxLength":50,"pattern":"^[A-Za-z]+$","format":"email","default":"user@example.com"}`
	numberSchema   = `{"type":"number","title":"Display Name","description":"Description text","minimum":0,"maximum":100,"default":50}`
	booleanSchema  = `{"type":"boolean","title":"Display Name","description":"Description text","default":false}`
	untitledSingle = `{"type":"string","title":"Color Selection","description":"Choose your favorite color","enum":["Red","Green","Blue"],"default":"Red"}`
	titledSingle   = `{"type":"string","title":"Color Selection","description":"Choose your favorite color","oneOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}],"default":"#FF0000"}`
	untitledMulti  = `{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Red","Green","Blue"]},"default":["Red","Green"]}`
	titledMulti    = `{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}]},"default":["#FF0000","#00FF00"]}`
	legacyTitled   = `{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}`
)

// form is a request whose schema has the one property p.
func form(p string) string {
	return `{"message":"Pick","requestedSchema":{"type":"object","properties":{"p":` + p + `},"required":["p"]}}`
}

// check opens c as an interactions card would be checked: the spec is a
// valid card, the answer valid for it, the value accepted (or refused) by
// the answer's schema, and returns the elicitation result of the answer.
func check(t *testing.T, c *elicit.Card, value string, schemaOK bool) elicit.Result {
	t.Helper()
	require.NoError(t, chatprotocol.ValidateCardSpec(c.Spec))
	resp := cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "k", Value: json.RawMessage(value)}
	require.NoError(t, chatprotocol.ValidateCardAnswer(cards.OpenCardSnapshot{CorrelationID: "k", CreatedAt: 1, CardSpec: c.Spec}, resp))
	reg := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "e", Revision: 1}
	require.NoError(t, reg.Register(ref, c.Schema))
	err := reg.Validate(context.Background(), ref, json.RawMessage(value))
	if !schemaOK {
		require.Error(t, err, "the answer's schema should refuse %s", value)
		return elicit.Result{}
	}
	require.NoError(t, err)
	res, err := c.Result(resp)
	require.NoError(t, err)
	return res
}

func TestTheSpecificationsRequests(t *testing.T) {
	c, err := elicit.CardOf([]byte(simpleText))
	require.NoError(t, err)
	assert.Equal(t, "Please provide your GitHub username", c.Spec.Prompt)
	assert.Equal(t, cards.CardKindText, c.Spec.Presentation.Kind)
	res := check(t, c, `{"text":"octocat"}`, true)
	assert.Equal(t, "accept", res.Action)
	assert.JSONEq(t, `{"name":"octocat"}`, string(res.Content))

	c, err = elicit.CardOf([]byte(structured))
	require.NoError(t, err)
	assert.Nil(t, c.Spec.Presentation, "a form of several fields is a confirm card")
	res = check(t, c, `{"name":"Monalisa Octocat","email":"octocat@github.com","age":30}`, true)
	assert.Equal(t, "accept", res.Action)
	assert.JSONEq(t, `{"name":"Monalisa Octocat","email":"octocat@github.com","age":30}`, string(res.Content))
	check(t, c, `{"name":"Monalisa Octocat","email":"octocat@github.com","age":12}`, false) // minimum 18
	check(t, c, `{"name":"Monalisa Octocat"}`, false)                                       // email required

	_, err = elicit.CardOf([]byte(urlMode))
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err))
	assert.Equal(t, "/mode", pathOf(err))
}

func TestTheSpecificationsSchemas(t *testing.T) {
	cases := []struct {
		name, schema, answer, content, refused string
		kind                                   cards.CardKind
		labels                                 []string
	}{
		{"string without its pattern", strings.Replace(stringSchema, `"pattern":"^[A-Za-z]+$",`, "", 1), `{"text":"ada@example.com"}`, `{"p":"ada@example.com"}`, `{"text":"ab"}`, cards.CardKindText, nil},
		{"number", numberSchema, `{"value":42}`, `{"p":42}`, ``, cards.CardKindSlider, nil},
		{"boolean", booleanSchema, `{"optionId":"true"}`, `{"p":true}`, ``, cards.CardKindRadio, []string{"Yes", "No"}},
		{"untitled single-select", untitledSingle, `{"optionId":"Green"}`, `{"p":"Green"}`, ``, cards.CardKindRadio, []string{"Red", "Green", "Blue"}},
		{"titled single-select", titledSingle, `{"optionId":"#00FF00"}`, `{"p":"#00FF00"}`, ``, cards.CardKindRadio, []string{"Red", "Green", "Blue"}},
		{"untitled multi-select", untitledMulti, `{"optionIds":["Red","Blue"]}`, `{"p":["Red","Blue"]}`, `{"optionIds":["Red","Green","Blue"]}`, cards.CardKindCheckbox, []string{"Red", "Green", "Blue"}},
		{"titled multi-select", titledMulti, `{"optionIds":["#FF0000"]}`, `{"p":["#FF0000"]}`, `{"optionIds":[]}`, cards.CardKindCheckbox, []string{"Red", "Green", "Blue"}},
		{"legacy enumNames", legacyTitled, `{"optionId":"g"}`, `{"p":"g"}`, ``, cards.CardKindRadio, []string{"Red", "Green"}},
		{"date", `{"type":"string","format":"date"}`, `{"date":"2026-01-31"}`, `{"p":"2026-01-31"}`, ``, cards.CardKindDate, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			card, err := elicit.CardOf([]byte(form(c.schema)))
			require.NoError(t, err)
			require.NotNil(t, card.Spec.Presentation)
			assert.Equal(t, c.kind, card.Spec.Presentation.Kind)
			var labels []string
			for _, o := range card.Spec.Presentation.Options {
				labels = append(labels, o.Label)
			}
			assert.Equal(t, c.labels, labels)
			res := check(t, card, c.answer, true)
			assert.Equal(t, "accept", res.Action)
			assert.JSONEq(t, c.content, string(res.Content))
			if c.refused != "" {
				check(t, card, c.refused, false)
			}
		})
	}
}

// TestTheStringSchemaKeepsItsConstraints: the specification's string
// example (whose pattern and email format exclude each other) becomes a
// text card whose answer schema still asserts each constraint.
func TestTheStringSchemaKeepsItsConstraints(t *testing.T) {
	c, err := elicit.CardOf([]byte(form(stringSchema)))
	require.NoError(t, err)
	assert.Equal(t, cards.CardKindText, c.Spec.Presentation.Kind)
	assert.Equal(t, "Description text", c.Spec.Presentation.Placeholder)
	for _, refused := range []string{`{"text":"ab"}`, `{"text":"ada@example.com"}`, `{"text":"adalovelace"}`, `{"text":"` + strings.Repeat("a", 51) + `"}`} {
		check(t, c, refused, false)
	}
}

func TestDeclineAndCancel(t *testing.T) {
	c, err := elicit.CardOf([]byte(simpleText))
	require.NoError(t, err)
	assert.True(t, c.Spec.AllowDecline)
	for action, want := range map[cards.CardAction]string{cards.CardActionDecline: "decline", cards.CardActionCancel: "cancel"} {
		res, err := c.Result(cards.CardResponse{Action: action, CorrelationID: "k"})
		require.NoError(t, err)
		assert.Equal(t, elicit.Result{Action: want}, res)
		b, err := json.Marshal(res)
		require.NoError(t, err)
		assert.Equal(t, `{"action":"`+want+`"}`, string(b))
	}
}

func TestWhatNoCardExpressesIsRefused(t *testing.T) {
	cases := map[string]string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`: "/requestedSchema/properties/p/type",
		`{"type":"array","items":{"type":"object"}}`:             "/requestedSchema/properties/p/items",
		`{"$ref":"#/defs/x","type":"string"}`:                    "/requestedSchema/properties/p/$ref",
		`{"type":"string","enum":[1,2]}`:                         "/requestedSchema/properties/p/enum/0",
		`{"type":"null"}`:                                        "/requestedSchema/properties/p/type",
		`{"type":["string"]}`:                                    "/requestedSchema/properties/p",
	}
	for schema, path := range cases {
		_, err := elicit.CardOf([]byte(form(schema)))
		assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err), schema)
		assert.Equal(t, path, pathOf(err), schema)
	}
	for params, path := range map[string]string{
		`{"message":"m","requestedSchema":{"type":"array"}}`:                                          "/requestedSchema/type",
		`{"message":"","requestedSchema":{"type":"object","properties":{}}}`:                          "/message",
		`{"mode":"url","message":"m","requestedSchema":{"type":"object"}}`:                            "/mode",
		`{"message":"m","requestedSchema":{"type":"object","properties":{"a/b~":{"type":"object"}}}}`: "/requestedSchema/properties/a~1b~0/type",
	} {
		_, err := elicit.CardOf([]byte(params))
		assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err), params)
		assert.Equal(t, path, pathOf(err), params)
	}
}

func pathOf(err error) string {
	if e, ok := errors.AsType[*refusal.Error](err); ok {
		return e.Path
	}
	return ""
}
