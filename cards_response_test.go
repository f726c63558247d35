package chatprotocol

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cardResponseAccepted are answers ParseCardResponse reads, with what it
// reads them to.
var cardResponseAccepted = []struct {
	in   string
	want cards.CardResponse
}{
	{`{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`,
		cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "card-1", Value: json.RawMessage(`{"optionId":"yes"}`)}},
	{`{"action":"decline","correlationId":"card-1"}`, cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: "card-1"}},
	{`{"correlationId":"card-1","action":"cancel"}`, cards.CardResponse{Action: cards.CardActionCancel, CorrelationID: "card-1"}},
	{` {"value" : {"text":"a\u00e9","nested":{"k":[1,{"K2":2}]}}, "action":"submit","correlationId":"c\u002d1"} `,
		cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c-1", Value: json.RawMessage(`{"text":"a\u00e9","nested":{"k":[1,{"K2":2}]}}`)}},
	{`{"action":"submit","correlationId":"c","valu\u0065":{"ſ":1}}`, cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`{"ſ":1}`)}},
	{`{"action":"submit","correlationId":"c","value":{},"client":{"version":"2.1"}}`,
		cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`{}`)}},
}

// cardResponseRefused are answers ParseCardResponse refuses, with the code
// and the JSON pointer of the first refusal.
var cardResponseRefused = []struct {
	name, in string
	code     refusal.Code
	path     string
}{
	{"not an object", `["submit"]`, refusal.CodeInvalidCard, ""},
	{"null", `null`, refusal.CodeInvalidCard, ""},
	{"empty", ``, refusal.CodeInvalidCard, ""},
	{"broken", `{"action":"submit",`, refusal.CodeInvalidCard, ""},
	{"trailing data", `{"action":"cancel","correlationId":"c"}{}`, refusal.CodeInvalidCard, ""},
	{"upper-case name", `{"ACTION":"submit","correlationId":"c","value":{}}`, refusal.CodeInvalidCard, "/ACTION"},
	{"case variant beside the name", `{"action":"cancel","Action":"submit","correlationId":"c"}`, refusal.CodeInvalidCard, "/Action"},
	{"escaped duplicate", `{"action":"submit","correlationId":"c","value":{},"valu\u0065":{}}`, refusal.CodeInvalidCard, "/value"},
	{"long s folds to s inside the value", `{"action":"submit","correlationId":"c","value":{"ſ":1,"s":2}}`, refusal.CodeInvalidCard, "/value/s"},
	{"duplicated action", `{"action":"cancel","action":"submit","correlationId":"c","value":{}}`, refusal.CodeInvalidCard, "/action"},
	{"duplicated inside the value", `{"action":"submit","correlationId":"c","value":{"optionId":"a","optionId":"b"}}`, refusal.CodeInvalidCard, "/value/optionId"},
	{"case collision inside the value", `{"action":"submit","correlationId":"c","value":{"x":{"optionId":"a","OptionId":"b"}}}`, refusal.CodeInvalidCard, "/value/x/OptionId"},
	{"invalid UTF-8", "{\"action\":\"submit\",\"correlationId\":\"c\xff\",\"value\":{}}", refusal.CodeInvalidCard, "/correlationId"},
	{"action not a string", `{"action":1,"correlationId":"c"}`, refusal.CodeInvalidCard, "/action"},
	{"correlationId not a string", `{"action":"cancel","correlationId":["c"]}`, refusal.CodeInvalidCard, "/correlationId"},
	{"unknown action", `{"action":"skip","correlationId":"c"}`, refusal.CodeInvalidCard, "/action"},
	{"action by case", `{"action":"Submit","correlationId":"c","value":{}}`, refusal.CodeInvalidCard, "/action"},
	{"no action", `{"correlationId":"c"}`, refusal.CodeInvalidCard, "/action"},
	{"no correlationId", `{"action":"cancel"}`, refusal.CodeInvalidCard, "/correlationId"},
	{"empty correlationId", `{"action":"cancel","correlationId":""}`, refusal.CodeInvalidCard, "/correlationId"},
	{"submit without value", `{"action":"submit","correlationId":"c"}`, refusal.CodeInvalidCard, "/value"},
	{"submit of a string", `{"action":"submit","correlationId":"c","value":"yes"}`, refusal.CodeInvalidCard, "/value"},
	{"submit of null", `{"action":"submit","correlationId":"c","value":null}`, refusal.CodeInvalidCard, "/value"},
	{"submit of an array", `{"action":"submit","correlationId":"c","value":[{}]}`, refusal.CodeInvalidCard, "/value"},
	{"decline with a value", `{"action":"decline","correlationId":"c","value":{}}`, refusal.CodeInvalidCard, "/value"},
	{"cancel with null", `{"action":"cancel","correlationId":"c","value":null}`, refusal.CodeInvalidCard, "/value"},
	{"too deep", `{"action":"submit","correlationId":"c","value":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64) + `}`, refusal.CodeInvalidCard, "/value"},
	{"too large", `{"action":"submit","correlationId":"c","value":{"t":"` + strings.Repeat("x", DefaultMaxFrameBytes) + `"}}`, refusal.CodeFrameTooLarge, ""},
}

// firstRefusal returns the code and path of the first refusal of err: the
// *Error itself, or the first of a CardViolations.
func firstRefusal(t *testing.T, err error) (refusal.Code, string) {
	t.Helper()
	e, ok := errors.AsType[*refusal.Error](err)
	require.True(t, ok, "%v is a refusal", err)
	return e.Code, e.Path
}

func TestParseCardResponse(t *testing.T) {
	for _, c := range cardResponseAccepted {
		got, err := ParseCardResponse([]byte(c.in))
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, c := range cardResponseRefused {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseCardResponse([]byte(c.in))
			code, path := firstRefusal(t, err)
			assert.Equal(t, c.code, code)
			assert.Equal(t, c.path, path)
			assert.Zero(t, got)
			if c.code == refusal.CodeInvalidCard {
				assert.ErrorIs(t, err, refusal.ErrInvalidCard)
			}
		})
	}
}

// TestParseCardResponseStricterThanEncodingJSON: each refused answer
// below is one encoding/json reads without complaint, and to another
// meaning than its first member says.
func TestParseCardResponseStricterThanEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"ACTION":"submit","correlationId":"c","value":{}}`,
		`{"action":"cancel","action":"submit","correlationId":"c","value":{}}`,
		`{"action":"submit","correlationId":"c","value":{"optionId":"a","OptionId":"b"}}`,
	} {
		var loose cards.CardResponse
		require.NoError(t, json.Unmarshal([]byte(in), &loose), in)
		require.Equal(t, cards.CardActionSubmit, loose.Action, in)
		_, err := ParseCardResponse([]byte(in))
		assert.ErrorIs(t, err, refusal.ErrInvalidCard, in)
	}
}

// TestParseCardResponseListsEveryViolation: the shape rules report all
// their violations, as ValidateCardResponse does.
func TestParseCardResponseListsEveryViolation(t *testing.T) {
	_, err := ParseCardResponse([]byte(`{"action":"skip","value":3}`))
	assert.Equal(t, []string{"/action", "/correlationId"}, paths(t, err))
}

// TestParseCardResponseOwnsItsBytes: the response keeps nothing of data.
func TestParseCardResponseOwnsItsBytes(t *testing.T) {
	in := []byte(`{"action":"submit","correlationId":"card-1","value":{"optionId":"yes"}}`)
	got, err := ParseCardResponse(in)
	require.NoError(t, err)
	for i := range in {
		in[i] = ' '
	}
	assert.Equal(t, "card-1", got.CorrelationID)
	assert.JSONEq(t, `{"optionId":"yes"}`, string(got.Value))
}

func TestParseCardResponseConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, c := range cardResponseAccepted {
				got, err := ParseCardResponse([]byte(c.in))
				assert.NoError(t, err)
				assert.Equal(t, c.want, got)
			}
		})
	}
	wg.Wait()
}
