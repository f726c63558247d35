package demo

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agent/httpmodel"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// question is what the person asks in a turn of -model.
const question = "What is the refund policy?"

// agentic is the model of -model KIND: the agent loop (package agent,
// docs/contract.md section 19) over the provider's HTTP API
// (agent/httpmodel), here the loopback provider: the model asks for
// search_docs, the loop runs it through recovery, and the model answers
// from its result. The loop ends the turn.
type agentic struct {
	loop *agent.Loop
}

// newAgentic returns the model of -model kind on the provider at baseURL.
func newAgentic(kind ingest.Kind, baseURL string, log *slog.Logger) (agentic, error) {
	m, err := httpmodel.New(kind, &httpmodel.Options{BaseURL: baseURL, APIKey: "demo", Model: "demo-model"})
	if err != nil {
		return agentic{}, err
	}
	search := agent.Tool{
		Spec: agent.ToolSpec{Name: toolName, Description: "Searches the help articles for the words of q.",
			Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
		Run: func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
			log.Info("tool launched", "tool", toolName)
			return search(input)
		},
	}
	return agentic{loop: &agent.Loop{Model: m, Tools: []agent.Tool{search}, System: "Answer from the help articles."}}, nil
}

// play runs the loop on p's turn, the conversation up to the turn its
// history (the question alone when there is none).
func (a agentic) play(ctx context.Context, p *turn.Producer, todo plan) error {
	_, err := a.loop.Run(ctx, p, messages(todo))
	return err
}
