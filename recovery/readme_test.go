package recovery_test

import (
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
)

// The README's logging snippet is the wiring of ExampleOptions_observer,
// verbatim, so the example's output is what the README's code logs.
func TestReadmeLoggingIsTheExample(t *testing.T) {
	readme.SnippetIsExample(t, "../README.md", "Observability (observe, otelchat)", "observe_example_test.go")
}
