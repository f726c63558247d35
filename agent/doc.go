// Package agent runs an agent's turn: model steps and tool calls, one
// after the other, until the model answers without asking for a tool
// (docs/contract.md section 19). A [Model] streams one step from the
// conversation so far into the turn's producer; the loop runs the tools the
// step asked for through recovery, adds their results to the conversation
// and asks the model again.
//
// The conversation a model reads is a list of [Message]s in the contract's
// own terms (text, tool calls, tool results, reasoning to pass back); the
// nested modules ingest/openaisdk and ingest/anthropicsdk turn it into each
// provider's request.
package agent
