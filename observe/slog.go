package observe

import (
	"context"
	"log/slog"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The keys of [NewSlog]'s records; the package documentation's table says when
// each is present.
const (
	KeyEvent        = "event"
	KeyConversation = "conversation"
	KeyTurn         = "turn"
	KeyEffect       = "effect"
	KeyCard         = "card"
	KeyStatus       = "status"
	KeyCode         = "code"
	KeyCursor       = "cursor"
	KeyLower        = "lower"
	KeyLatest       = "latest"
	KeySeq          = "seq"
	KeyCount        = "count"
	KeyDuration     = "duration"
	KeyErr          = "err"
	KeyProvider     = "provider"
	KeyModel        = "model"
	KeyResponseID   = "response_id"
	KeyInputTokens  = "input_tokens"
	KeyOutputTokens = "output_tokens"
)

// NewSlog returns an Observer that writes one record per event to l: the
// message and the "event" attribute are the Kind, the other attributes the
// stable keys of the package documentation, at the level the documentation
// gives. It returns nil (silent) for a nil l. A record is built only when l
// is enabled for its level.
func NewSlog(l *slog.Logger) Observer {
	if l == nil {
		return nil
	}
	return slogObserver{l: l}
}

type slogObserver struct{ l *slog.Logger }

// numeric fields a kind reports, as a bit set.
const (
	withCursor = 1 << iota // cursor, lower, latest
	withSeq
	withCount
)

// fieldsOf returns the numeric fields reported for k.
func fieldsOf(k Kind) int {
	switch k {
	case ReplayServe:
		return withCursor | withCount
	case ReplayRefuse, StreamRefuse:
		return withCursor
	case StreamResume:
		return withCursor
	case StreamWrite:
		return withSeq | withCount
	case StreamDeliver, StreamEnd, StreamDrop:
		return withSeq | withCount
	case TurnAbort:
		return withCount
	}
	return 0
}

// LevelOf is the level [NewSlog] writes e at: Error for an outcome an
// operator must act on (needs-reconciliation, store-unavailable,
// checkpoint-write-failed, or an error without a code), Warn for any other
// refusal but duplicate-answer and for stream.drop, Debug for the routine
// moments (effect.claim, effect.admit, answer.submit, stream.connect,
// stream.resume, stream.write, stream.deliver, replay.serve), Info
// otherwise.
func LevelOf(e Event) slog.Level {
	switch e.Code {
	case refusal.CodeNeedsReconciliation, refusal.CodeStoreUnavailable, refusal.CodeCheckpointWriteFailed:
		return slog.LevelError
	case "", refusal.CodeDuplicateAnswer:
	default:
		return slog.LevelWarn
	}
	if e.Err != nil && e.Code == "" {
		return slog.LevelError
	}
	switch e.Kind {
	case StreamDrop:
		return slog.LevelWarn
	case EffectClaim, EffectAdmit, AnswerSubmit, StreamConnect, StreamResume, StreamWrite, StreamDeliver, ReplayServe:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// startKey is the context key of a stamp: the kind and time of a start.
type startKey struct{}

type stamp struct {
	kind Kind
	at   time.Time
}

func (o slogObserver) Observe(ctx context.Context, e Event) context.Context {
	level := LevelOf(e)
	var since time.Duration
	timed := false
	switch e.Phase {
	case Start:
		ends := slog.LevelInfo
		if e.Kind == StreamWrite {
			ends = slog.LevelDebug
		}
		if o.l.Enabled(ctx, ends) {
			ctx = context.WithValue(ctx, startKey{}, stamp{e.Kind, time.Now()})
		}
	case End:
		// An unstamped start may sit inside a stamped one: only the
		// stamp of this end's own start kind counts.
		if s, ok := ctx.Value(startKey{}).(stamp); ok && s.kind == StartOf(e.Kind) {
			since, timed = time.Since(s.at), true
		}
	}
	if !o.l.Enabled(ctx, level) {
		return ctx
	}
	var buf [19]slog.Attr
	a := append(buf[:0], slog.String(KeyEvent, string(e.Kind)))
	a = appendString(a, KeyConversation, e.Conversation)
	a = appendString(a, KeyTurn, e.Turn)
	a = appendString(a, KeyEffect, e.Effect)
	a = appendString(a, KeyCard, e.Card)
	a = appendString(a, KeyStatus, e.Status)
	a = appendString(a, KeyCode, string(e.Code))
	f := fieldsOf(e.Kind)
	if f&withCursor != 0 {
		a = append(a, slog.Int64(KeyCursor, e.Cursor), slog.Int64(KeyLower, e.Lower), slog.Int64(KeyLatest, e.Latest))
	}
	if f&withSeq != 0 {
		a = append(a, slog.Int64(KeySeq, e.Seq))
	}
	if f&withCount != 0 {
		a = append(a, slog.Int(KeyCount, e.Count))
	}
	if e.Kind == ModelResponse {
		a = appendString(a, KeyProvider, e.Provider)
		a = appendString(a, KeyModel, e.ResponseModel)
		a = appendString(a, KeyResponseID, e.ResponseID)
		if e.InputTokens >= 0 {
			a = append(a, slog.Int64(KeyInputTokens, e.InputTokens))
		}
		if e.OutputTokens >= 0 {
			a = append(a, slog.Int64(KeyOutputTokens, e.OutputTokens))
		}
	}
	if timed {
		a = append(a, slog.Duration(KeyDuration, since))
	}
	if e.Err != nil {
		a = append(a, slog.String(KeyErr, e.Err.Error()))
	}
	o.l.LogAttrs(ctx, level, string(e.Kind), a...)
	return ctx
}

func appendString(a []slog.Attr, key, v string) []slog.Attr {
	if v == "" {
		return a
	}
	return append(a, slog.String(key, v))
}
