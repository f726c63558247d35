package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
)

// event is an SDK event keeping its raw JSON.
type event string

func (e event) RawJSON() string { return string(e) }

// events is an SDK stream of the events given.
type events struct {
	evs []event
	at  int
}

func (s *events) Next() bool     { s.at++; return s.at <= len(s.evs) }
func (s *events) Current() event { return s.evs[s.at-1] }

// TestMapEventsStopsAtTheTurnsEnd: every event goes to onEvent, then to the
// Mapper, until the turn ends; what follows the end is not read.
func TestMapEventsStopsAtTheTurnsEnd(t *testing.T) {
	stream := &events{evs: []event{
		`{"type":"message_start","message":{"id":"msg_1","model":"claude"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"message_stop"}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}`,
	}}
	var r recorder
	m, err := ingest.NewMapper(ingest.AnthropicMessages, &r, nil)
	require.NoError(t, err)
	var seen []event
	require.NoError(t, ingest.MapEvents(context.Background(), m, stream, func(e event) { seen = append(seen, e) }))
	assert.True(t, m.Done())
	assert.Equal(t, stream.evs[:3], seen, "the event after the end is never read")
	assert.Equal(t, "Hi", r.text())
	assert.Equal(t, call{Method: "complete"}, r.last())

	// A stream that ends first leaves the turn to the caller; the Sink's
	// error stops the mapping.
	m, err = ingest.NewMapper(ingest.AnthropicMessages, &recorder{failOn: "delta"}, nil)
	require.NoError(t, err)
	stream = &events{evs: stream.evs[:2]}
	assert.ErrorIs(t, ingest.MapEvents(context.Background(), m, stream, nil), errSink)
	m, err = ingest.NewMapper(ingest.AnthropicMessages, &r, nil)
	require.NoError(t, err)
	require.NoError(t, ingest.MapEvents(context.Background(), m, &events{evs: stream.evs[:1]}, nil))
	assert.False(t, m.Done())
}

// TestEndWith: the error an SDK's stream ended with ends the turn as a
// clean end, a malformed frame or a cut; a done context ends nothing.
func TestEndWith(t *testing.T) {
	var syntaxErr *json.SyntaxError
	require.ErrorAs(t, json.Unmarshal([]byte("{"), new(any)), &syntaxErr)
	var typeErr *json.UnmarshalTypeError
	require.ErrorAs(t, json.Unmarshal([]byte(`"x"`), new(int)), &typeErr)
	errRead := errors.New("connection reset")
	finished := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	for _, c := range []struct {
		name      string
		events    []string
		err       error
		returned  error
		code      chatprotocol.ErrorCode // "" for Complete
		cancelled bool
	}{
		{name: "clean end after the finish reason", events: []string{finished}},
		{name: "clean end before it", err: nil, code: ingest.CodeStreamCut},
		{name: "syntax error", err: syntaxErr, code: ingest.CodeInvalidStream},
		{name: "type error, wrapped", err: errors.Join(errors.New("decoding"), typeErr), code: ingest.CodeInvalidStream},
		{name: "cut", err: errRead, returned: ingest.ErrCut, code: ingest.CodeStreamCut},
		{name: "cut after the finish reason", events: []string{finished}, err: errRead, returned: ingest.ErrCut},
		{name: "cancelled", err: errRead, returned: context.Canceled, cancelled: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var r recorder
			m, err := ingest.NewMapper(ingest.OpenAIChat, &r, nil)
			require.NoError(t, err)
			for _, e := range c.events {
				require.NoError(t, m.Event(ctx, []byte(e)))
			}
			if c.cancelled {
				cancel()
			}
			err = m.EndWith(ctx, c.err)
			if c.returned == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, c.returned)
			}
			if c.returned == ingest.ErrCut {
				assert.ErrorIs(t, err, errRead, "the cut is wrapped, not replaced")
			}
			switch {
			case c.cancelled:
				assert.False(t, m.Done(), "a done context ends nothing")
			case c.code == "":
				assert.Equal(t, "complete", r.last().Method)
			default:
				assert.Equal(t, "fail", r.last().Method)
				assert.Equal(t, c.code, r.last().Code)
			}
		})
	}
}
