package ingest

import (
	"context"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The members of the version-1 event a buffer's bytes would fill, the
// paths of its refusal.
const (
	pathInput   = "/event/input"   // a tool call's arguments
	pathMessage = "/event/message" // the refusal text
)

// buffer appends text to *dst, bytes the reader holds across frames,
// unless *dst would pass [Options.MaxBufferedBytes]: then it records the
// refusal (path names the member) that ends the turn, and keeps nothing
// more.
func (m *Mapper) buffer(dst *[]byte, text []byte, path string) {
	if m.over != nil {
		return
	}
	limit := m.opts.MaxBufferedBytes
	if limit <= 0 {
		limit = DefaultMaxBufferedBytes
	}
	if len(*dst)+len(text) > limit {
		m.over = refusal.New(refusal.CodeFrameTooLarge, path, "the provider's stream holds more than "+strconv.Itoa(limit)+" bytes for one member")
		return
	}
	*dst = append(*dst, text...)
}

// overflow fails the turn whose buffer passed its bound, with
// [CodeInvalidStream], and returns the refusal, or the Sink's error.
func (m *Mapper) overflow(ctx context.Context) error {
	if m.done {
		return m.over
	}
	what := "a tool call's arguments"
	if m.over.Path == pathMessage {
		what = "the refusal"
	}
	if err := m.fail(ctx, CodeInvalidStream, what+" in the provider's stream passed the reader's bound: "+m.over.Message); err != nil {
		return err
	}
	return m.over
}
