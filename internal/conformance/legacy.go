package conformance

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// LegacyCase is one case of legacy/ (schema: schemas/legacy.schema.json),
// a quadruple of legacy frames, host mapping, and expected envelopes or
// refusal (docs/contract.md section 9). Kind selects the direction:
//
//   - "upgrade": Frames, texts of Dialect, are decoded with
//     [legacy.DecodeLegacyChatFrame] and upgraded in order with
//     [legacy.UpgradeLegacyChatFrame] by one [legacy.StreamHost] built from
//     Host. Accept expects Expect.Envelopes, every frame's envelopes in
//     order; reject names the 1-based Expect.Frame refused (every earlier
//     one upgrades), its code and, when pinned, its path into that frame.
//   - "encode": Envelope is parsed with Host.Registry's product types and
//     encoded with [legacy.EncodeLegacyChatFrame] to Dialect; accept expects
//     Expect.Frame, the legacy frame as a JSON value.
//   - "parse": the one frame of Frames is read with [legacy.ParseChatEvent]
//     (tolerant, docs/contract.md section 2.4) and written back with
//     [legacy.MarshalChatEvent]. Expect.Parsed says what the read gives: a
//     "typed" frame of the union, an "app" frame (of the frame's own type,
//     for a product type or a union frame its type does not accept), or
//     "none"; for typed and app, Expect.Frame is what is written back, as a
//     JSON value (presence of every member included).
type LegacyCase struct {
	Description string         `json:"description"`
	Kind        string         `json:"kind"`
	Dialect     string         `json:"dialect"`
	Host        *LegacyHost    `json:"host,omitzero"`
	Frames      []string       `json:"frames,omitzero"`
	Envelope    *string        `json:"envelope,omitzero"`
	Expect      LegacyExpected `json:"expect"`
}

// LegacyHost is the host mapping of a case, the StreamHostOptions of a
// [legacy.StreamHost]: ConversationID ("" for the session frame's), TurnID
// ("" for turn-1), CallIDs (absent for TURN-call-N; otherwise the N-th tool
// start without a call id gets CallIDs[N-1], and none beyond), and the
// product types of Registry with their channels.
type LegacyHost struct {
	ConversationID string            `json:"conversationId,omitzero"`
	TurnID         string            `json:"turnId,omitzero"`
	CallIDs        *[]string         `json:"callIds,omitzero"`
	Registry       map[string]string `json:"registry,omitzero"`
}

// LegacyExpected is what a legacy case expects. Frame is the 1-based
// index of the refused frame of an upgrade (a JSON number), or the legacy
// frame an encode gives (a JSON object).
type LegacyExpected struct {
	Outcome   string           `json:"outcome"`
	Code      string           `json:"code,omitzero"`
	Path      *string          `json:"path,omitzero"`
	Frame     jsontext.Value   `json:"frame,omitzero"`
	Envelopes []jsontext.Value `json:"envelopes,omitzero"`
	Parsed    string           `json:"parsed,omitzero"`
}

// decodeLegacyCase reads a legacy case strictly (see decodeCase).
func decodeLegacyCase(data []byte) (LegacyCase, error) { return decodeCase[LegacyCase](data) }

// expectation returns the refusal part of the case's expectation.
func (c *LegacyCase) expectation() *Expectation {
	return &Expectation{Outcome: c.Expect.Outcome, Code: c.Expect.Code, Path: c.Expect.Path}
}

// brief returns the case's kind and expectation, for the manifest.
func (c LegacyCase) brief() (string, *Expectation) { return c.Kind, c.expectation() }

// runLegacy executes one legacy case and returns nil when it meets its
// expectation.
func runLegacy(data []byte) error {
	c, err := decodeLegacyCase(data)
	if err != nil {
		return fmt.Errorf("unreadable legacy case: %w", err)
	}
	d, ok := legacy.ParseDialect(c.Dialect)
	if !ok {
		return fmt.Errorf("unknown dialect %q", c.Dialect)
	}
	var h LegacyHost
	if c.Host != nil {
		h = *c.Host
	}
	reg, err := registry(h.Registry)
	if err != nil {
		return fmt.Errorf("host.registry: %w", err)
	}
	switch c.Kind {
	case "upgrade":
		return c.runUpgrade(d, h, reg)
	case "encode":
		return c.runEncode(d, reg)
	case "parse":
		return c.runParse()
	}
	return fmt.Errorf("no runner for kind %q", c.Kind)
}

