package chatprotocol

import (
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestEventSpecsDescribeEveryEventType(t *testing.T) {
	require.Len(t, eventSpecs, 14)
	for _, s := range eventSpecs {
		ev, ok := reflect.New(s.obj.typ).Interface().(Event)
		require.True(t, ok, "%v is an Event", s.obj.typ)
		assert.Equal(t, s.typ, ev.EventType())
		assert.Equal(t, "type", s.obj.names[0], "%s: type is the first member name", s.typ)
		assert.Len(t, s.obj.names, len(s.obj.members)+1)
		assert.Less(t, len(s.obj.members), 32, "presence is a 32-bit set")
	}
}

// TestKeptMembersOfNestedObjectsAreRefusedAtTheirPath: a kept member that
// shadows a known one is refused at its own pointer, inside the nested
// object that holds it.
func TestKeptMembersOfNestedObjectsAreRefusedAtTheirPath(t *testing.T) {
	n := int64(3)
	shadow := []Member{{Name: "TotalTokens", Value: json.RawMessage(`1`)}}
	_, err := appendEvent(nil, &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &n, Unknown: shadow}}, "/event")
	require.Error(t, err)
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	assert.Equal(t, "/event/usage/TotalTokens", err.(*refusal.Error).Path)

	caps := []Member{{Name: "PERSISTEDHISTORY", Value: json.RawMessage(`true`)}}
	_, err = appendEvent(nil, &CapabilitiesEvent{Capabilities: ChatCapabilities{Unknown: caps}}, "/event")
	require.Error(t, err)
	assert.Equal(t, "/event/capabilities/PERSISTEDHISTORY", err.(*refusal.Error).Path)
}

// TestListOfStringsIsWrittenAsTheBlockWritesItself: the walk writes an
// ask block's refs as the block's own MarshalJSON does, and refuses a ref
// that is not valid UTF-8 at its pointer.
func TestListOfStringsIsWrittenAsTheBlockWritesItself(t *testing.T) {
	a := blocks.AskBlock{Question: "Which?", Options: []blocks.AskOption{{ID: "a", Label: "A"}}, Refs: []string{"doc:1", "doc:<2>"}}
	w := writer{}
	w.punct('{')
	w.members(askSpec, unsafe.Pointer(&a), "/ask")
	w.punct('}')
	require.NoError(t, w.err)
	want, err := a.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, string(want), string(w.dst))

	a.Refs[1] = "\xff"
	for _, check := range []bool{false, true} {
		w = writer{check: check}
		w.members(askSpec, unsafe.Pointer(&a), "/ask")
		require.Error(t, w.err)
		assert.Equal(t, "/ask/refs/1", w.err.(*refusal.Error).Path)
	}
}
