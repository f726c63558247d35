package otelchat_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/otelchat"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// readmeWiring is the README's OpenTelemetry code, verbatim between the
// markers; out receives the recovery it makes.
func readmeWiring(logger *slog.Logger, host recovery.Host, mux *http.ServeMux, streams http.Handler, out **recovery.TurnRecovery) error {
	// README:begin
	traces, err := otelchat.New(nil) // the global TracerProvider, MeterProvider and propagator
	if err != nil {
		return err
	}
	obs := observe.Join(observe.NewSlog(logger), traces) // logs and traces both
	rec := recovery.New(host, &recovery.Options{Observer: obs})
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", traces.Handler(streams)) // traceparent
	// README:end
	*out = rec
	return nil
}

func TestReadmeWiring(t *testing.T) {
	mux := http.NewServeMux()
	streams := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	var rec *recovery.TurnRecovery
	require.NoError(t, readmeWiring(slog.New(slog.DiscardHandler), recovery.Host{Store: recovery.NewMemoryStore(nil)}, mux, streams, &rec))
	require.NotNil(t, rec)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/conversations/c-1/turns/t-1/events", nil))
	assert.Equal(t, http.StatusNoContent, w.Code, "the stream handler, traced")
}
