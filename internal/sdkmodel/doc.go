// Package sdkmodel holds what the models of the nested modules
// ingest/openaisdk and ingest/anthropicsdk share (docs/contract.md section
// 19.3): the pairing of each step's tool calls with their results, the text
// a result is sent as, a tool's schema, and the error a model's Step returns.
package sdkmodel
