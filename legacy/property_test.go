package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The property tests run rapid's default 100 cases each; run more with
// go test ./legacy -run Property -rapid.checks=10000.

// productTypes are the types products() registers.
var productTypes = []string{"products", "cart_mutate", "open_drawer"}

// id draws a string that the id rule accepts: 1 to 40 bytes of UTF-8.
func id() *rapid.Generator[string] { return rapid.StringN(1, 12, 40) }

// text draws any valid UTF-8 string of up to 40 bytes, "" included.
func text() *rapid.Generator[string] { return rapid.StringN(0, 12, 40) }

// jsonValue draws the compact, strict JSON text of a value nested at most
// depth levels.
func jsonValue(depth int) *rapid.Generator[json.RawMessage] {
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		b, err := json.Marshal(drawValue(t, depth))
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		return b
	})
}

func drawValue(t *rapid.T, depth int) any {
	kinds := 4
	if depth > 0 {
		kinds = 6
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return rapid.Int64Range(-1<<53+1, 1<<53-1).Draw(t, "int")
	case 3:
		return text().Draw(t, "string")
	case 4:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		out := make([]any, n)
		for i := range out {
			out[i] = drawValue(t, depth-1)
		}
		return out
	}
	m := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "members") {
		m[text().Draw(t, "name")] = drawValue(t, depth-1)
	}
	return m
}

// usage draws a legacy usage whose members are each present or not.
func usage(t *rapid.T) *Usage {
	if rapid.Bool().Draw(t, "no usage") {
		return nil
	}
	u := &Usage{}
	if rapid.Bool().Draw(t, "tokens") {
		n := float64(rapid.Int64Range(0, 1<<53-1).Draw(t, "totalTokens"))
		u.TotalTokens = &n
	}
	if rapid.Bool().Draw(t, "cost") {
		f := rapid.Float64Range(0, 1e6).Draw(t, "costUsd")
		u.CostUSD = &f
	}
	return u
}

// card draws an open card the version-1 card rules accept.
func card(t *rapid.T) cards.OpenCardSnapshot {
	c := cards.OpenCardSnapshot{
		CorrelationID: id().Draw(t, "correlationId"),
		CreatedAt:     rapid.Int64Range(1, 1<<53-1).Draw(t, "createdAt"),
	}
	c.Prompt = id().Draw(t, "prompt")
	c.AllowDecline = rapid.Bool().Draw(t, "allowDecline")
	c.TimeoutMs = rapid.Int64Range(0, 1<<40).Draw(t, "timeoutMs")
	c.FallbackText = text().Draw(t, "fallbackText")
	switch rapid.IntRange(0, 2).Draw(t, "presentation") {
	case 1:
		c.Presentation = &cards.CardPresentation{Kind: cards.CardKindText, Placeholder: text().Draw(t, "placeholder"), Multiline: rapid.Bool().Draw(t, "multiline")}
	case 2:
		p := &cards.CardPresentation{Kind: cards.CardKindRadio, VoiceAnswerable: rapid.Bool().Draw(t, "voice")}
		for i := range rapid.IntRange(1, 3).Draw(t, "options") {
			p.Options = append(p.Options, cards.CardOption{
				ID: "o" + strconv.Itoa(i), Label: id().Draw(t, "label"), Hint: text().Draw(t, "hint"),
				Style: rapid.SampledFrom([]cards.CardOptionStyle{"", "default", "primary", "danger"}).Draw(t, "style"),
			})
		}
		c.Presentation = p
	}
	return c
}

