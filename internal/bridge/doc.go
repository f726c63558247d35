// Package bridge holds what the front-end bridges (uistream, agui) share
// besides the serving core (docs/contract.md section 18): the start of a
// turn from a POST, the landing of the card answers it carries, the
// answers to a host hook's error, and the JSON builders of their chunks and
// events. Their streams are served by a [serve.Engine].
package bridge

import _ "github.com/Papercusp/chat-protocol-go/serve" // for the doc link
