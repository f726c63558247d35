// Package replay holds replay windows: what a host serves a turn's stream
// from, so that a reader who connects late or reconnects gets every frame
// of the turn exactly once (docs/contract.md section 11).
//
// # Windows
//
// A [Window] keeps, per turn (a [Key]: conversation and turn id), the
// turn's envelopes in seq order as [Frame] values, lets one writer append
// the next one ([Window.Append]), and lets any number of readers read the
// retained suffix after a cursor ([Window.Read]) and wait for what comes
// next ([Window.Wait]). [Memory] is the in-memory window; a window outside
// the process (PostgreSQL) implements the same interface, and package
// replaytest's TestWindow is the conformance kit every window passes.
//
// # Bounds are cursors
//
// A cursor is the seq of the last frame a reader holds: 0 before the first
// (docs/contract.md sections 11.1 and 11.2). [Bounds] reports, also for a
// turn holding no frame, Lower, the smallest cursor the window can resume
// from, Latest, the seq of the latest frame, and Ended. A Read after a
// cursor in [Lower, Latest] returns the suffix, page by page, with no gap;
// a cursor below Lower is refused as stale-cursor, one above Latest as
// cursor-ahead, both as a [*CursorError] carrying the bounds; a cursor
// equal to Latest returns nothing. A turn never appended to is (0, 0).
// [Window.Bounds] reads them alone, and never refuses.
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
// called, and Read hands out each seq once after c: the hand-off from
// replay to live has neither gap nor duplicate. A late tool_result may
// follow the end; a reader that wants it keeps waiting.
//
// # Appending, bytes, retention
//
// [Window.Append] takes an envelope only as its turn's next frame and
// otherwise stores nothing, refusing with an [*AppendError] carrying the
// bounds (section 11.3); [CheckCursor], [CheckAppend], [EncodeFrame] and
// [EndsTurn] are these rules, for implementations to share. A frame is
// stored as its canonical JSON and handed to every reader as is, never
// parsed again (section 11.5): [Frame.Data] is shared and nobody may modify
// it. Retention drops a turn's oldest frames first and moves Lower, never
// opening a gap (section 11.4); [Memory] bounds each turn by frames, bytes
// and age and keeps an ended turn a while ([MemoryOptions.EndedTTL]). A
// writer unsure whether an Append landed reads [Window.Bounds]: Latest
// tells. [SplitDelta] cuts a long text into deltas that fit the frame limit.
//
// # Capabilities
//
// A window decides what a host may declare (docs/contract.md sections 8
// and 11.7). [Memory] serves reconnects within one process and keeps
// nothing across a restart: it is the lightweight profile,
// connectionReplay true and the other capabilities false
// ([Memory.Capabilities]). A window in a database may add persistedHistory;
// none implies interruptedTurnRecovery, which is package recovery's.
package replay
