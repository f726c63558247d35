package interactions_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestChangeCheck covers every change a Store must refuse, and the ones it
// must persist, through the one check stores share.
func TestChangeCheck(t *testing.T) {
	key := interactions.Key{Conversation: "c-1", CorrelationID: "card-1"}
	other := interactions.Key{Conversation: "c-1", CorrelationID: "card-2"}
	cur := &interactions.Record{Key: key, Revision: 4, Status: interactions.StatusPending}
	rec := func(k interactions.Key, rev int64, st interactions.Status) *interactions.Record {
		return &interactions.Record{Key: k, Revision: rev, Status: st}
	}
	tr := func(k interactions.Key, rev int64, st interactions.Status) *interactions.Transition {
		return &interactions.Transition{Key: k, Revision: rev, Status: st}
	}
	cases := []struct {
		name   string
		cur    *interactions.Record
		change interactions.Change
		ok     bool
	}{
		{"read-only", cur, interactions.Change{}, true},
		{"metadata change advances by one", cur, interactions.Change{Next: rec(key, 5, interactions.StatusPending)}, true},
		{"terminal with its transition", cur, interactions.Change{Next: rec(key, 5, interactions.StatusAnswered), Transition: tr(key, 5, interactions.StatusAnswered)}, true},
		{"new record at revision 1", nil, interactions.Change{Next: rec(key, 1, interactions.StatusPending)}, true},
		{"transition without a record", cur, interactions.Change{Transition: tr(key, 5, interactions.StatusAnswered)}, false},
		{"record for another key", cur, interactions.Change{Next: rec(other, 5, interactions.StatusPending)}, false},
		{"revision unchanged", cur, interactions.Change{Next: rec(key, 4, interactions.StatusPending)}, false},
		{"revision skips", cur, interactions.Change{Next: rec(key, 6, interactions.StatusPending)}, false},
		{"new record not at 1", nil, interactions.Change{Next: rec(key, 2, interactions.StatusPending)}, false},
		{"terminal without transition", cur, interactions.Change{Next: rec(key, 5, interactions.StatusCancelled)}, false},
		{"transition on a pending record", cur, interactions.Change{Next: rec(key, 5, interactions.StatusPending), Transition: tr(key, 5, interactions.StatusPending)}, false},
		{"transition of another status", cur, interactions.Change{Next: rec(key, 5, interactions.StatusAnswered), Transition: tr(key, 5, interactions.StatusDeclined)}, false},
		{"transition of another revision", cur, interactions.Change{Next: rec(key, 5, interactions.StatusAnswered), Transition: tr(key, 4, interactions.StatusAnswered)}, false},
		{"transition of another key", cur, interactions.Change{Next: rec(key, 5, interactions.StatusAnswered), Transition: tr(other, 5, interactions.StatusAnswered)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.change.Check(key, c.cur)
			if c.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
			assert.Equal(t, refusal.CodeCheckpointWriteFailed, refusal.CodeOf(err))
		})
	}
}
