package chatprotocol

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Capability names one thing a host can do across a connection or a
// restart (docs/contract.md section 8). The value is the member name used in
// a declaration.
type Capability string

// AllCapabilities returns the five capabilities in the order of
// docs/contract.md section 8; the slice is new on each call.
func AllCapabilities() []Capability {
	all := make([]Capability, len(capabilitiesSpec.members))
	for i := range capabilitiesSpec.members {
		all[i] = Capability(capabilitiesSpec.members[i].name)
	}
	return all
}

// ChatCapabilities is a host's declaration (docs/contract.md section 8): five
// independent booleans, all present on the wire. Unknown holds members a
// newer version declares, kept for re-emission. A lightweight host declares
// ConnectionReplay true and InterruptedTurnRecovery false.
type ChatCapabilities struct {
	ConnectionReplay         bool
	PersistedHistory         bool
	PersistedDecisions       bool
	CompletedToolCheckpoints bool
	InterruptedTurnRecovery  bool
	Unknown                  []Member
}

// The five capabilities. They are independent: none implies another (in
// particular PersistedHistory does not imply InterruptedTurnRecovery).
const (
	// CapabilityConnectionReplay: the host replays the retained suffix of a
	// turn's events after a reconnect (docs/contract.md section 11).
	CapabilityConnectionReplay Capability = "connectionReplay"
	// CapabilityPersistedHistory: conversations survive a host restart.
	CapabilityPersistedHistory Capability = "persistedHistory"
	// CapabilityPersistedDecisions: card answers are stored durably.
	CapabilityPersistedDecisions Capability = "persistedDecisions"
	// CapabilityCompletedToolCheckpoints: completed tool results are
	// checkpointed and reused, never re-launched.
	CapabilityCompletedToolCheckpoints Capability = "completedToolCheckpoints"
	// CapabilityInterruptedTurnRecovery: a turn interrupted by a restart can
	// be recovered.
	CapabilityInterruptedTurnRecovery Capability = "interruptedTurnRecovery"
)

// Has reports whether c declares capability. An unknown capability is never
// declared.
func (c *ChatCapabilities) Has(capability Capability) bool {
	switch capability {
	case CapabilityConnectionReplay:
		return c.ConnectionReplay
	case CapabilityPersistedHistory:
		return c.PersistedHistory
	case CapabilityPersistedDecisions:
		return c.PersistedDecisions
	case CapabilityCompletedToolCheckpoints:
		return c.CompletedToolCheckpoints
	case CapabilityInterruptedTurnRecovery:
		return c.InterruptedTurnRecovery
	}
	return false
}

// MissingCapabilitiesError is the cause wrapped by the refusal of
// [RequireChatCapabilities]: every wanted capability the declaration lacks,
// in the order they were asked for, without repeats.
type MissingCapabilitiesError struct {
	Missing []Capability
}

// Error lists the missing capabilities.
func (e *MissingCapabilitiesError) Error() string {
	names := make([]string, len(e.Missing))
	for i, c := range e.Missing {
		names[i] = string(c)
	}
	return "missing capabilities: " + strings.Join(names, ", ")
}

// RequireChatCapabilities returns nil when declared has every wanted
// capability. Otherwise it refuses with unsupported-capability, naming every
// missing one in the message and in a wrapped [*MissingCapabilitiesError]
// (docs/contract.md section 8); a capability name this version does not know
// is missing. declared may be nil, which declares nothing.
func RequireChatCapabilities(declared *ChatCapabilities, wanted ...Capability) error {
	var missing []Capability
	for _, w := range wanted {
		if (declared == nil || !declared.Has(w)) && !containsCapability(missing, w) {
			missing = append(missing, w)
		}
	}
	if missing == nil {
		return nil
	}
	cause := &MissingCapabilitiesError{Missing: missing}
	return refuseWrap(refusal.CodeUnsupportedCapability, "", fmt.Sprintf("the host does not declare %d wanted capabilities", len(missing)), cause)
}

func containsCapability(cs []Capability, c Capability) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// ParseChatCapabilities reads a capability declaration: a JSON object with
// the five boolean members of docs/contract.md section 8, all required.
// Unknown members are kept; a member name that differs from a capability only
// by case, a duplicated name or invalid UTF-8 is invalid-envelope, and a
// missing or non-boolean capability is invalid-event, with the member's JSON
// pointer.
func ParseChatCapabilities(data []byte) (ChatCapabilities, error) {
	var c ChatCapabilities
	d := strictjson.Get(data, string(data), 0, 0, DefaultMaxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: DefaultMaxDepth}
	if err := r.chatCapabilities(&c, ""); err != nil {
		return ChatCapabilities{}, err
	}
	if err := d.Finish(); err != nil {
		return ChatCapabilities{}, r.fail(err, refusal.CodeInvalidEvent, "", "")
	}
	return c, nil
}

// capabilitiesSpec describes a declaration: the five capabilities of
// docs/contract.md section 8, all required, in order.
var capabilitiesSpec = objectOf[ChatCapabilities](
	member(string(CapabilityConnectionReplay), "ConnectionReplay", kindBool).need(),
	member(string(CapabilityPersistedHistory), "PersistedHistory", kindBool).need(),
	member(string(CapabilityPersistedDecisions), "PersistedDecisions", kindBool).need(),
	member(string(CapabilityCompletedToolCheckpoints), "CompletedToolCheckpoints", kindBool).need(),
	member(string(CapabilityInterruptedTurnRecovery), "InterruptedTurnRecovery", kindBool).need())

// chatCapabilities reads a declaration object at path into c.
func (r *reader) chatCapabilities(c *ChatCapabilities, path string) error {
	if err := r.object(refusal.CodeInvalidEvent, path, ""); err != nil {
		return err
	}
	_, err := r.readMembers(capabilitiesSpec, reflect.ValueOf(c).Elem(), path)
	return err
}

// write writes the declaration: the five members in the order of
// docs/contract.md section 8, then the kept unknown ones; refusals are invalid-event at
// path.
func (c *ChatCapabilities) write(w *writer, path string) {
	w.within(path, "", func() { writeObject(w, capabilitiesSpec, c, path) })
}

// MarshalJSON writes the declaration in its canonical form.
func (c ChatCapabilities) MarshalJSON() ([]byte, error) {
	var w writer
	c.write(&w, "")
	if w.err != nil {
		return nil, w.err
	}
	return w.dst, nil
}
