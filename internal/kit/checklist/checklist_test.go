package checklist

import (
	"context"
	"errors"
	"fmt"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type failed struct {
	name string
	err  error
}

func (f *failed) Error() string { return f.name + ": " + f.err.Error() }
func (f *failed) Unwrap() error { return f.err }

var errBroken = errors.New("broken")

func kit() []Check[func() error] {
	return []Check[func() error]{
		{Name: "passes", Run: func() error { return nil }},
		{Name: "fails", Run: func() error { return errBroken }},
		{Name: "skips", Run: func() error { return fmt.Errorf("%w: not here", ErrSkip) }},
		{Name: "fails-too", Run: func() error { return fmt.Errorf("again: %w", errBroken) }},
	}
}

func TestNames(t *testing.T) {
	assert.Equal(t, []string{"passes", "fails", "skips", "fails-too"}, Names(kit()))
	assert.Empty(t, Names[func() error](nil))
}

func TestCollect(t *testing.T) {
	var ran []string
	var ctxs []context.Context
	err := Collect(t.Context(), kit(), "cfg-1", func(ctx context.Context, c Check[func() error], cfg string) error {
		require.NoError(t, ctx.Err(), "a check's context is live while it runs")
		assert.Equal(t, "cfg-1", cfg, "each check gets the kit's configuration")
		ran, ctxs = append(ran, c.Name), append(ctxs, ctx)
		return c.Run()
	}, func(name string, err error) error { return &failed{name: name, err: err} })
	assert.Equal(t, Names(kit()), ran, "every check runs, in order")
	for i, ctx := range ctxs {
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "check %s's context is cancelled once it returns", ran[i])
	}
	require.ErrorIs(t, err, errBroken)
	assert.NotErrorIs(t, err, ErrSkip, "a skipped check is left out")
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var f *failed
		require.ErrorAs(t, e, &f)
		names = append(names, f.name)
	}
	assert.Equal(t, []string{"fails", "fails-too"}, names)

	assert.NoError(t, Collect(t.Context(), kit()[:1], 0, func(_ context.Context, c Check[func() error], _ int) error { return c.Run() },
		func(string, error) error { return errBroken }))

	parent, cancel := context.WithCancel(t.Context())
	cancel()
	err = Collect(parent, kit()[:1], 0, func(ctx context.Context, _ Check[func() error], _ int) error { return ctx.Err() },
		func(name string, err error) error { return &failed{name: name, err: err} })
	assert.ErrorIs(t, err, context.Canceled, "a check's context derives from Collect's")
}

func TestTestSkipsAndPasses(t *testing.T) {
	var ran []string
	var ctxs []context.Context
	Test(t, []Check[func() error]{kit()[0], kit()[2]}, 7, func(ctx context.Context, c Check[func() error], cfg int) error {
		require.NoError(t, ctx.Err())
		assert.Equal(t, 7, cfg, "each subtest gets the kit's configuration")
		ran, ctxs = append(ran, c.Name), append(ctxs, ctx)
		return c.Run()
	})
	assert.Equal(t, []string{"passes", "skips"}, ran)
	for _, ctx := range ctxs {
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "the subtest's context, cancelled when it ends")
	}
}

// subject is a kit's subject: something to release, and a name.
type subject struct {
	name  string
	Close func()
}

func TestSubject(t *testing.T) {
	_, err := Subject[subject](t.Context(), nil)
	assert.EqualError(t, err, "Config.NewSubject is nil")

	s, err := Subject(t.Context(), func(ctx context.Context) (subject, error) {
		require.NoError(t, ctx.Err(), "the check's context is handed on")
		return subject{name: "made"}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "made", s.name)

	closed := false
	s, err = Subject(t.Context(), func(context.Context) (subject, error) {
		return subject{name: "half", Close: func() { closed = true }}, errBroken
	})
	require.ErrorIs(t, err, errBroken)
	assert.EqualError(t, err, "new subject: broken")
	require.NotNil(t, s.Close, "a subject that failed comes back to be released")
	s.Close()
	assert.True(t, closed)
}

func TestUniqueID(t *testing.T) {
	a, b := UniqueID("kit-"), UniqueID("kit-")
	assert.Regexp(t, `^kit-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}
