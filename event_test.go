package chatprotocol

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChatEventTypesEachInOneChannel enumerates the union and proves every
// type sits in exactly one channel, as contract-v1.md section 2 partitions
// them.
func TestChatEventTypesEachInOneChannel(t *testing.T) {
	want := map[string]Channel{
		"session": ChannelEvent, "token": ChannelEvent, "tool_start": ChannelEvent,
		"done": ChannelEvent, "error": ChannelEvent,
		"card": ChannelState, "card_closed": ChannelState, "state": ChannelState,
		"navigate": ChannelTransient,
	}
	types := ChatEventTypes()
	require.Len(t, types, len(want))
	seen := map[string]bool{}
	for _, typ := range types {
		require.False(t, seen[typ], "%s listed twice", typ)
		seen[typ] = true
		c, ok := ChatEventChannel(typ)
		require.True(t, ok, typ)
		assert.Equal(t, want[typ], c, typ)
		in := 0
		for _, member := range []bool{IsReplayable(typ), IsStateChannelEvent(typ), c == ChannelTransient} {
			if member {
				in++
			}
		}
		assert.Equal(t, 1, in, "%s must be in exactly one channel", typ)
	}
}

// TestEveryTypeConstantIsInTheUnion reads event.go and fails when a
// ChatEvent* type-name constant is missing from ChatEventTypes, so a new
// type cannot be added without a channel.
func TestEveryTypeConstantIsInTheUnion(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, typ := range ChatEventTypes() {
		listed[typ] = true
	}
	found := 0
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "ChatEvent") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, name.Name)
				value, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				found++
				assert.True(t, listed[value], "%s = %q is not in ChatEventTypes", name.Name, value)
			}
		}
	}
	assert.Equal(t, len(listed), found)
}

func TestUnknownTypesHaveNoChannel(t *testing.T) {
	for _, typ := range []string{"", "products", "cart_mutate", "TOKEN", "token ", "delta", "tool_call", "lifecycle", "navigateſ"} {
		_, ok := ChatEventChannel(typ)
		assert.False(t, ok, typ)
		assert.False(t, IsReplayable(typ), typ)
		assert.False(t, IsStateChannelEvent(typ), typ)
	}
}

// TestChannelParity checks the channel lines of the reference's case file.
func TestChannelParity(t *testing.T) {
	f, err := os.Open("testdata/blocks-parity.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct {
			Fn    string `json:"fn"`
			Input string `json:"input"`
			Want  struct {
				State      bool `json:"state"`
				Replayable bool `json:"replayable"`
			} `json:"want"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		if c.Fn != "channel" {
			continue
		}
		n++
		assert.Equal(t, c.Want.State, IsStateChannelEvent(c.Input), c.Input)
		assert.Equal(t, c.Want.Replayable, IsReplayable(c.Input), c.Input)
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 9, n)
}
