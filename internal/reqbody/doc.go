// Package reqbody is how every HTTP endpoint of the module that changes
// state takes its request, before anything changes (docs/contract.md
// section 12.6): the answer endpoint, the cancel endpoint and the
// front-end bridges' POSTs share its three rules.
//
//   - [SameSite] refuses what a page of another site can make a browser
//     send without a CORS preflight: a request is taken only with
//     Content-Type application/json, or without a Content-Type but with a
//     header no simple request carries ([RequestedWith], or the endpoint's
//     own, such as Idempotency-Key). A refusal is unsupported-media-type.
//   - [Read] reads a body within a byte limit, refusing a Content-Length
//     over it before reading, and within a read deadline
//     ([DefaultTimeout]), so that a client that sends slowly holds no
//     handler: frame-too-large, else unreadable-body.
//   - [Unmarshal] and [CheckNames] read a body as strictly as the contract
//     reads its own JSON: one value, valid UTF-8, no name twice in an
//     object, and no two names of an object equal under Unicode case
//     folding, nor a name that folds to a member of the target struct
//     without being it, at any depth. A reader that folds case
//     (encoding/json) or keeps the last of duplicates would otherwise read
//     another request from the same bytes: invalid-input.
//
// Its errors are [*refusal.Error] values with the codes above; the caller
// writes the answer, with the status of [refusal.HTTPStatus].
package reqbody
