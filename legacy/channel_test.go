package legacy

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

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestFrameTypesEachInOneChannel enumerates the union and proves every
// type sits in exactly one channel, as docs/contract.md section 2
// partitions them.
func TestFrameTypesEachInOneChannel(t *testing.T) {
	want := map[string]chatprotocol.Channel{
		"session": chatprotocol.ChannelEvent, "token": chatprotocol.ChannelEvent, "tool_start": chatprotocol.ChannelEvent,
		"done": chatprotocol.ChannelEvent, "error": chatprotocol.ChannelEvent,
		"card": chatprotocol.ChannelState, "card_closed": chatprotocol.ChannelState, "state": chatprotocol.ChannelState,
		"navigate": chatprotocol.ChannelTransient,
	}
	types := FrameTypes()
	require.Len(t, types, len(want))
	seen := map[string]bool{}
	for _, typ := range types {
		require.False(t, seen[typ], "%s listed twice", typ)
		seen[typ] = true
		c, ok := FrameChannel(typ)
		require.True(t, ok, typ)
		assert.Equal(t, want[typ], c, typ)
		in := 0
		for _, member := range []bool{IsReplayableFrame(typ), IsStateFrame(typ), c == chatprotocol.ChannelTransient} {
			if member {
				in++
			}
		}
		assert.Equal(t, 1, in, "%s must be in exactly one channel", typ)
	}
}

// TestEveryTypeConstantIsInTheUnion reads frame.go and fails when a Type*
// constant is missing from FrameTypes, other than the three Papercusp
// types, so a new type of the union cannot be added without a channel.
func TestEveryTypeConstantIsInTheUnion(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "frame.go", nil, 0)
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, typ := range FrameTypes() {
		listed[typ] = true
	}
	papercusp := map[string]bool{TypeDelta: true, TypeToolCall: true, TypeToolResult: true}
	found := 0
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Type") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, name.Name)
				value, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				if papercusp[value] {
					continue
				}
				found++
				assert.True(t, listed[value], "%s = %q is not in FrameTypes", name.Name, value)
			}
		}
	}
	assert.Equal(t, len(listed), found)
}

func TestUnknownTypesHaveNoChannel(t *testing.T) {
	for _, typ := range []string{"", "products", "cart_mutate", "TOKEN", "token ", "delta", "tool_call", "tool_result", "lifecycle", "navigateſ"} {
		_, ok := FrameChannel(typ)
		assert.False(t, ok, typ)
		assert.False(t, IsReplayableFrame(typ), typ)
		assert.False(t, IsStateFrame(typ), typ)
	}
}

// TestChannelParity checks the channel lines of the reference's case file.
func TestChannelParity(t *testing.T) {
	f, err := os.Open("../testdata/blocks-parity.jsonl")
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
		assert.Equal(t, c.Want.State, IsStateFrame(c.Input), c.Input)
		assert.Equal(t, c.Want.Replayable, IsReplayableFrame(c.Input), c.Input)
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 9, n)
}

// TestRegistryRefusesEveryFrameType: no host can register a type of the
// union as a product type, whether version 1 has it (session, card …) or
// only the adapters map it (token, tool_start, done), so an upgraded stream
// never has two meanings for one type.
func TestRegistryRefusesEveryFrameType(t *testing.T) {
	for _, typ := range FrameTypes() {
		_, err := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{typ: chatprotocol.ChannelEvent})
		assert.ErrorIs(t, err, refusal.ErrUnsupportedEvent, typ)
	}
}
