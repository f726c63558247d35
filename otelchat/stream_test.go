package otelchat_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/otelchat"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// appendSeq appends the envelope of seq to key's turn: started at 1, a
// delta up to last-1, completed at last.
func appendSeq(t *testing.T, w replay.Window, key replay.Key, seq, last int64) {
	t.Helper()
	var ev chatprotocol.Event = &chatprotocol.DeltaEvent{Text: "chunk " + strconv.FormatInt(seq, 10)}
	switch seq {
	case 1:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}
	case last:
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
	}
	_, err := w.Append(context.Background(), key, &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID,
		TurnID: key.TurnID, EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev})
	require.NoError(t, err)
}

// A client follows a turn's stream, goes away after seq 3 and reconnects
// with Last-Event-ID: each connection is a chat.stream span, child of the
// client span whose traceparent it carried; the reconnect's span holds its
// resume cursor, the window's reads are events of the spans, and each
// delivery is in the latency histogram.
func TestStreamSpansFollowTheRequests(t *testing.T) {
	tel := newTelemetry(t)
	ends := &observetest.Recorder{}
	obs := observe.Join(tel.obs, ends)
	key := replay.Key{ConversationID: "conv-1", TurnID: "turn-1"}
	w := replay.NewMemory(&replay.MemoryOptions{Observer: obs})
	h, err := stream.NewHandler(w, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }, Options: serve.Options{Observer: obs, WaitOnRequest: true}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", tel.obs.Handler(h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for seq := range int64(3) {
		appendSeq(t, w, key, seq+1, 6)
	}

	client := tel.tp.Tracer("client")
	// follow connects after cursor and reads until it has seen seq until,
	// then goes away.
	follow := func(cursor string, until string) string {
		ctx, span := client.Start(t.Context(), "client.follow")
		defer span.End()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/conversations/conv-1/turns/turn-1/events", nil)
		require.NoError(t, err)
		if cursor != "" {
			req.Header.Set("Last-Event-ID", cursor)
		}
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if lines.Text() == "id: "+until {
				break
			}
		}
		return span.SpanContext().SpanID().String()
	}
	first := follow("", "3")
	require.NoError(t, ends.Await(t.Context(), func(e []observetest.Recorded) bool { return len(observetest.Ends(e)) == 1 }))
	done := make(chan string, 1)
	go func() { done <- follow("3", "6") }()
	require.NoError(t, ends.Await(t.Context(), func(e []observetest.Recorded) bool {
		return len(e) > 0 && e[len(e)-1].Kind == observe.StreamResume
	}))
	for seq := int64(4); seq <= 6; seq++ {
		appendSeq(t, w, key, seq, 6)
	}
	second := <-done
	require.NoError(t, ends.Await(t.Context(), func(e []observetest.Recorded) bool { return len(observetest.Ends(e)) == 2 }))

	streams := tel.ended("chat.stream")
	require.Len(t, streams, 2)
	for i, parent := range []string{first, second} {
		s := streams[i]
		assert.Equal(t, parent, s.Parent().SpanID().String(), "stream %d is a child of its client's span", i)
		assert.True(t, s.Parent().IsRemote())
		a := attrs(s)
		assert.Equal(t, "conv-1", a[otelchat.KeyConversation].AsString())
		assert.Equal(t, "turn-1", a[otelchat.KeyTurn].AsString())
		assert.Equal(t, "stream.end", a[otelchat.KeyEvent].AsString())
	}
	assert.Equal(t, int64(3), attrs(streams[0])[otelchat.KeySeq].AsInt64(), "the first stream delivered up to seq 3")
	assert.Equal(t, int64(3), attrs(streams[0])[otelchat.KeyCount].AsInt64())
	assert.Equal(t, int64(6), attrs(streams[1])[otelchat.KeySeq].AsInt64(), "the reconnect delivered the rest")
	assert.Equal(t, int64(3), attrs(streams[1])[otelchat.KeyCount].AsInt64())

	assert.Equal(t, "replay.serve", eventNames(streams[0])[0])
	resumed := false
	for _, e := range streams[1].Events() {
		if e.Name == "stream.resume" {
			resumed = true
			for _, kv := range e.Attributes {
				if kv.Key == otelchat.KeyCursor {
					assert.Equal(t, int64(3), kv.Value.AsInt64())
				}
			}
		}
	}
	assert.True(t, resumed, "the reconnect's span says where it resumed: %v", eventNames(streams[1]))
	assert.NotContains(t, strings.Join(eventNames(streams[0]), " "), "stream.resume")

	hist, ok := tel.metrics(t)["chat.stream.delivery.latency"].(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, hist.DataPoints, 1)
	assert.GreaterOrEqual(t, hist.DataPoints[0].Count, uint64(2), "one per write, at least one per stream")
}