// appEvent draws a frame of one of the registered product types.
func appEvent(t *rapid.T) *AppFrame {
	typ := rapid.SampledFrom(productTypes).Draw(t, "product")
	m := map[string]any{"type": typ}
	for range rapid.IntRange(0, 3).Draw(t, "members") {
		name := text().Draw(t, "name")
		if name != "type" {
			m[name] = drawValue(t, 2)
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return &AppFrame{Type: typ, Raw: raw}
}

// goodFrame draws a frame of dialect d that has a version-1 form: its
// upgrade succeeds with a StreamHost that registers productTypes.
func goodFrame(d Dialect) *rapid.Generator[Frame] {
	return rapid.Custom(func(t *rapid.T) Frame {
		shared := []func() Frame{
			func() Frame { return &SessionFrame{SessionID: id().Draw(t, "sessionId")} },
			func() Frame {
				v1 := card(t)
				c, err := cardV0(&v1)
				require.NoError(t, err)
				return &CardFrame{Card: *c}
			},
			func() Frame {
				return &CardClosedFrame{CorrelationID: id().Draw(t, "correlationId")}
			},
			func() Frame {
				return &StateFrame{Version: float64(rapid.Int64Range(0, 1<<53-1).Draw(t, "version")), Snapshot: jsonValue(2).Draw(t, "snapshot")}
			},
			func() Frame { return &DoneFrame{Usage: usage(t)} },
			func() Frame { return &ErrorFrame{Message: text().Draw(t, "message")} },
			func() Frame { return &NavigateFrame{Href: id().Draw(t, "href")} },
			func() Frame { return appEvent(t) },
		}
		optID := func() string {
			if rapid.Bool().Draw(t, "own call id") {
				return id().Draw(t, "callId")
			}
			return ""
		}
		optRaw := func(name string) json.RawMessage {
			if rapid.Bool().Draw(t, name+"?") {
				return jsonValue(2).Draw(t, name)
			}
			return nil
		}
		var own []func() Frame
		if d == Scout {
			own = []func() Frame{
				func() Frame { return &TokenFrame{Content: text().Draw(t, "content")} },
				func() Frame { return &ToolStartFrame{Tool: id().Draw(t, "tool"), CallID: present(optID())} },
			}
		} else {
			own = []func() Frame{
				func() Frame { return &DeltaFrame{Text: text().Draw(t, "text")} },
				func() Frame {
					return &ToolCallFrame{CallID: optID(), Name: id().Draw(t, "name"), Input: optRaw("input")}
				},
				func() Frame {
					status := rapid.SampledFrom([]chatprotocol.ToolResultStatus{chatprotocol.ToolResultOK, chatprotocol.ToolResultError, chatprotocol.ToolResultCancelled}).Draw(t, "status")
					return &ToolResultFrame{CallID: id().Draw(t, "callId"), Status: status, Output: optRaw("output")}
				},
			}
		}
		all := append(shared, own...)
		return all[rapid.IntRange(0, len(all)-1).Draw(t, "type")]()
	})
}

// withCallID returns f with callID in place of its absent call id.
func withCallID(f Frame, callID string) Frame {
	switch f := f.(type) {
	case *ToolStartFrame:
		if f.CallID == nil {
			g := *f
			g.CallID = &callID
			return &g
		}
	case *ToolCallFrame:
		if f.CallID == "" {
			g := *f
			g.CallID = callID
			return &g
		}
	}
	return f
}

// TestPropertyRoundTrip: every generated legacy frame with a legacy form
// is written, read back as itself, upgraded, and encoded back to itself;
// a tool start without a call id comes back with the host's id, and the
// lifecycle failed that follows an error has no legacy form.
func TestPropertyRoundTrip(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		t.Run(d.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				f := goodFrame(d).Draw(t, "frame")
				data, err := MarshalChatEvent(f)
				require.NoError(t, err)
				read, err := DecodeLegacyChatFrame(data, d)
				require.NoError(t, err, "%s", data)
				require.Equal(t, f, read, "%s", data)

				h := NewStreamHost(&StreamHostOptions{ConversationID: "c", Registry: products(t)})
				envs, err := UpgradeLegacyChatFrame(context.Background(), read, h)
				require.NoError(t, err, "%s", data)
				back, err := EncodeLegacyChatFrame(envs[0], d)
				require.NoError(t, err)
				assert.Equal(t, withCallID(f, "turn-1-call-1"), back)

				_, isError := f.(*ErrorFrame)
				if !isError {
					require.Len(t, envs, 1)
					return
				}
				require.Len(t, envs, 2)
				assert.Equal(t, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleFailed}, envs[1].Event)
				_, err = EncodeLegacyChatFrame(envs[1], d)
				assert.ErrorIs(t, err, refusal.ErrUnsupportedEvent)
			})
		})
	}
}

