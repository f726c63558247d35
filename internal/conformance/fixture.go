package conformance

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Fixture is one case file of fixtures/ (schema: schemas/fixture.schema.json).
// Kind selects the function under test and which input members apply:
//
//   - "envelope": Frame (exact UTF-8 text) or FrameBase64 (any bytes) is
//     read by an EnvelopeParser with Options; accept expects Envelope, the
//     JSON the accepted envelope marshals to (compared as JSON values).
//   - "version": Version is the raw JSON text given to NegotiateChatVersion,
//     absent for a missing version; accept expects Expect.Version.
//   - "capabilities": Declared is read by ParseChatCapabilities and Wanted
//     required of it; a refusal may list Expect.Missing.
//   - "state": Frames are parsed (with Options) and applied in order to a
//     fresh ChatStateV1; reject names the 1-based Expect.Frame that is
//     refused (every earlier one applies), accept may give Expect.State.
type Fixture struct {
	Description string         `json:"description"`
	Kind        string         `json:"kind"`
	Options     *Options       `json:"options,omitzero"`
	Frame       *string        `json:"frame,omitzero"`
	FrameBase64 *string        `json:"frameBase64,omitzero"`
	Frames      []string       `json:"frames,omitzero"`
	Version     *string        `json:"version,omitzero"`
	Declared    jsontext.Value `json:"declared,omitzero"`
	Wanted      []string       `json:"wanted,omitzero"`
	Expect      Expectation    `json:"expect"`
}

// Options configures the parser of an envelope or state fixture: the
// ParserOptions limits, the host's product types with their channel
// ("event", "state" or "transient"), and the registered events of
// docs/contract.md section 6.5 the host opts into ("reasoning", "source").
type Options struct {
	MaxFrameBytes int               `json:"maxFrameBytes,omitzero"`
	MaxDepth      int               `json:"maxDepth,omitzero"`
	Registry      map[string]string `json:"registry,omitzero"`
	Registered    []string          `json:"registered,omitzero"`
}

// Expectation is what a fixture expects. Outcome is "accept" or "reject".
// A refusal has its Code and, when the case pins it, its Path (a JSON
// pointer; absent means not checked).
type Expectation struct {
	Outcome  string         `json:"outcome"`
	Code     string         `json:"code,omitzero"`
	Path     *string        `json:"path,omitzero"`
	Frame    int            `json:"frame,omitzero"`
	Missing  []string       `json:"missing,omitzero"`
	Envelope jsontext.Value `json:"envelope,omitzero"`
	Version  *int           `json:"version,omitzero"`
	State    jsontext.Value `json:"state,omitzero"`
}

// decodeFixture reads a fixture file strictly (see decodeCase).
func decodeFixture(data []byte) (Fixture, error) { return decodeCase[Fixture](data) }

// decodeCase reads a fixture or a legacy case strictly: unknown or
// duplicated members are errors, so a misspelt expectation cannot pass
// silently, and the expected outcome must be accept or reject.
func decodeCase[T interface{ brief() (string, *Expectation) }](data []byte) (T, error) {
	var c T
	if err := json.Unmarshal(data, &c, json.RejectUnknownMembers(true)); err != nil {
		return c, err
	}
	if _, x := c.brief(); x.Outcome != "accept" && x.Outcome != "reject" {
		return c, fmt.Errorf("expect.outcome %q is neither accept nor reject", x.Outcome)
	}
	return c, nil
}

// brief returns the fixture's kind and expectation, for the manifest.
func (f Fixture) brief() (string, *Expectation) { return f.Kind, &f.Expect }

// runFixture executes one fixture and returns nil when it meets its
// expectation.
func runFixture(data []byte) error {
	f, err := decodeFixture(data)
	if err != nil {
		return fmt.Errorf("unreadable fixture: %w", err)
	}
	switch f.Kind {
	case "envelope":
		return f.runEnvelope()
	case "version":
		return f.runVersion()
	case "capabilities":
		return f.runCapabilities()
	case "state":
		return f.runState()
	}
	return fmt.Errorf("no runner for kind %q", f.Kind)
}

func (f *Fixture) parser() (*chatprotocol.EnvelopeParser, error) {
	var opts chatprotocol.ParserOptions
	if f.Options != nil {
		opts.MaxFrameBytes, opts.MaxDepth = f.Options.MaxFrameBytes, f.Options.MaxDepth
		reg, err := registry(f.Options.Registry, f.Options.Registered...)
		if err != nil {
			return nil, fmt.Errorf("options.registry: %w", err)
		}
		opts.Registry = reg
	}
	return chatprotocol.NewEnvelopeParser(&opts), nil
}

// registry builds the Registry of a case's product types, each named with
// its channel ("event", "state" or "transient"), and of the registered
// events it names; nil for none.
func registry(types map[string]string, registered ...string) (*chatprotocol.Registry, error) {
	if types == nil && registered == nil {
		return nil, nil
	}
	var opts []chatprotocol.RegistryOption
	for _, t := range registered {
		switch t {
		case chatprotocol.EventTypeReasoning:
			opts = append(opts, chatprotocol.WithReasoning())
		case chatprotocol.EventTypeSource:
			opts = append(opts, chatprotocol.WithSources())
		default:
			return nil, fmt.Errorf("%q is no registered event", t)
		}
	}
	channels := map[string]chatprotocol.Channel{}
	for t, name := range types {
		ch, ok := channelNamed(name)
		if !ok {
			return nil, fmt.Errorf("unknown channel %q", name)
		}
		channels[t] = ch
	}
	return chatprotocol.NewRegistry(channels, opts...)
}

