package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// The host mapping of the provider cases (testdata/README.md): every
// providers/KIND/NAME.sse is read as one turn of this conversation.
const (
	ProviderConversation = "c-1"
	ProviderTurn         = "t-1"
)

// IngestLines reads the provider body of kind through the core reader into
// the envelopes of one turn, one canonical JSON line each, as
// `chatwire ingest` prints them. The error is [ingest.Read]'s (a cut body's
// included), after the lines it produced.
func IngestLines(kind ingest.Kind, body []byte) ([]byte, error) {
	var out []byte
	sink := turnsink.New(ProviderConversation, ProviderTurn, func(env *chatprotocol.ChatEventEnvelope) error {
		var err error
		if out, err = env.AppendJSON(out); err != nil {
			return err
		}
		out = append(out, '\n')
		return nil
	})
	err := ingest.Read(context.Background(), kind, bytes.NewReader(body), sink, &ingest.Options{Conversation: ProviderConversation, Turn: ProviderTurn})
	return out, err
}

// providerKind is the kind of a provider file: the name of its directory.
func providerKind(p string) ingest.Kind { return ingest.Kind(path.Base(path.Dir(p))) }

// runProviderBody checks one provider body against its expected envelopes:
// the lines must be byte for byte the canonical ones of NAME.jsonl. A body
// cut inside a frame must say so (ingest.ErrCut), and any other error fails.
func runProviderBody(dir, bodyPath string, body []byte) error {
	want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(bodyPath, ".sse")+".jsonl")))
	if err != nil {
		return fmt.Errorf("no expected envelopes: %w", err)
	}
	got, err := IngestLines(providerKind(bodyPath), body)
	if err != nil && !errors.Is(err, ingest.ErrCut) {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("envelopes differ\n got: %s\nwant: %s", got, want)
	}
	return nil
}

// writeProvider regenerates the expected envelopes of one provider body and
// the golden state they reduce to.
func writeProvider(dir, bodyPath string) error {
	body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(bodyPath)))
	if err != nil {
		return err
	}
	lines, err := IngestLines(providerKind(bodyPath), body)
	if err != nil && !errors.Is(err, ingest.ErrCut) {
		return fmt.Errorf("%s: %w", bodyPath, err)
	}
	stream := strings.TrimSuffix(bodyPath, ".sse") + ".jsonl"
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(stream)), lines, 0o644); err != nil {
		return err
	}
	return writeGolden(dir, stream)
}
