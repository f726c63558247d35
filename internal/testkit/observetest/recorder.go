// Package observetest records what an acting package reports to an
// [observe.Observer], and checks the start/end hand-off: every end arrives on
// the context its start returned, and every start ends exactly once.
package observetest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/Papercusp/chat-protocol-go/internal/notify"
	"github.com/Papercusp/chat-protocol-go/observe"
)

// Recorded is one event as the Recorder saw it: the event, and Span, the
// number of the start whose context it arrived on (0 for none; a start's
// own Span is its number).
type Recorded struct {
	observe.Event
	Span int
}

// Recorder is an [observe.Observer] that keeps every event. It is safe for
// concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Recorded
	starts int                  // starts so far: the last span number
	open   map[int]observe.Kind // starts not yet ended
	faults []string
	moved  notify.Signal // broadcast at each event
}

type spanKey struct{}

var _ observe.Observer = (*Recorder)(nil)

// Observe records e and, for a start, returns a context naming it.
func (r *Recorder) Observe(ctx context.Context, e observe.Event) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open == nil {
		r.open = map[int]observe.Kind{}
	}
	parent, _ := ctx.Value(spanKey{}).(int)
	rec := Recorded{Event: e, Span: parent}
	switch e.Phase {
	case observe.Start:
		r.starts++
		rec.Span = r.starts
		r.open[rec.Span] = e.Kind
		ctx = context.WithValue(ctx, spanKey{}, rec.Span)
	case observe.End:
		if _, ok := r.open[parent]; !ok {
			r.faults = append(r.faults, fmt.Sprintf("%s ends no open start (context of start %d)", e.Kind, parent))
		}
		delete(r.open, parent)
	}
	r.events = append(r.events, rec)
	r.moved.Broadcast()
	return ctx
}

// Await waits until done holds for the events recorded so far, or ctx ends
// (it then returns ctx's error).
func (r *Recorder) Await(ctx context.Context, done func([]Recorded) bool) error {
	return r.moved.Wait(ctx, &r.mu, func() bool { return done(r.events) })
}

// Ends returns the kinds of the ends among events other than
// stream.deliver: how the streams, effects and answers ended.
func Ends(events []Recorded) []observe.Kind {
	var ends []observe.Kind
	for _, e := range events {
		if e.Phase == observe.End && e.Kind != observe.StreamDeliver {
			ends = append(ends, e.Kind)
		}
	}
	return ends
}

// Events returns a copy of the events recorded so far, in order.
func (r *Recorder) Events() []Recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Kinds returns the kinds recorded so far, in order.
func (r *Recorder) Kinds() []observe.Kind {
	var kinds []observe.Kind
	for _, e := range r.Events() {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// Reset forgets every event; starts still open stay open.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

// Faults returns what broke the hand-off: an end on a context without an
// open start, and every start still open.
func (r *Recorder) Faults() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	faults := slices.Clone(r.faults)
	for span, kind := range r.open {
		faults = append(faults, fmt.Sprintf("%s (start %d) never ended", kind, span))
	}
	slices.Sort(faults)
	return faults
}
