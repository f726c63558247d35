package reqbody_test

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// chatRequest is a request body's shape as the bridges read it: named
// members, a raw array, a nested struct, a slice of structs.
type chatRequest struct {
	ID       *string        `json:"id"`
	Messages jsontext.Value `json:"messages"`
	Trigger  string         `json:"trigger"`
	Answer   *struct {
		SubmissionID string `json:"submissionId"`
	} `json:"answer"`
	Resume []struct {
		InterruptID string `json:"interruptId"`
	} `json:"resume"`
}

func TestUnmarshalReadsAStrictBody(t *testing.T) {
	var req chatRequest
	body := `{"id":"chat-1","messages":[{"id":"m","role":"user"}],"trigger":"submit-message","answer":{"submissionId":"s"},"resume":[{"interruptId":"i"}],"selectedModel":"x","extra":{"A":1,"b":[{"c":null}]}}`
	require.NoError(t, reqbody.Unmarshal([]byte(body), &req))
	require.NotNil(t, req.ID)
	assert.Equal(t, "chat-1", *req.ID)
	assert.Equal(t, `[{"id":"m","role":"user"}]`, string(req.Messages))
	assert.Equal(t, "submit-message", req.Trigger)
	assert.Equal(t, "s", req.Answer.SubmissionID)
	assert.Equal(t, "i", req.Resume[0].InterruptID)
}

// TestUnmarshalRefusesWhatAnotherReaderReadsOtherwise: every body that
// encoding/json, which folds case and keeps the last of duplicated names,
// or a lenient UTF-8 reader would read as another request is
// invalid-input, at the pointer of the name or value where one is known.
func TestUnmarshalRefusesWhatAnotherReaderReadsOtherwise(t *testing.T) {
	for _, c := range []struct{ body, path string }{
		{`{"id":"a","ID":"b","messages":[]}`, "/ID"},
		{`{"ID":"b","messages":[]}`, "/ID"},               // a variant of a member alone
		{`{"Id":"b","messages":[],"Trigger":"x"}`, "/Id"}, // the least of two
		{`{"id":"a","messages":[{"id":"m","ID":"n"}]}`, "/messages/0/ID"},
		{`{"id":"a","answer":{"submissionId":"s","SubmissionId":"t"}}`, "/answer/SubmissionId"},
		{`{"id":"a","answer":{"submissionID":"t"}}`, "/answer/submissionID"},
		{`{"id":"a","resume":[{"interruptId":"i"},{"interruptid":"j"}]}`, "/resume/1/interruptid"},
		{`{"id":"a","extra":{"x":{"k":1,"\u212a":2}}}`, "/extra/x/k"}, // the Kelvin sign folds to k
		{`{"id":"a","triggeR":"x","trigger":"submit-message"}`, "/triggeR"},
		{`{"id":"a","meſſages":[]}`, "/meſſages"}, // the long s folds to s
		{`{"id":"a","id":"b"}`, ""},
		{`{"id":"a","messages":[{"x":1,"x":2}]}`, ""},
		{"{\"id\":\"\xff\"}", ""},
		{`{"id":"\ud800"}`, "/id"},
		{`{"id":"a"} {}`, ""},
		{`{"id":5}`, "/id"},
		{`{"id":"a","resume":{}}`, "/resume"},
		{``, ""},
	} {
		var req chatRequest
		err := reqbody.Unmarshal([]byte(c.body), &req)
		require.ErrorIs(t, err, refusal.ErrInvalidInput, c.body)
		if c.path != "" {
			e, ok := err.(*refusal.Error)
			require.True(t, ok, c.body)
			assert.Equal(t, c.path, e.Path, c.body)
		}
	}
}

func TestCheckNames(t *testing.T) {
	for body, path := range map[string]string{
		`{"action":"submit","correlationId":"c","value":{}}`: "",
		`{"action":"submit","x":1,"X":2}`:                    "/X",
		`{"action":"submit","value":{"a":[{"b":1,"B":2}]}}`:  "/value/a/0/B",
		`{"Action":"submit"}`:                                "", // no struct: its own names only
		`[{"s":1},{"S":1},{"ſ":1}]`:                          "",
		`{"a":{"s":1,"ſ":2},"b":{"x":1,"X":2}}`:              "/a/s",
	} {
		err := reqbody.CheckNames([]byte(body))
		if path == "" {
			assert.NoError(t, err, body)
			continue
		}
		require.ErrorIs(t, err, refusal.ErrInvalidInput, body)
		assert.Equal(t, path, err.(*refusal.Error).Path, body)
	}
	for _, body := range []string{`{"a":1,"a":2}`, `{`, "\"\xff\"", `1 2`} {
		assert.ErrorIs(t, reqbody.CheckNames([]byte(body)), refusal.ErrInvalidInput, body)
	}
}