// TestPropertyReplayIsDeterministic: upgrading a stream again with a new
// StreamHost of the same options gives byte-identical envelopes, also
// when a reconnect replayed only a prefix first; so the same tool start
// of the same turn keeps its call id.
func TestPropertyReplayIsDeterministic(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		t.Run(d.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				frames := rapid.SliceOfN(goodFrame(d), 1, 20).Draw(t, "frames")
				opts := StreamHostOptions{ConversationID: "c", TurnID: id().Draw(t, "turn"), Registry: products(t)}
				run := func(frames []Frame) []string {
					h := NewStreamHost(&opts)
					out := []string{}
					for _, f := range frames {
						envs, err := UpgradeLegacyChatFrame(context.Background(), f, h)
						require.NoError(t, err)
						for _, env := range envs {
							b, err := env.MarshalJSON()
							require.NoError(t, err)
							out = append(out, string(b))
						}
					}
					return out
				}
				first := run(frames)
				cut := rapid.IntRange(0, len(frames)).Draw(t, "reconnect after")
				prefix := run(frames[:cut])
				again := run(frames)
				assert.Equal(t, first, again)
				assert.Equal(t, first[:len(prefix)], prefix)
			})
		})
	}
}

// badCase is a legacy frame and the code its decode or upgrade must give.
type badCase struct {
	frame Frame
	data  []byte // when set, the frame's bytes instead of MarshalChatEvent's
	code  refusal.Code
}

// badFrame draws a frame of dialect d that has no version-1 form, with the
// code that says why.
func badFrame(d Dialect) *rapid.Generator[badCase] {
	return rapid.Custom(func(t *rapid.T) badCase {
		cases := []func() badCase{
			func() badCase {
				return badCase{&SessionFrame{}, nil, refusal.CodeInvalidEvent}
			},
			func() badCase {
				return badCase{&CardClosedFrame{}, nil, refusal.CodeInvalidEvent}
			},
			func() badCase { return badCase{&NavigateFrame{}, nil, refusal.CodeInvalidEvent} },
			func() badCase {
				return badCase{&StateFrame{Version: float64(rapid.Int64Range(-1<<53+1, -1).Draw(t, "version")), Snapshot: json.RawMessage(`{}`)}, nil, refusal.CodeInvalidEvent}
			},
			func() badCase {
				v1 := card(t)
				c, err := cardV0(&v1)
				require.NoError(t, err)
				c.CreatedAt = 0
				return badCase{&CardFrame{Card: *c}, nil, refusal.CodeInvalidCard}
			},
			func() badCase {
				typ := rapid.StringMatching(`[a-z_]{1,12}`).Filter(func(s string) bool {
					_, defined := vocabulary(d)[s]
					return !defined && !slices.Contains(productTypes, s)
				}).Draw(t, "type")
				return badCase{&AppFrame{Type: typ, Raw: json.RawMessage(`{"type":"` + typ + `"}`)}, nil, refusal.CodeUnsupportedEvent}
			},
			func() badCase {
				good := goodFrame(d).Draw(t, "good")
				data, err := MarshalChatEvent(good)
				if err != nil {
					t.Fatalf("marshal: %v", err)
				}
				data = append([]byte(`{"schemaVersion":`+strconv.Itoa(rapid.IntRange(0, 2).Draw(t, "v"))+`,`), data[1:]...)
				return badCase{good, data, refusal.CodeUnsupportedVersion}
			},
		}
		if d == Scout {
			cases = append(cases, func() badCase {
				return badCase{&ToolStartFrame{Tool: "", CallID: new(id().Draw(t, "callId"))}, nil, refusal.CodeInvalidEvent}
			})
		} else {
			cases = append(cases,
				func() badCase {
					status := rapid.String().Filter(func(s string) bool { return !chatprotocol.ToolResultStatus(s).Valid() }).Draw(t, "status")
					return badCase{&ToolResultFrame{CallID: id().Draw(t, "callId"), Status: chatprotocol.ToolResultStatus(status)}, nil, refusal.CodeUnknownResultStatus}
				},
				func() badCase {
					return badCase{&ToolResultFrame{Status: chatprotocol.ToolResultOK}, nil, refusal.CodeMissingCallID}
				},
				func() badCase {
					return badCase{&ToolCallFrame{CallID: id().Draw(t, "callId")}, nil, refusal.CodeInvalidEvent}
				})
		}
		return cases[rapid.IntRange(0, len(cases)-1).Draw(t, "case")]()
	})
}