func (c *LegacyCase) runUpgrade(d legacy.Dialect, h LegacyHost, reg *chatprotocol.Registry) error {
	opts := &legacy.StreamHostOptions{ConversationID: h.ConversationID, TurnID: h.TurnID, Registry: reg}
	if h.CallIDs != nil {
		ids := *h.CallIDs
		opts.CallID = func(_ string, n int) (string, bool) {
			if n > len(ids) {
				return "", false
			}
			return ids[n-1], true
		}
	}
	host := legacy.NewStreamHost(opts)
	var got []jsontext.Value
	for i, text := range c.Frames {
		n := i + 1
		f, err := legacy.DecodeLegacyChatFrame([]byte(text), d)
		var envs []chatprotocol.ChatEventEnvelope
		if err == nil {
			envs, err = legacy.UpgradeLegacyChatFrame(context.Background(), f, host) // a StreamHost: no I/O to cancel
		}
		if err != nil {
			if c.Expect.Outcome != "reject" {
				return fmt.Errorf("frame %d refused: %v", n, err)
			}
			if want := c.refusedFrame(); n != want {
				return fmt.Errorf("frame %d refused (%v), want frame %d refused", n, err, want)
			}
			return c.expectation().refusal(err)
		}
		for _, env := range envs {
			b, err := env.MarshalJSON()
			if err != nil {
				return fmt.Errorf("frame %d: an upgraded envelope does not marshal: %w", n, err)
			}
			got = append(got, b)
		}
	}
	if c.Expect.Outcome != "accept" {
		return fmt.Errorf("every frame upgraded, want frame %d refused with %s", c.refusedFrame(), c.expectation().brief())
	}
	if len(got) != len(c.Expect.Envelopes) {
		return fmt.Errorf("%d envelopes, want %d", len(got), len(c.Expect.Envelopes))
	}
	for i := range got {
		if err := sameJSON(fmt.Sprintf("envelope %d", i+1), got[i], c.Expect.Envelopes[i]); err != nil {
			return err
		}
	}
	return nil
}

// refusedFrame returns expect.frame of a refused upgrade, 0 when it is not
// a number.
func (c *LegacyCase) refusedFrame() int {
	var n int
	if json.Unmarshal(c.Expect.Frame, &n) != nil {
		return 0
	}
	return n
}

func (c *LegacyCase) runEncode(d legacy.Dialect, reg *chatprotocol.Registry) error {
	if c.Envelope == nil {
		return errors.New("an encode case has an envelope")
	}
	env, err := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: reg}).Parse([]byte(*c.Envelope))
	if err != nil {
		return fmt.Errorf("the envelope does not parse: %w", err)
	}
	f, err := legacy.EncodeLegacyChatFrame(env, d)
	if err != nil {
		return c.expectation().refusal(err)
	}
	if c.Expect.Outcome != "accept" {
		return fmt.Errorf("encoded, want %s", c.expectation().brief())
	}
	got, err := legacy.MarshalChatEvent(f)
	if err != nil {
		return fmt.Errorf("the legacy frame does not marshal: %w", err)
	}
	return sameJSON("legacy frame", got, c.Expect.Frame)
}

func (c *LegacyCase) runParse() error {
	if len(c.Frames) != 1 {
		return errors.New("a parse case has one frame")
	}
	f := legacy.ParseChatEvent([]byte(c.Frames[0]))
	got := "typed"
	switch a := f.(type) {
	case nil:
		got = "none"
	case *legacy.AppFrame:
		got = "app"
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(c.Frames[0]), &head); err != nil || head.Type != a.Type {
			return fmt.Errorf("app frame of type %q, not the frame's own", a.Type)
		}
	}
	if got != c.Expect.Parsed {
		return fmt.Errorf("read as %s, want %s", got, c.Expect.Parsed)
	}
	if f == nil {
		return nil
	}
	out, err := legacy.MarshalChatEvent(f)
	if err != nil {
		return fmt.Errorf("the frame read does not marshal: %w", err)
	}
	return sameJSON("frame written back", out, c.Expect.Frame)
}
