package pgstore

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

// CardChannel is the LISTEN/NOTIFY channel on which [InteractionStore]
// announces a card's close (answered, declined, cancelled, expired,
// superseded): the NOTIFY is sent in the transaction that stores the
// terminal record, so the server delivers it when that commits, never
// before and never for one that rolled back. The payload is the JSON
// array [conversation, correlationId], identities only (at most 256 bytes
// each, far below the server's 8,000-byte limit on a payload). A
// notifying commit takes a lock on the whole database for its last
// moment; closes are few, frames (Window) are not, which is why only
// closes notify in their own transaction.
// [AbortListener], given [AbortListenerOptions.Cards], turns it into
// [interactions.Resolver.Notify] (docs/contract.md section 13.2, item 8).
const CardChannel = "pgstore_card_closed"

// sqlNotifyCard announces a card's close; it is queued in the batch that
// writes the terminal record.
const sqlNotifyCard = `SELECT pg_notify('` + CardChannel + `', $1)`

// cardPayload is the notification payload naming key.
func cardPayload(key interactions.Key) string {
	b, _ := json.Marshal([2]string{key.Conversation, key.CorrelationID}) // strings always encode
	return string(b)
}
