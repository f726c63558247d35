// Package modelstep holds what the models of package agent/httpmodel and
// of the nested modules ingest/openaisdk and ingest/anthropicsdk share
// (docs/contract.md section 19.3), so that they write the same requests: the pairing of each step's tool calls with their results, the text
// a result is sent as, a tool's schema, and the error a model's Step returns.
package modelstep