func channelNamed(name string) (chatprotocol.Channel, bool) {
	for _, ch := range []chatprotocol.Channel{chatprotocol.ChannelEvent, chatprotocol.ChannelState, chatprotocol.ChannelTransient} {
		if ch.String() == name {
			return ch, true
		}
	}
	return 0, false
}

func (f *Fixture) frameBytes() ([]byte, error) {
	switch {
	case f.Frame != nil && f.FrameBase64 == nil:
		return []byte(*f.Frame), nil
	case f.FrameBase64 != nil && f.Frame == nil:
		return base64.StdEncoding.DecodeString(*f.FrameBase64)
	}
	return nil, errors.New("an envelope fixture has exactly one of frame and frameBase64")
}

func (f *Fixture) runEnvelope() error {
	p, err := f.parser()
	if err != nil {
		return err
	}
	data, err := f.frameBytes()
	if err != nil {
		return err
	}
	env, err := p.Parse(data)
	if err != nil {
		return f.Expect.refusal(err)
	}
	if f.Expect.Outcome != "accept" {
		return fmt.Errorf("accepted, want %s", f.Expect.brief())
	}
	got, err := env.MarshalJSON()
	if err != nil {
		return fmt.Errorf("accepted but does not marshal: %w", err)
	}
	return sameJSON("envelope", got, f.Expect.Envelope)
}

func (f *Fixture) runVersion() error {
	var raw []byte
	if f.Version != nil {
		raw = []byte(*f.Version)
	}
	v, err := chatprotocol.NegotiateChatVersion(raw)
	if err != nil {
		return f.Expect.refusal(err)
	}
	if f.Expect.Outcome != "accept" {
		return fmt.Errorf("accepted version %d, want %s", v, f.Expect.brief())
	}
	if f.Expect.Version == nil || int(v) != *f.Expect.Version {
		return fmt.Errorf("negotiated version %d, want %v", v, f.Expect.Version)
	}
	return nil
}

func (f *Fixture) runCapabilities() error {
	declared, err := chatprotocol.ParseChatCapabilities(f.Declared)
	if err != nil {
		return f.Expect.refusal(err)
	}
	wanted := make([]chatprotocol.Capability, len(f.Wanted))
	for i, w := range f.Wanted {
		wanted[i] = chatprotocol.Capability(w)
	}
	err = chatprotocol.RequireChatCapabilities(&declared, wanted...)
	if err != nil {
		if err := f.Expect.refusal(err); err != nil {
			return err
		}
		if f.Expect.Missing != nil {
			m, _ := errors.AsType[*chatprotocol.MissingCapabilitiesError](err)
			var got []string
			if m != nil {
				for _, c := range m.Missing {
					got = append(got, string(c))
				}
			}
			if !slices.Equal(got, f.Expect.Missing) {
				return fmt.Errorf("missing capabilities %q, want %q", got, f.Expect.Missing)
			}
		}
		return nil
	}
	if f.Expect.Outcome != "accept" {
		return fmt.Errorf("accepted, want %s", f.Expect.brief())
	}
	return nil
}

func (f *Fixture) runState() error {
	p, err := f.parser()
	if err != nil {
		return err
	}
	var s chatprotocol.ChatStateV1
	for i, fr := range f.Frames {
		n := i + 1
		env, err := p.Parse([]byte(fr))
		if err == nil {
			err = s.Apply(env)
		}
		if err != nil {
			if f.Expect.Outcome != "reject" {
				return fmt.Errorf("frame %d refused: %v", n, err)
			}
			if n != f.Expect.Frame {
				return fmt.Errorf("frame %d refused (%v), want frame %d refused", n, err, f.Expect.Frame)
			}
			return f.Expect.refusal(err)
		}
	}
	if f.Expect.Outcome != "accept" {
		return fmt.Errorf("every frame applied, want frame %d refused with %s", f.Expect.Frame, f.Expect.brief())
	}
	if f.Expect.State == nil {
		return nil
	}
	got, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	return sameJSON("state", got, f.Expect.State)
}

// refusal checks a refusal against the expectation.
func (e *Expectation) refusal(err error) error {
	if e.Outcome != "reject" {
		return fmt.Errorf("refused (%v), want accept", err)
	}
	ce, ok := errors.AsType[*refusal.Error](err)
	if !ok {
		return fmt.Errorf("refused with %v, which is not a *refusal.Error", err)
	}
	if string(ce.Code) != e.Code {
		return fmt.Errorf("refused with code %s (%v), want %s", ce.Code, err, e.Code)
	}
	if e.Path != nil && ce.Path != *e.Path {
		return fmt.Errorf("refused at path %q (%v), want %q", ce.Path, err, *e.Path)
	}
	return nil
}

func (e *Expectation) brief() string {
	if e.Outcome == "reject" {
		return "reject with " + e.Code
	}
	return e.Outcome
}

// sameJSON compares two JSON values by their RFC 8785 canonical forms.
func sameJSON(what string, got, want jsontext.Value) error {
	if want == nil {
		return fmt.Errorf("accept without an expected %s", what)
	}
	g, w := got.Clone(), want.Clone()
	if err := g.Canonicalize(); err != nil {
		return fmt.Errorf("%s output is not strict JSON: %w", what, err)
	}
	if err := w.Canonicalize(); err != nil {
		return fmt.Errorf("expected %s is not strict JSON: %w", what, err)
	}
	if string(g) != string(w) {
		return fmt.Errorf("%s differs:\n\tgot  %s\n\twant %s", what, g, w)
	}
	return nil
}
