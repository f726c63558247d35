package replay

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// modelTurn is the model of one turn: everything appended, in order.
type modelTurn struct {
	data  [][]byte
	ended bool
}

// TestMemoryAgainstAModel drives a Memory retaining keep frames per turn
// with random appends, right and wrong, reads at random cursors and Waits
// that must return, over keys that share turn ids across conversations,
// and compares every answer with a model that keeps everything.
func TestMemoryAgainstAModel(t *testing.T) {
	keys := []Key{{"c1", "t1"}, {"c1", "t2"}, {"c2", "t1"}}
	rapid.Check(t, func(rt *rapid.T) {
		keep := rapid.IntRange(1, 6).Draw(rt, "keep")
		m := NewMemory(&MemoryOptions{MaxFrames: keep, MaxAge: -1, EndedTTL: -1})
		model := make(map[Key]*modelTurn)
		for _, k := range keys {
			model[k] = &modelTurn{}
		}
		boundsOf := func(k Key) Bounds {
			mt := model[k]
			latest := int64(len(mt.data))
			return Bounds{Lower: latest - min(latest, int64(keep)), Latest: latest, Ended: mt.ended}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				mt := model[k]
				seq := int64(len(mt.data)) + 1
				if rapid.IntRange(0, 4).Draw(rt, "wrongSeq") == 0 {
					seq = rapid.Int64Range(1, seq+3).Draw(rt, "seq")
				}
				env := delta(k, seq, rapid.StringOf(rapid.RuneFrom([]rune("ab\"\n\x01é😀"))).Draw(rt, "text"))
				switch rapid.IntRange(0, 5).Draw(rt, "kind") {
				case 0:
					env.Event = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
				case 1:
					env.Event = &chatprotocol.ToolResultEvent{CallID: "x", Status: chatprotocol.ToolResultOK}
				}
				f, err := m.Append(rt.Context(), k, env)
				var want refusal.Code
				_, isResult := env.Event.(*chatprotocol.ToolResultEvent)
				switch next := int64(len(mt.data)) + 1; {
				case seq < next:
					want = refusal.CodeSequenceReordered
				case seq > next:
					want = refusal.CodeSequenceGap
				case mt.ended && !isResult:
					want = refusal.CodeTurnTerminated
				}
				if refusal.CodeOf(err) != want {
					rt.Fatalf("Append seq %d to %v at %v: %v, want %v", seq, k, boundsOf(k), err, want)
				}
				if err != nil {
					if ae, ok := errors.AsType[*AppendError](err); !ok || ae.Bounds != boundsOf(k) {
						rt.Fatalf("refusal %v without the bounds %v", err, boundsOf(k))
					}
					return
				}
				data, _ := env.AppendJSON(nil)
				if !bytes.Equal(f.Data, data) {
					rt.Fatalf("Append stored %s, want %s", f.Data, data)
				}
				mt.data = append(mt.data, data)
				mt.ended = mt.ended || EndsTurn(env)
			},
			"read": func(rt *rapid.T) {
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				want := boundsOf(k)
				after := rapid.Int64Range(0, want.Latest+2).Draw(rt, "after")
				limit := rapid.SampledFrom([]int{0, 1, 200, 1000, math.MaxInt}).Draw(rt, "limit")
				b, frames, err := m.Read(rt.Context(), k, after, limit)
				if b != want {
					rt.Fatalf("Read %v: bounds %v, want %v", k, b, want)
				}
				var wantCode refusal.Code
				switch {
				case after < want.Lower:
					wantCode = refusal.CodeStaleCursor
				case after > want.Latest:
					wantCode = refusal.CodeCursorAhead
				}
				if refusal.CodeOf(err) != wantCode {
					rt.Fatalf("Read %v after %d: %v, want %q", k, after, err, wantCode)
				}
				if err != nil {
					return
				}
				all := model[k].data
				wantN := 0 // the longest page within limit, at least one frame
				for size := 0; int(after)+wantN < len(all); wantN++ {
					size += len(all[int(after)+wantN])
					if wantN > 0 && size > limit {
						break
					}
				}
				if len(frames) != wantN {
					rt.Fatalf("Read %v after %d, limit %d: %d frames, want %d", k, after, limit, len(frames), wantN)
				}
				for i, f := range frames {
					if f.Seq != after+1+int64(i) || !bytes.Equal(f.Data, all[int(after)+i]) {
						rt.Fatalf("Read %v after %d: frame %d is seq %d %s", k, after, i, f.Seq, f.Data)
					}
				}
			},
			"bounds": func(rt *rapid.T) {
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				if b, err := m.Bounds(rt.Context(), k); err != nil || b != boundsOf(k) {
					rt.Fatalf("Bounds %v: %v, %v; want %v", k, b, err, boundsOf(k))
				}
			},
			"wait": func(rt *rapid.T) {
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				want := boundsOf(k)
				if want.Latest == 0 && !want.Ended {
					return // it would block
				}
				after := rapid.Int64Range(0, want.Latest).Draw(rt, "after")
				if after == want.Latest && !want.Ended {
					return
				}
				if b, err := m.Wait(rt.Context(), k, after); err != nil || b != want {
					rt.Fatalf("Wait %v after %d: %v, %v; want %v at once", k, after, b, err, want)
				}
			},
		})
	})
}
