package replay_test

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/replay"
)

var benchKey = replay.Key{ConversationID: "conv-bench", TurnID: "turn-bench"}

func benchDelta(seq int64) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: benchKey.ConversationID, TurnID: benchKey.TurnID,
		EventID: "evt-bench", Seq: seq, Event: &chatprotocol.DeltaEvent{Text: "a typical delta of a few words, "}}
}

// BenchmarkAppend: one delta appended to a turn, against encoding it
// alone (encode-only), the cost no window avoids. Past 10,000 frames
// each append also trims the oldest.
func BenchmarkAppend(b *testing.B) {
	b.Run("encode-only", func(b *testing.B) {
		env := benchDelta(1)
		b.ReportAllocs()
		meter := benchcpu.Start()
		for b.Loop() {
			env.Seq++
			if _, err := env.AppendJSON(nil); err != nil {
				b.Fatal(err)
			}
		}
		meter.Report(b, 0)
	})
	b.Run("memory", func(b *testing.B) {
		m := replay.NewMemory(nil)
		env := benchDelta(0)
		ctx := context.Background()
		b.ReportAllocs()
		meter := benchcpu.Start()
		for b.Loop() {
			env.Seq++
			if _, err := m.Append(ctx, benchKey, env); err != nil {
				b.Fatal(err)
			}
		}
		meter.Report(b, 0)
	})
}

// BenchmarkRead100: Read of the 100-frame suffix of a 1,000-frame turn,
// against copying 100 frame headers (clone-only), what Read must do.
func BenchmarkRead100(b *testing.B) {
	m := replay.NewMemory(nil)
	ctx := context.Background()
	for seq := int64(1); seq <= 1000; seq++ {
		if _, err := m.Append(ctx, benchKey, benchDelta(seq)); err != nil {
			b.Fatal(err)
		}
	}
	_, suffix, err := m.Read(ctx, benchKey, 900, math.MaxInt)
	if err != nil || len(suffix) != 100 {
		b.Fatal(len(suffix), err)
	}
	b.Run("clone-only", func(b *testing.B) {
		b.ReportAllocs()
		meter := benchcpu.Start()
		for b.Loop() {
			_ = slices.Clone(suffix)
		}
		meter.Report(b, 0)
	})
	b.Run("memory", func(b *testing.B) {
		b.ReportAllocs()
		meter := benchcpu.Start()
		for b.Loop() {
			if _, frames, err := m.Read(ctx, benchKey, 900, math.MaxInt); err != nil || len(frames) != 100 {
				b.Fatal(len(frames), err)
			}
		}
		meter.Report(b, 0)
	})
}

// BenchmarkFanOut: one writer, 1,000 readers following one turn with the
// reader loop; an op is one frame appended and received by every reader.
// The baseline (broadcast-only) is the floor of any such window: a bare
// channel closed and replaced per frame, readers loading a counter.
func BenchmarkFanOut(b *testing.B) {
	const readers = 1000
	b.Run("broadcast-only", func(b *testing.B) {
		var (
			mu     sync.Mutex
			ch     = make(chan struct{})
			latest int64
			got    sync.WaitGroup
			done   sync.WaitGroup
		)
		current := func() (int64, chan struct{}) {
			mu.Lock()
			defer mu.Unlock()
			return latest, ch
		}
		for range readers {
			done.Go(func() {
				var c int64
				for {
					l, wake := current()
					if l == ^int64(0) {
						return
					}
					for ; c < l; c++ {
						got.Done()
					}
					<-wake
				}
			})
		}
		publish := func(l int64) {
			mu.Lock()
			latest = l
			close(ch)
			ch = make(chan struct{})
			mu.Unlock()
		}
		b.ReportAllocs()
		var n int64
		meter := benchcpu.Start()
		for b.Loop() {
			got.Add(readers)
			n++
			publish(n)
			got.Wait()
		}
		meter.Report(b, 0)
		reportDeliveries(b, readers)
		publish(^int64(0))
		done.Wait()
	})
	b.Run("memory", func(b *testing.B) {
		m := replay.NewMemory(&replay.MemoryOptions{MaxFrames: -1, MaxBytes: -1})
		ctx := context.Background()
		var got, done sync.WaitGroup
		for range readers {
			done.Go(func() {
				var c int64
				for {
					bounds, frames, err := m.Read(ctx, benchKey, c, math.MaxInt)
					if err != nil {
						b.Error(err)
						return
					}
					for _, f := range frames {
						c = f.Seq
						got.Done()
					}
					if bounds.Ended {
						return
					}
					if _, err := m.Wait(ctx, benchKey, c); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		b.ReportAllocs()
		var seq int64
		meter := benchcpu.Start()
		for b.Loop() {
			got.Add(readers)
			seq++
			if _, err := m.Append(ctx, benchKey, benchDelta(seq)); err != nil {
				b.Fatal(err)
			}
			got.Wait()
		}
		meter.Report(b, 0)
		reportDeliveries(b, readers)
		got.Add(readers)
		end := benchDelta(seq + 1)
		end.Event = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
		if _, err := m.Append(ctx, benchKey, end); err != nil {
			b.Fatal(err)
		}
		done.Wait()
	})
}

// reportDeliveries reports frames delivered per second: readers per op.
func reportDeliveries(b *testing.B, readers int) {
	b.ReportMetric(float64(readers)*float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
