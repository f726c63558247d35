// Package replay holds replay windows: what a host serves a turn's stream
// from, so that a reader who connects late or reconnects gets every frame
// of the turn exactly once (docs/contract.md section 11).
//
// # Windows
//
// A Window keeps, per turn (a Key: conversation and turn id), the turn's
// envelopes in seq order as Frames, lets one writer Append the next one,
// and lets any number of readers Read the retained suffix after a cursor
// and Wait for what comes next. Memory is the in-memory window; a window
// outside the process (PostgreSQL) implements the same interface, and
// replaytest.TestWindow is the conformance kit every window passes.
//
// # Bounds are cursors
//
// A cursor is the seq of the last frame a reader holds: 0 before the first
// (docs/contract.md sections 11.1 and 11.2).
// Bounds reports, also for a turn holding no frame, Lower, the smallest
// cursor the window can resume from, Latest, the seq of the latest frame,
// and Ended. Frames Lower+1 through Latest are all retained, so a Read
// after a cursor in [Lower, Latest] returns the suffix, page by page, with
// no gap; a cursor below Lower is refused as stale-cursor (the reader must
// recover from history, when the host has it), one above Latest as
// cursor-ahead, both as a *CursorError carrying the bounds; a cursor equal
// to Latest returns nothing. A turn never appended to is (0, 0). Bounds
// reads them alone, and never refuses.
//
// # The reader loop
//
// A reader follows a turn from cursor c (0, or the Last-Event-ID it
// reconnects with) by (docs/contract.md section 11.6)
//
//	for {
//		bounds, frames, err := w.Read(ctx, key, c, replay.DefaultPageBytes) // a page of the suffix after c
//		if err != nil {
//			return err // stale-cursor, cursor-ahead, or ctx
//		}
//		for _, f := range frames {
//			send(f) // f.Data as the SSE data, f.Seq as its id, f.Type as its event
//			c = f.Seq
//		}
//		if bounds.Ended && c == bounds.Latest {
//			return nil
//		}
//		if c < bounds.Latest {
//			continue // the next page
//		}
//		if _, err := w.Wait(ctx, key, c); err != nil {
//			return err
//		}
//	}
//
// Wait returns at once when a frame after c was appended before it was
// called, so a frame appended between the Read and the Wait is never lost,
// and Read hands out each seq once after c, so none is sent twice: the
// hand-off from replay to live has neither gap nor duplicate. A late
// tool_result may follow the end; a reader that wants it keeps waiting.
//
// # Appending
//
// Append refuses (docs/contract.md section 11.3), with an *AppendError
// carrying the bounds and nothing stored: an envelope of another conversation or turn (foreign-frame), a
// seq other than Latest+1 (sequence-gap, sequence-reordered: a redelivery
// included), anything but a late tool_result after the end
// (turn-terminated), an envelope that does not validate (its Validate
// refusal), and one whose canonical JSON is longer than the window's frame
// limit (frame-too-large). The limit is the reader's,
// ParserOptions.MaxFrameBytes, 1 MiB by default on both sides, so a frame a reader would
// refuse never reaches the wire; SplitDelta cuts a long text into deltas
// that fit. A writer unsure whether an Append landed (a window outside the
// process, a lost acknowledgement) reads the bounds: Latest tells.
// CheckCursor, CheckAppend, EncodeFrame and EndsTurn are these rules, for
// implementations of Window to share.
//
// # Canonical bytes, resent unparsed
//
// A window stores each envelope's canonical JSON
// (ChatEventEnvelope.AppendJSON, docs/contract.md sections 5.4 and 11.5) and hands the same bytes to every reader, which sends them as
// they are. The frame is encoded, and so validated, once when appended,
// never parsed or encoded again per reader: replay costs no more than a
// copy, every reader receives byte-identical frames, and the bytes a
// reconnecting reader gets are those the first reader got. Frame.Data is
// shared: nobody may modify it.
//
// # Retention
//
// A window retains a suffix of each turn and says which (docs/contract.md
// section 11.4): retention drops a
// turn's oldest frames first and moves Lower up to the seq of the oldest
// retained minus one, never leaving a hole. Memory bounds each turn by
// frames, bytes and age, and the turns it holds; it keeps an ended turn for
// a while (MemoryOptions.EndedTTL) so that a reader reconnecting after the
// end replays it and sees Ended, and then remembers its bounds as a small
// tombstone.
//
// # Capabilities
//
// A window decides what a host may declare (docs/contract.md sections 8 and 11.7).
// Memory serves reconnects within one process and keeps nothing across a
// restart: it is the lightweight profile, connectionReplay true and
// persistedHistory, persistedDecisions, completedToolCheckpoints and
// interruptedTurnRecovery false (Memory.Capabilities). A window in a
// database may add persistedHistory; none implies interruptedTurnRecovery,
// which is recovery's business.
package replay
