package demo

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/Papercusp/chat-protocol-go/ingest"
)

// recordings are the provider's answers the loopback provider plays:
// <kind>-1.sse asks for search_docs, <kind>-2.sse answers with text.
//
//go:embed provider/*.sse
var recordings embed.FS

// provider is the loopback model provider of -model: an HTTP server on
// 127.0.0.1 that answers a request of kind's API with a recorded stream,
// the tool call when the request carries no tool result yet, else the
// answer, so that no network is needed.
type provider struct {
	kind  ingest.Kind
	steps [2][]byte
	srv   *http.Server
	url   string
}

// startProvider starts the loopback provider of kind; Close stops it.
func startProvider(kind ingest.Kind) (*provider, error) {
	p := &provider{kind: kind}
	for i := range p.steps {
		b, err := recordings.ReadFile("provider/" + string(kind) + "-" + string(rune('1'+i)) + ".sse")
		if err != nil {
			return nil, err
		}
		p.steps[i] = b
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.url = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the provider.
func (p *provider) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.srv.Shutdown(ctx)
}

// ServeHTTP answers one request with the recorded step it asks for.
func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"a POST with a JSON body"}}`, http.StatusBadRequest)
		return
	}
	step := p.steps[0]
	if answered(p.kind, body) {
		step = p.steps[1]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.Copy(w, bytes.NewReader(step))
}

// answered reports whether a request's last message carries a tool's
// result, in kind's shapes.
func answered(kind ingest.Kind, body []byte) bool {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input []struct {
			Type string `json:"type"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return false
	}
	switch kind {
	case ingest.OpenAIResponses:
		return len(req.Input) > 0 && req.Input[len(req.Input)-1].Type == "function_call_output"
	case ingest.OpenAIChat:
		return len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "tool"
	}
	if len(req.Messages) == 0 {
		return false
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks); err != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}
