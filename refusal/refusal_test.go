package refusal_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every code constant has exactly one sentinel constant Err<Name> =
// Sentinel(Code<Name>), and Codes lists every code once.
func TestEveryCodeHasItsSentinel(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	require.NoError(t, err)
	codes, sentinels := map[string]bool{}, map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			name := vs.Names[0].Name
			switch {
			case strings.HasPrefix(name, "Code"):
				codes[name] = true
			case strings.HasPrefix(name, "Err"):
				call, ok := vs.Values[0].(*ast.CallExpr)
				require.True(t, ok, "%s is Sentinel(CodeX)", name)
				sentinels[name] = call.Args[0].(*ast.Ident).Name
			}
		}
	}
	require.Len(t, sentinels, len(codes))
	for name, code := range sentinels {
		assert.Equal(t, "Code"+strings.TrimPrefix(name, "Err"), code)
	}
	all := refusal.Codes()
	assert.Len(t, all, len(codes))
	seen := map[refusal.Code]bool{}
	for _, c := range all {
		assert.False(t, seen[c], "%s listed twice", c)
		seen[c] = true
	}
}

// A sentinel matches every *Error of its code however it is wrapped, and no
// other code.
func TestSentinelMatchesItsCodeOnly(t *testing.T) {
	for _, code := range refusal.Codes() {
		err := fmt.Errorf("wrapped: %w", &refusal.Error{Code: code, Path: "/x", Message: "m"})
		assert.ErrorIs(t, err, refusal.Sentinel(code))
		assert.ErrorIs(t, errors.Join(errors.New("other"), err), refusal.Sentinel(code))
		assert.Equal(t, code, refusal.CodeOf(err))
		for _, other := range refusal.Codes() {
			if other != code {
				assert.NotErrorIs(t, err, refusal.Sentinel(other))
			}
		}
	}
	assert.NotErrorIs(t, errors.New("sequence-gap"), refusal.ErrSequenceGap, "text never matches")
}

// A store may return a sentinel itself: it matches, and CodeOf reads it.
func TestSentinelAsError(t *testing.T) {
	err := fmt.Errorf("store: %w", refusal.ErrClaimConflict)
	assert.ErrorIs(t, err, refusal.ErrClaimConflict)
	assert.NotErrorIs(t, err, refusal.ErrUnauthorized)
	assert.Equal(t, refusal.CodeClaimConflict, refusal.CodeOf(err))
	assert.Equal(t, refusal.Code(""), refusal.CodeOf(errors.New("plain")))
	assert.Equal(t, refusal.Code(""), refusal.CodeOf(nil))
	// The outermost refusal wins when one wraps another.
	outer := &refusal.Error{Code: refusal.CodeNeedsReconciliation, Err: refusal.ErrClaimConflict}
	assert.Equal(t, refusal.CodeNeedsReconciliation, refusal.CodeOf(outer))
	assert.ErrorIs(t, outer, refusal.ErrClaimConflict, "the cause still matches through Unwrap")
}

// Changing a refusal a caller holds changes nothing for anyone else: an
// *Error target is compared by identity, never by its fields.
func TestNoAssignmentChangesAMatch(t *testing.T) {
	held := &refusal.Error{Code: refusal.CodeSequenceGap}
	other := &refusal.Error{Code: refusal.CodeSequenceGap}
	assert.NotErrorIs(t, other, held, "an *Error target is not a sentinel")
	held.Code = refusal.CodeStaleCursor
	held.Message = "changed"
	assert.ErrorIs(t, other, refusal.ErrSequenceGap)
	assert.NotErrorIs(t, other, refusal.ErrStaleCursor)
}

func TestErrorText(t *testing.T) {
	e := &refusal.Error{Code: refusal.CodeInvalidEvent, Path: "/event/text", Message: "not a string", Err: errors.New("cause")}
	assert.Equal(t, "invalid-event at /event/text: not a string: cause", e.Error())
	assert.Equal(t, "stale-cursor", refusal.ErrStaleCursor.Error())
}
