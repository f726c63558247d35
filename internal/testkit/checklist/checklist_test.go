package checklist

import (
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
	err := Collect(kit(), func(c Check[func() error]) error {
		ran = append(ran, c.Name)
		return c.Run()
	}, func(name string, err error) error { return &failed{name: name, err: err} })
	assert.Equal(t, Names(kit()), ran, "every check runs, in order")
	require.ErrorIs(t, err, errBroken)
	assert.NotErrorIs(t, err, ErrSkip, "a skipped check is left out")
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var f *failed
		require.ErrorAs(t, e, &f)
		names = append(names, f.name)
	}
	assert.Equal(t, []string{"fails", "fails-too"}, names)

	assert.NoError(t, Collect(kit()[:1], func(c Check[func() error]) error { return c.Run() },
		func(string, error) error { return errBroken }))
}

func TestTestSkipsAndPasses(t *testing.T) {
	var ran []string
	Test(t, []Check[func() error]{kit()[0], kit()[2]}, func(t *testing.T, c Check[func() error]) error {
		ran = append(ran, t.Name())
		return c.Run()
	})
	assert.Equal(t, []string{"TestTestSkipsAndPasses/passes", "TestTestSkipsAndPasses/skips"}, ran)
}

func TestUniqueID(t *testing.T) {
	a, b := UniqueID("kit-"), UniqueID("kit-")
	assert.Regexp(t, `^kit-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}
