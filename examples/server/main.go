// Command server is the example chat service of package demo on the
// in-memory stores (see demo's documentation for its turns, endpoints and
// output):
//
//	go run ./examples/server -addr 127.0.0.1:8080 -deltas 50 -pace 20ms
//
// Its first line on stdout is the URL of the first turn's stream; follow it
// with
//
//	go run ./cmd/chatwire follow 'http://ADDR/conversations/c-1/turns/t-1/events?access_token=demo'
//
// (with --registered reasoning,source for a -replay turn, which carries
// the provider's reasoning and cited pages);
// answer the turn's card (which starts the next turn, the second URL) with
//
//	curl -H 'Authorization: Bearer demo' -H 'Idempotency-Key: k-1' -H 'Content-Type: application/json' \
//	  -d '{"action":"submit","correlationId":"card-t-1","value":{"optionId":"yes"}}' \
//	  http://ADDR/conversations/c-1/cards/card-t-1/answer
//
// and cancel a running turn with
//
//	curl -X POST -H 'Authorization: Bearer demo' -H 'X-Requested-With: curl' http://ADDR/conversations/c-1/turns/t-1/cancel
//
// Run the first turn through the agent loop (a model step asking for a
// tool, the tool, the model's answer) on a loopback provider of one API,
// with no network, with
//
//	go run ./examples/server -model openai-chat   # or openai-responses, anthropic-messages
//
// The same service on PostgreSQL is pgstore/examples/server, in the pgstore
// module: (cd pgstore && go run ./examples/server -store postgres DSN).
package main

import (
	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
)

func main() { demo.Main(demo.Memory) }
