package ingest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// FuzzRead: whatever the body, of any kind, Read never panics, ends the turn
// exactly once with a terminal lifecycle, and every envelope it makes is one
// a ChatStateV1 applies.
func FuzzRead(f *testing.F) {
	for i, k := range ingest.Kinds() {
		paths, _ := filepath.Glob(filepath.Join(providers, string(k), "*.sse"))
		for _, p := range paths {
			if body, err := os.ReadFile(p); err == nil {
				f.Add(uint8(i), body)
			}
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		k := ingest.Kinds()[int(kind)%3]
		state := chatprotocol.NewChatStateV1("c")
		var terminals int
		sink := turnsink.New("c", "t", func(env *chatprotocol.ChatEventEnvelope) error {
			if l, ok := env.Event.(*chatprotocol.LifecycleEvent); ok && l.Status.Terminal() {
				terminals++
			}
			return state.Apply(*env)
		})
		err := ingest.Read(context.Background(), k, bytes.NewReader(body), sink, &ingest.Options{MaxFrameBytes: 1 << 16})
		if err != nil && terminals == 0 {
			t.Fatalf("Read returned %v without ending the turn", err)
		}
		if terminals != 1 {
			t.Fatalf("%d terminal lifecycles", terminals)
		}
	})
}
