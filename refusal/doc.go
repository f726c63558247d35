// Package refusal holds the module's one refusal type, its stable codes and a
// sentinel per code (docs/contract.md section 12).
//
// Every package of the module (the root package, blocks, legacy, sse,
// recovery, interactions, replay, stream, pgstore) returns a refusal as an
// [*Error] with a [Code], a JSON-pointer Path where one applies and a
// Message for people only. Callers branch on the code:
//
//	if errors.Is(err, refusal.ErrSequenceGap) { … }
//	switch refusal.CodeOf(err) { case refusal.CodeStaleCursor: … }
//
// never on message text (section 12.2). The sentinels are constants of
// type [Sentinel], so no assignment anywhere can change what [errors.Is]
// matches.
//
// Only the [Code] and the Path are meant for a client: a Message or a
// wrapped cause may quote a store's own error text (section 12.3).
//
// Over HTTP every surface of the module answers a refusal the same way
// (docs/contract.md section 12.5): the status [HTTPStatus] gives its code
// and a [Body] written by [WriteHTTP], whose message is the surface's own
// words; [BodyOf] takes from an error what a client may see.
//
// This package imports nothing of the module, so that recovery and
// interactions use it without pulling in a validator or a database driver.
package refusal
