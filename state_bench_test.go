package chatprotocol

import (
	"io"
	"strconv"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
)

// benchTokens returns n delta envelopes of one turn, seqs 1..n, with the
// texts a legacy token stream carries (some with characters JSON escapes,
// some outside ASCII).
func benchTokens(n int) []ChatEventEnvelope {
	texts := []string{"Size 43 is", " in stock", " and ships within \"two\" days", " naïve 👟", "\nreturn it\tfor a full refund"}
	envs := make([]ChatEventEnvelope, n)
	for i := range envs {
		envs[i] = ChatEventEnvelope{ConversationID: "gen-1", TurnID: "turn-1", EventID: "e-" + strconv.Itoa(i+1), Seq: int64(i + 1), Event: &DeltaEvent{Text: texts[i%len(texts)]}}
	}
	return envs
}

// BenchmarkEnvelopeCheck measures, per delta envelope, what checking costs
// (Validate), beside encoding it (AppendJSON) and applying it to a state
// (Apply, which also hashes its digest form).
func BenchmarkEnvelopeCheck(b *testing.B) {
	envs := benchTokens(1000)
	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchcpu.Start()
		for i := 0; b.Loop(); i++ {
			if err := envs[i%len(envs)].Validate(); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b, 0)
	})
	b.Run("append_json", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchcpu.Start()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			var err error
			if buf, err = envs[i%len(envs)].AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b, 0)
	})
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchcpu.Start()
		s := NewChatStateV1("gen-1")
		for i := 0; b.Loop(); i++ {
			if i%len(envs) == 0 {
				s = NewChatStateV1("gen-1")
			}
			if err := s.Apply(envs[i%len(envs)]); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report(b, 0)
	})
}

// cardEnvelopes returns 2n envelopes of one turn: n card events opening
// cards k-1 … k-n, then their card_closed events, in opening order (the
// order that shifted every remaining card when open cards were a slice).
func cardEnvelopes(n int) []ChatEventEnvelope {
	envs := make([]ChatEventEnvelope, 0, 2*n)
	for i := range n {
		card := cards.OpenCardSnapshot{CorrelationID: "k-" + strconv.Itoa(i+1), CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "Ship it?"}}
		envs = append(envs, ChatEventEnvelope{ConversationID: "gen-1", TurnID: "turn-1", EventID: "e-" + strconv.Itoa(len(envs)+1), Seq: int64(len(envs) + 1), Event: &CardEvent{Card: card}})
	}
	for i := range n {
		envs = append(envs, ChatEventEnvelope{ConversationID: "gen-1", TurnID: "turn-1", EventID: "e-" + strconv.Itoa(len(envs)+1), Seq: int64(len(envs) + 1), Event: &CardClosedEvent{CorrelationID: "k-" + strconv.Itoa(i+1)}})
	}
	return envs
}

// BenchmarkOpenCards applies n card events and then the n card_closed
// events that close them, for n from 1,000 to 40,000, and reports the time
// per card (one open and one close): flat in n when opening and closing a
// card cost the same whatever the number of open cards.
func BenchmarkOpenCards(b *testing.B) {
	for _, n := range []int{1000, 10000, 40000} {
		envs := cardEnvelopes(n)
		b.Run("cards="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := NewChatStateV1("gen-1")
				for i := range envs {
					if err := s.Apply(envs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/card")
		})
	}
}

// BenchmarkStateJSON writes the JSON form of a state with three turns of
// 8 MiB of text each, whole (MarshalJSON) and streamed to io.Discard
// (WriteJSON): B/op shows what each holds in memory.
func BenchmarkStateJSON(b *testing.B) {
	s := longState(b, 8<<20)
	size := 0
	if js, err := s.MarshalJSON(); err == nil {
		size = len(js)
	}
	b.Run("marshal_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			if _, err := s.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("write_json", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			if err := s.WriteJSON(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