// TestPropertyRefusals: a frame without a version-1 form is refused with
// the code that names its fault, and leaves the host's seq untouched.
func TestPropertyRefusals(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		t.Run(d.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				c := badFrame(d).Draw(t, "case")
				data := c.data
				if data == nil {
					var err error
					data, err = MarshalChatEvent(c.frame)
					require.NoError(t, err)
				}
				h := NewStreamHost(&StreamHostOptions{ConversationID: "c", Registry: products(t)})
				f, err := DecodeLegacyChatFrame(data, d)
				if err == nil {
					_, err = UpgradeLegacyChatFrame(context.Background(), f, h)
				}
				require.Error(t, err, "%s", data)
				assert.Equal(t, c.code, refusal.CodeOf(err), "%s: %v", data, err)
				assert.Zero(t, h.Seq())
			})
		})
	}
}

// TestPropertyToolStartsWithoutMapping: with a host that maps nothing,
// exactly the tool starts without a call id are refused, with
// missing-call-id.
func TestPropertyToolStartsWithoutMapping(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.SampledFrom([]Dialect{Scout, Papercusp}).Draw(t, "dialect")
		f := goodFrame(d).Draw(t, "frame")
		h := NewStreamHost(&StreamHostOptions{ConversationID: "c", Registry: products(t), CallID: func(string, int) (string, bool) { return "", false }})
		_, err := UpgradeLegacyChatFrame(context.Background(), f, h)
		if withCallID(f, "x") != f {
			assert.ErrorIs(t, err, refusal.ErrMissingCallID)
			return
		}
		assert.NoError(t, err)
	})
}

// formless draws a version-1 event that has no legacy form in d.
func formless(d Dialect) *rapid.Generator[chatprotocol.Event] {
	return rapid.Custom(func(t *rapid.T) chatprotocol.Event {
		events := []chatprotocol.Event{
			&chatprotocol.LifecycleEvent{Status: rapid.SampledFrom([]chatprotocol.LifecycleStatus{
				chatprotocol.LifecycleStarted, chatprotocol.LifecycleFailed, chatprotocol.LifecycleCancelled,
				chatprotocol.LifecycleInterrupted, chatprotocol.LifecycleNeedsReconciliation,
			}).Draw(t, "status"), Reason: text().Draw(t, "reason")},
			&chatprotocol.ResultEvent{Blocks: []chatprotocol.ResultBlock{{Kind: chatprotocol.ResultBlockText, Text: text().Draw(t, "text")}}},
			&chatprotocol.ProvenanceEvent{Provider: id().Draw(t, "provider"), Model: text().Draw(t, "model")},
			&chatprotocol.CapabilitiesEvent{Capabilities: chatprotocol.ChatCapabilities{ConnectionReplay: rapid.Bool().Draw(t, "replay")}},
		}
		result := &chatprotocol.ToolResultEvent{CallID: id().Draw(t, "callId"), Status: chatprotocol.ToolResultOK}
		if d == Scout {
			events = append(events, result)
		} else {
			result.Blocks = []chatprotocol.ResultBlock{{Kind: chatprotocol.ResultBlockText, Text: "t"}}
			events = append(events, result)
		}
		return rapid.SampledFrom(events).Draw(t, "event")
	})
}

// TestPropertyNoLegacyForm: every event without a legacy form is refused
// with unsupported-event, never encoded into something else.
func TestPropertyNoLegacyForm(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		t.Run(d.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				ev := formless(d).Draw(t, "event")
				env := chatprotocol.ChatEventEnvelope{ConversationID: "c", TurnID: "t", EventID: "e", Seq: 1, Event: ev}
				_, err := env.MarshalJSON()
				require.NoError(t, err, "a valid envelope")
				f, err := EncodeLegacyChatFrame(env, d)
				assert.Nil(t, f)
				assert.ErrorIs(t, err, refusal.ErrUnsupportedEvent)
			})
		})
	}
}

