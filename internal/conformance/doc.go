// Package conformance runs the language-neutral conformance files of a
// testdata directory against this module: the fixtures (one case per file,
// each carrying its expectation), the golden envelope streams with the
// ChatStateV1 each reduces to, and the manifest that lists every file with
// its SHA-256 digest. `go test` and `chatwire conform [DIR]` both call [Run],
// so the two can never disagree.
//
// It is product code, shipped in the chatwire binary (conform, parse): it
// imports neither package testing nor a test kit, and its tests are where
// `go test ./... -update` rewrites the golden states and the manifest.
//
// The directory layout (see testdata/README.md for the formats):
//
//	schemas/*.schema.json     JSON Schema 2020-12 of every wire shape and of these formats
//	fixtures/KIND/*.json      accept and reject cases: kind envelope, version, capabilities, state
//	golden/NAME.jsonl         an envelope stream, one frame per line (hand-written)
//	golden/NAME.state.json    the state it reduces to (written only by Update)
//	legacy/DIALECT/*.json     the legacy adapters' cases: legacy frames, host mapping, expected envelopes or refusal
//	legacy/encode/*.json      the legacy adapters' cases the other way: an envelope and its legacy frame or refusal
//	providers/KIND/NAME.sse   a provider's raw stream body, with NAME.jsonl (the envelopes it must produce) and NAME.state.json
//	manifest.json             every other file with its digest, role and expectation
//
// Everything under fuzz/ and streams/ is outside the manifest. New fixture
// families (blocks parity cases) are added as a role in roleOf and, once
// the runner can execute them, an executor in Run.
package conformance
