package interactions

import (
	"context"
	"encoding/json"
)

// Validator checks a submitted value against the server-owned schema a card
// was opened with, found by its immutable schema id and revision
// (docs/contract.md section 13.2). The Resolver calls it with the card's
// stored [SchemaRef], never with anything taken from the submission, and with
// the canonical value (a JSON object). It may block (a remote registry, a
// cache fill): it runs outside the store's transaction, and the transaction
// then rechecks that the card still has the revision and schema that were
// validated.
//
// Validate returns nil when the value is acceptable, an error of code
// [refusal.CodeInvalidAnswer] when it is not (Path a JSON pointer into the response,
// such as "/value/optionId"), or of code [refusal.CodeUnknownSchema] when no schema
// is registered under ref. An error without a code is treated as
// [refusal.CodeInvalidAnswer]. Implementations must be safe for concurrent use.
//
// The jsonschema subpackage provides one that validates JSON Schema.
type Validator interface {
	Validate(ctx context.Context, ref SchemaRef, value json.RawMessage) error
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, ref SchemaRef, value json.RawMessage) error

// Validate calls f.
func (f ValidatorFunc) Validate(ctx context.Context, ref SchemaRef, value json.RawMessage) error {
	return f(ctx, ref, value)
}