// vocabularyNames are the member names and type names the frames of both
// dialects use, so that random objects reach the deeper rules.
var vocabularyNames = []string{
	"type", "sessionId", "content", "text", "tool", "name", "callId", "input", "status", "output",
	"card", "correlationId", "prompt", "createdAt", "presentation", "kind", "options", "id", "label",
	"version", "snapshot", "usage", "totalTokens", "costUsd", "message", "href", "schemaVersion", "report",
}

var typeNames = append(slices.Concat(FrameTypes(), chatprotocol.EventTypes(), productTypes), "TYPE", "")

// frameObject draws a JSON object made of the vocabulary's names, with a
// type name for "type" most of the time.
func frameObject(t *rapid.T, depth int) map[string]any {
	m := map[string]any{}
	if rapid.IntRange(0, 9).Draw(t, "typed") > 0 {
		m["type"] = rapid.SampledFrom(typeNames).Draw(t, "type")
	}
	for range rapid.IntRange(0, 5).Draw(t, "members") {
		name := rapid.SampledFrom(vocabularyNames).Draw(t, "name")
		switch {
		case depth > 0 && rapid.IntRange(0, 3).Draw(t, "nest") == 0:
			m[name] = frameObject(t, depth-1)
		case name == "status":
			m[name] = rapid.SampledFrom([]any{"ok", "error", "cancelled", "done", "", 1.0, nil}).Draw(t, "status")
		default:
			m[name] = drawValue(t, 1)
		}
	}
	return m
}

// TestPropertyNoPanic: whatever the input, the adapters return a frame,
// envelopes or a refusal with a code of the contract, never panic, and a
// decoded frame is written and read back as itself.
func TestPropertyNoPanic(t *testing.T) {
	codes := refusal.Codes()
	known := func(t *rapid.T, err error) {
		if err != nil && !slices.Contains(codes, refusal.CodeOf(err)) {
			t.Fatalf("refusal without a contract code: %v", err)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		var data []byte
		if rapid.Bool().Draw(t, "bytes") {
			data = rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "data")
		} else {
			var err error
			data, err = json.Marshal(frameObject(t, 2))
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
		}
		exercise(t, data, known)
	})
}

// exercise runs decode, upgrade (with and without a registry and a
// mapping), encode and marshal over data in both dialects; check judges
// every error.
func exercise[T interface{ Fatalf(string, ...any) }](t T, data []byte, check func(T, error)) {
	for _, d := range []Dialect{Scout, Papercusp} {
		f, err := DecodeLegacyChatFrame(data, d)
		check(t, err)
		if err != nil {
			continue
		}
		out, err := MarshalChatEvent(f)
		check(t, err)
		if err == nil {
			again, err := DecodeLegacyChatFrame(out, d)
			if err != nil || !equalFrames(f, again) {
				t.Fatalf("%s: %q is written as %q, which reads back as %#v (%v), not %#v", d, data, out, again, err, f)
			}
		}
		reg, _ := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{"products": chatprotocol.ChannelEvent})
		for _, h := range []Host{
			NewStreamHost(nil),
			NewStreamHost(&StreamHostOptions{ConversationID: "c", Registry: reg}),
			&recordingHost{reg: reg},
		} {
			envs, err := UpgradeLegacyChatFrame(context.Background(), f, h)
			check(t, err)
			for _, env := range envs {
				for _, to := range []Dialect{Scout, Papercusp} {
					g, err := EncodeLegacyChatFrame(env, to)
					check(t, err)
					if err == nil {
						out, err := MarshalChatEvent(g)
						check(t, err)
						if _, err := DecodeLegacyChatFrame(out, to); err != nil {
							t.Fatalf("%s: %q encodes to %s as %q, which does not read back: %v", d, data, to, out, err)
						}
					}
				}
			}
		}
	}
}

// equalFrames compares frames by their JSON, so that raw members compare
// as written.
func equalFrames(a, b Frame) bool {
	x, err1 := MarshalChatEvent(a)
	y, err2 := MarshalChatEvent(b)
	return errors.Join(err1, err2) == nil && string(x) == string(y)
}
