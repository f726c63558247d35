package servekit

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestEachProtocolDeliversTheTurnsDeltas reads a turn in each protocol as
// the benchmarks do: Opening data lines while the turn holds lifecycle
// started alone; then, once two deltas and completed are appended, the
// first delta's opening chunk where the bridge writes one (text-start,
// TEXT_MESSAGE_START), and Delta finds each delta's text, escapes kept.
func TestEachProtocolDeliversTheTurnsDeltas(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t-1"}
	events := []chatprotocol.Event{
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "1700000000000000000"},
		&chatprotocol.DeltaEvent{Text: `say "hi"`},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
	}
	textOpening := map[string]int{Stream: 0, UIStream: 1, AGUI: 1}
	for _, proto := range Protocols() {
		t.Run(proto, func(t *testing.T) {
			window := replay.NewMemory(nil)
			appendEvent := func(i int) {
				_, err := window.Append(context.Background(), key, &chatprotocol.ChatEventEnvelope{
					ConversationID: key.ConversationID, TurnID: key.TurnID, EventID: "e-" + strconv.Itoa(i+1), Seq: int64(i + 1), Event: events[i]})
				require.NoError(t, err)
			}
			appendEvent(0)
			mux := http.NewServeMux()
			closeHandler, err := Mount(mux, proto, window, Options{Conversation: key.ConversationID})
			require.NoError(t, err)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			t.Cleanup(closeHandler)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := NewRequest(ctx, proto, srv.URL, key)
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			lines := bufio.NewScanner(resp.Body)
			isData := func(line []byte) bool { return bytes.HasPrefix(line, []byte("data:")) }
			for seen := 0; seen < Opening(proto) && lines.Scan(); {
				if isData(lines.Bytes()) {
					seen++
				}
			}
			for i := 1; i < len(events); i++ {
				appendEvent(i)
			}
			var (
				before int
				texts  []string
			)
			for lines.Scan() {
				line := lines.Bytes()
				if text, ok := Delta(proto, line); ok {
					texts = append(texts, string(text))
				} else if len(texts) == 0 && isData(line) {
					before++
				}
			}
			require.NoError(t, lines.Err())
			assert.Equal(t, textOpening[proto], before)
			assert.Equal(t, []string{"1700000000000000000", `say \"hi\"`}, texts)
		})
	}
}

// TestDeltaReadsALinesBeginning finds a delta in the first bytes of its
// line, its text cut where the line is, and refuses other lines and an
// unknown protocol.
func TestDeltaReadsALinesBeginning(t *testing.T) {
	for _, c := range []struct {
		proto, line, text string
		ok                bool
	}{
		{Stream, `data: {"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":2,"event":{"type":"delta","text":"xx`, "xx", true},
		{Stream, `data: {"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":2,"event":{"type":"lifecycle","status":"started"}}`, "", false},
		{UIStream, `data: {"type":"text-delta","id":"text-2","delta":"ab\"c"}`, `ab\"c`, true},
		{UIStream, `data: {"type":"text-start","id":"text-2"}`, "", false},
		{AGUI, `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x`, "x", true},
		{AGUI, `data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`, "", false},
		{AGUI, `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m"`, "", false},
		{"legacy", `data: {"type":"text-delta","id":"text-2","delta":"x"}`, "", false},
	} {
		text, ok := Delta(c.proto, []byte(c.line))
		assert.Equal(t, c.ok, ok, "%s %s", c.proto, c.line)
		assert.Equal(t, c.text, string(text), "%s %s", c.proto, c.line)
	}
}
