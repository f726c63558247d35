package main

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// legacyUpgrader upgrades the frames of a legacy0 stream through
// legacy.StreamHost, the host the command acts as (contract-v1.md section
// 9): the conversation id from --conversation or the session frame, the
// turn id from --turn or "turn-1", event ids and seqs counted, tool call
// ids stable per turn and ordinal, no product type registered.
type legacyUpgrader struct {
	dialect legacy.Dialect
	host    *legacy.StreamHost
}

// legacyDialect returns the dialect --dialect names.
func legacyDialect(name string) (legacy.Dialect, bool) { return legacy.ParseDialect(name) }

// legacyFrame decodes one legacy frame and upgrades it. A product frame,
// which no registry of the command lists, is not a violation: it goes to
// the sink as an app event. A frame whose type is a contract type the
// dialect does not define (token under --dialect papercusp, delta under
// scout) is no product frame: the upgrade refuses it with unsupported-event,
// so that a stream read with the wrong dialect fails instead of decoding
// to a turn without text.
func (s *stream) legacyFrame(data []byte) error {
	if s.legacy == nil {
		d, _ := legacyDialect(s.opts.dialect) // checked with the flags
		s.legacy = &legacyUpgrader{dialect: d, host: legacy.NewStreamHost(&legacy.StreamOptions{
			ConversationID: s.opts.conversation, TurnID: s.opts.turn,
		})}
	}
	f, err := legacy.DecodeLegacyChatFrame(data, s.legacy.dialect)
	if err != nil {
		return s.refused(err)
	}
	if app, ok := f.(*chatprotocol.ChatAppEvent); ok && !contractType(app.Type) {
		return s.appEvent(app.Type, app.Raw)
	}
	envs, err := legacy.UpgradeLegacyChatFrame(f, s.legacy.host)
	if err != nil {
		return s.refused(err)
	}
	for i := range envs {
		if err := s.apply(&envs[i]); err != nil {
			return err
		}
	}
	return nil
}

// contractType reports whether t names a type of version 0 or version 1
// (contract-v1.md sections 2 and 6), which no host may register as a
// product type (chatprotocol.NewRegistry refuses it).
func contractType(t string) bool {
	_, v0 := chatprotocol.ChatEventChannel(t)
	_, v1 := chatprotocol.EventChannel(t)
	return v0 || v1
}
