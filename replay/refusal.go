package replay

import (
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// CursorError is Read's refusal of a resume cursor outside the retained
// window (docs/contract.md section 11.2): Cursor below [Bounds.Lower]
// (stale-cursor: the frames after it are no longer retained, the reader
// recovers from history) or above [Bounds.Latest] (cursor-ahead: the reader
// holds a seq the window never had). Bounds are the turn's when refused.
//
// Err is the coded refusal, a [*refusal.Error] of code stale-cursor or
// cursor-ahead, returned by Unwrap: [errors.Is](err,
// [refusal.ErrStaleCursor]) and [refusal.CodeOf](err) see through a
// *CursorError, and errors.AsType[*CursorError](err) gives the bounds.
type CursorError struct {
	Cursor int64
	Bounds Bounds
	Err    error
}

// Error names the cursor, the bounds and the refusal; the text is
// informative only.
func (e *CursorError) Error() string {
	return "replay: cursor " + strconv.FormatInt(e.Cursor, 10) + " outside " + e.Bounds.String() + ": " + errText(e.Err)
}

// Unwrap returns the coded refusal.
func (e *CursorError) Unwrap() error { return e.Err }

// AppendError is Append's refusal of an envelope, with nothing stored
// (docs/contract.md section 11.3). Seq is the refused envelope's seq (0 when
// there is no envelope), Bounds the turn's bounds when refused, so a writer
// that lost track learns where the turn stands.
//
// Err is the coded refusal, returned by Unwrap: foreign-frame,
// sequence-gap, sequence-reordered, turn-terminated, frame-too-large, or the
// envelope's own refusal as ChatEventEnvelope.Validate returns it
// (invalid-envelope, invalid-event, missing-call-id …, with its Path).
type AppendError struct {
	Seq    int64
	Bounds Bounds
	Err    error
}

// Error names the seq, the bounds and the refusal; the text is informative
// only.
func (e *AppendError) Error() string {
	return "replay: append of seq " + strconv.FormatInt(e.Seq, 10) + " at " + e.Bounds.String() + ": " + errText(e.Err)
}

// Unwrap returns the coded refusal.
func (e *AppendError) Unwrap() error { return e.Err }

// String formats the bounds as "(lower, latest]", followed by " ended"
// when the turn has ended; the text is informative only.
func (b Bounds) String() string {
	s := "(" + strconv.FormatInt(b.Lower, 10) + ", " + strconv.FormatInt(b.Latest, 10) + "]"
	if b.Ended {
		s += " ended"
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// refuse builds the coded refusal a window wraps in a *CursorError or an
// *AppendError.
func refuse(code refusal.Code, path, message string) *refusal.Error {
	return &refusal.Error{Code: code, Path: path, Message: message}
}

// CheckCursor applies Read's cursor rule to a turn whose bounds are b
// (docs/contract.md section 11.2): it returns nil when after is within
// [b.Lower, b.Latest], and otherwise a [*CursorError] of code stale-cursor
// (below Lower) or cursor-ahead (above Latest) carrying b and after. Every
// Window implementation refuses with it.
func CheckCursor(b Bounds, after int64) error {
	switch {
	case after < b.Lower:
		return &CursorError{Cursor: after, Bounds: b, Err: refuse(refusal.CodeStaleCursor, "",
			"cursor "+strconv.FormatInt(after, 10)+" is below the retained lower bound "+strconv.FormatInt(b.Lower, 10))}
	case after > b.Latest:
		return &CursorError{Cursor: after, Bounds: b, Err: refuse(refusal.CodeCursorAhead, "",
			"cursor "+strconv.FormatInt(after, 10)+" is beyond the latest seq "+strconv.FormatInt(b.Latest, 10))}
	}
	return nil
}

// CheckAppend applies Append's turn rules to env, an envelope that
// validates, offered as the next frame of key's turn whose bounds are b
// (docs/contract.md sections 7.4 and 11.3). It returns nil when env may be
// stored, and otherwise an [*AppendError] carrying b: foreign-frame
// (/conversationId or /turnId) for an envelope of another conversation or
// turn, sequence-gap (/seq) for a seq above b.Latest+1, sequence-reordered
// (/seq) for one at or below b.Latest (a redelivery of the latest frame
// included: a window stores each seq once), and turn-terminated (/event)
// for anything but a late tool_result once b.Ended. Every Window
// implementation refuses with it, after [EncodeFrame].
func CheckAppend(key Key, b Bounds, env *chatprotocol.ChatEventEnvelope) error {
	var err *refusal.Error
	switch next := b.Latest + 1; {
	case env.ConversationID != key.ConversationID:
		err = refuse(refusal.CodeForeignFrame, "/conversationId", "frame of conversation "+strconv.Quote(env.ConversationID)+" appended to conversation "+strconv.Quote(key.ConversationID))
	case env.TurnID != key.TurnID:
		err = refuse(refusal.CodeForeignFrame, "/turnId", "frame of turn "+strconv.Quote(env.TurnID)+" appended to turn "+strconv.Quote(key.TurnID))
	case env.Seq <= 0 || env.Seq < next:
		err = refuse(refusal.CodeSequenceReordered, "/seq", "seq "+strconv.FormatInt(env.Seq, 10)+" is at or below the latest "+strconv.FormatInt(b.Latest, 10))
	case env.Seq > next:
		err = refuse(refusal.CodeSequenceGap, "/seq", "seq "+strconv.FormatInt(env.Seq, 10)+" follows the latest "+strconv.FormatInt(b.Latest, 10))
	case b.Ended && !isToolResult(env):
		err = refuse(refusal.CodeTurnTerminated, "/event", "the turn has ended; only a late tool_result may follow")
	default:
		return nil
	}
	return &AppendError{Seq: env.Seq, Bounds: b, Err: err}
}

func isToolResult(env *chatprotocol.ChatEventEnvelope) bool {
	_, ok := env.Event.(*chatprotocol.ToolResultEvent)
	return ok
}

// EndsTurn reports whether env ends its turn: a lifecycle event of status
// completed, failed or cancelled (docs/contract.md section 7.4). [Bounds.Ended]
// is true from the first such frame on.
func EndsTurn(env *chatprotocol.ChatEventEnvelope) bool {
	lc, ok := env.Event.(*chatprotocol.LifecycleEvent)
	return ok && lc.Status.Terminal()
}

// EncodeFrame returns the frame env is stored as: its seq, its event type
// and its canonical JSON (ChatEventEnvelope.AppendJSON, in a new slice). It
// refuses, with the coded refusal alone (a window wraps it in an
// [*AppendError] with its bounds): a nil envelope (invalid-envelope), an
// envelope that does not validate (Validate's refusal, code and path), and
// one whose canonical JSON is longer than maxFrameBytes (frame-too-large;
// 0 means [chatprotocol.DefaultMaxFrameBytes], 1 MiB, the reader's default,
// and a negative value no limit), so a frame a reader would refuse never
// reaches the wire (docs/contract.md sections 5.2, 11.3 and 11.5).
func EncodeFrame(env *chatprotocol.ChatEventEnvelope, maxFrameBytes int) (Frame, error) {
	if env == nil {
		return Frame{}, refuse(refusal.CodeInvalidEnvelope, "", "no envelope")
	}
	data, err := env.AppendJSON(nil)
	if err != nil {
		return Frame{}, err
	}
	if limit := frameLimit(maxFrameBytes); limit >= 0 && len(data) > limit {
		return Frame{}, refuse(refusal.CodeFrameTooLarge, "",
			"frame of "+strconv.Itoa(len(data))+" bytes exceeds the limit of "+strconv.Itoa(limit))
	}
	return Frame{Seq: env.Seq, Type: env.Event.EventType(), Data: data}, nil
}

// frameLimit resolves a MaxFrameBytes setting: 0 is the default, a
// negative value (no limit) is returned as -1.
func frameLimit(maxFrameBytes int) int {
	switch {
	case maxFrameBytes == 0:
		return chatprotocol.DefaultMaxFrameBytes
	case maxFrameBytes < 0:
		return -1
	}
	return maxFrameBytes
}

// seqOf is env's seq, 0 without an envelope.
func seqOf(env *chatprotocol.ChatEventEnvelope) int64 {
	if env == nil {
		return 0
	}
	return env.Seq
}
