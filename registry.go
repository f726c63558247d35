package chatprotocol

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// Registry is a host's list of product event types, each with the channel
// it belongs to (docs/contract.md sections 2 and 6). Scout registers
// "products", "cart_mutate" …; an envelope whose event type is neither of
// docs/contract.md section 6 nor registered is refused with unsupported-event.
//
// A Registry is built once by [NewRegistry] and never changes, so it is safe
// for concurrent use. The nil *Registry is valid and registers nothing.
type Registry struct {
	types  map[string]Channel
	shapes map[string]*shape // the registered events of section 6.5 among types
}

// NewRegistry returns a registry of the product types in types (copied).
//
// A product type is 1 to 256 bytes of lower-case ASCII letters, digits,
// '_', '.' and '-' ([a-z0-9_.-], docs/contract.md sections 6 and 10), so
// that no two types, and no type and a type of docs/contract.md section 6, differ only by
// case, by a look-alike letter ("ſession"), or by an invisible or
// line-breaking character (a zero-width space, a BOM, U+2028), and every
// type is a safe SSE event name. NewRegistry refuses, with
// unsupported-event and the type as the path, a type outside that set, a
// type of docs/contract.md section 6, a version-0 type the legacy adapters map ("token",
// "tool_start", "done"), or the SSE event name of heartbeats ("heartbeat",
// which [EnvelopeReader] and other stream readers skip, so such events would
// be lost); and, with invalid-event, a channel that is not [ChannelEvent],
// [ChannelState] or [ChannelTransient].
//
// opts add the registered events of docs/contract.md section 6.5
// ([WithReasoning], [WithSources]): their types are reserved, and a product
// type named like one ("reasoning", "source") is refused with
// unsupported-event whether or not the option is given.
func NewRegistry(types map[string]Channel, opts ...RegistryOption) (*Registry, error) {
	r := &Registry{types: make(map[string]Channel, len(types)+len(opts)), shapes: make(map[string]*shape, len(opts))}
	for _, opt := range opts {
		if opt != nil {
			opt(r)
		}
	}
	for t := range r.shapes {
		r.types[t] = ChannelEvent
	}
	for t, ch := range types {
		if err := checkProductType(t); err != nil {
			return nil, err
		}
		if ch.String() == "invalid" {
			return nil, refusef(refusal.CodeInvalidEvent, "/"+strictjson.EscapePointer(t), "channel %d is not event, state or transient", ch)
		}
		r.types[t] = ch
	}
	return r, nil
}

func checkProductType(t string) error {
	path := "/" + strictjson.EscapePointer(t)
	if err := checkID(refusal.CodeUnsupportedEvent, "", strictjson.EscapePointer(t), t); err != nil {
		return err
	}
	if strings.ContainsFunc(t, func(c rune) bool { return !productTypeByte(c) }) {
		return refusef(refusal.CodeUnsupportedEvent, path, "a product type is made of a-z, 0-9, '_', '.' and '-'")
	}
	if _, core := EventChannel(t); core {
		return refusef(refusal.CodeUnsupportedEvent, path, "%q is an event type of version 1", t)
	}
	switch t {
	case EventTypeReasoning, EventTypeSource:
		return refusef(refusal.CodeUnsupportedEvent, path, "%q is a registered event of version 1 (section 6.5), added by its RegistryOption", t)
	case "token", "tool_start", "done":
		return refusef(refusal.CodeUnsupportedEvent, path, "%q is a version-0 type the legacy adapters map", t)
	case sse.EventHeartbeat:
		return refusef(refusal.CodeUnsupportedEvent, path, "%q is the SSE event name of heartbeats, which stream readers skip", t)
	}
	return nil
}

// productTypeByte reports whether c may appear in a product type:
// [a-z0-9_.-]. Invalid UTF-8 reads as U+FFFD, which may not.
func productTypeByte(c rune) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// Channel returns the channel of eventType: the one of docs/contract.md
// section 6 for its types, else the registered one. ok is false for a type
// neither knows.
func (r *Registry) Channel(eventType string) (ch Channel, ok bool) {
	if ch, ok := EventChannel(eventType); ok {
		return ch, true
	}
	if r == nil {
		return 0, false
	}
	ch, ok = r.types[eventType]
	return ch, ok
}

// Types returns the registered product types, sorted; the slice is new on
// each call.
func (r *Registry) Types() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.types))
	for t := range r.types {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Registered reports whether the registered event of docs/contract.md
// section 6.5 of type eventType ("reasoning", "source") was added to r.
func (r *Registry) Registered(eventType string) bool {
	if r == nil {
		return false
	}
	_, ok := r.shapes[eventType]
	return ok
}

// has reports whether typ is registered, without allocating.
func (r *Registry) has(typ []byte) bool {
	_, ok := r.types[string(typ)]
	return ok
}

// String lists the registry as type=channel pairs, for diagnostics.
func (r *Registry) String() string {
	var b strings.Builder
	for i, t := range r.Types() {
		if i > 0 {
			b.WriteByte(' ')
		}
		ch, _ := r.Channel(t)
		fmt.Fprintf(&b, "%s=%s", t, ch)
	}
	return b.String()
}
