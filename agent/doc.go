// Package agent runs an agent's turn: model steps and tool calls, one
// after the other, until the model answers without asking for a tool
// (docs/contract.md section 19). A [Model] streams one step from the
// conversation so far into the turn's producer; the [Loop] runs the tools
// the step asked for through recovery, adds their results to the
// conversation and asks the model again.
//
// The conversation a model reads is a list of [Message]s in the contract's
// own terms (text, tool calls, tool results, reasoning to pass back); the
// nested modules ingest/openaisdk and ingest/anthropicsdk turn it into each
// provider's request.
//
// # A turn
//
//	loop := &agent.Loop{Model: model, Tools: []agent.Tool{search, refund}, System: "Be brief."}
//	p, err := turn.Start(ctx, window, key, &turn.Options{Recovery: rec, Runs: runs, Cards: cards, Caller: "worker"})
//	out, err := loop.Run(ctx, p, history) // history: earlier turns and the user's message
//
// Each step is a step on the stream (step started, then finished or
// failed); the calls of a step run concurrently, each at most once, under
// the call id the model gave it; the turn ends completed, failed (the
// step's failure, a tool's unknown outcome, the step limit) or cancelled,
// and [Outcome] says how, with the turn's messages for the next turn's
// history ([TurnMessages] reads them back from the stream).
//
// # Cards
//
// A [Tool] with a Card asks a person before a call goes on: an approval,
// or, without Run, a question whose answer is the call's output. The loop
// leaves the turn interrupted while a card is open; once it closed, the
// host starts a producer on the same turn and runs the loop again, which
// closes the card on the stream and goes on.
//
// # Restart
//
// A loop run on a resumed producer (a process died, another continued the
// turn) ends the open step interrupted, rebuilds the conversation from the
// turn's frames, and finishes the last step's calls under their call ids:
// a stored result is reused, nothing is launched twice.
package agent
