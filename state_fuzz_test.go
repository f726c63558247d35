package chatprotocol

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzApply feeds sequences of frames (one per line) through ParseEnvelope
// and Apply. It checks that nothing panics, that a refused envelope leaves
// the state unchanged, that an applied one sets its turn's last seq, and
// that the state always marshals to strict JSON.
func FuzzApply(f *testing.F) {
	frames := conformanceFrames(f)
	for i := range frames {
		end := min(i+6, len(frames))
		f.Add(bytes.Join(frames[i:end], []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s ChatStateV1
		before, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			env, err := ParseEnvelope(line)
			if err != nil {
				continue
			}
			err = s.Apply(env)
			after, merr := s.MarshalJSON()
			if merr != nil || !jsontext.Value(after).IsValid() {
				t.Fatalf("state does not marshal to strict JSON: %v %q", merr, after)
			}
			if err != nil {
				if _, ok := errorsAsError(err); !ok {
					t.Fatalf("refusal %v is not an *Error", err)
				}
				if !bytes.Equal(before, after) {
					t.Fatalf("refused %q (%v) but the state changed", line, err)
				}
				continue
			}
			turn, ok := s.Turn(env.TurnID)
			if !ok || turn.LastSeq < env.Seq {
				t.Fatalf("applied seq %d but the turn's last seq is %v", env.Seq, turn)
			}
			before = after
		}
	})
}
