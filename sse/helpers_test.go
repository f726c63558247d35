package sse_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// chunkReader returns its chunks one Read at a time; an empty chunk is a
// Read of 0 bytes without error.
type chunkReader struct {
	chunks [][]byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// splitEvery cuts in into pieces of size bytes (the last may be shorter).
func splitEvery(in []byte, size int) [][]byte {
	var out [][]byte
	for len(in) > size {
		out = append(out, in[:size])
		in = in[size:]
	}
	return append(out, in)
}

// splitRandom cuts in at random places, with some empty reads between.
func splitRandom(in []byte, rng *rand.Rand) [][]byte {
	var out [][]byte
	for len(in) > 0 {
		if rng.IntN(8) == 0 {
			out = append(out, nil)
		}
		n := 1 + rng.IntN(min(len(in), 1+rng.IntN(64)))
		out = append(out, in[:n])
		in = in[n:]
	}
	return out
}

// decodeAll reads every frame of r (events cloned, comments included) and
// returns them with the error that ended the stream (nil for io.EOF).
func decodeAll(r io.Reader, opts *sse.DecoderOptions) ([]sse.Event, *sse.Decoder, error) {
	d := sse.NewDecoder(r, opts)
	var out []sse.Event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, d, nil
		}
		if err != nil {
			return out, d, err
		}
		out = append(out, ev.Clone())
	}
}

// feedings returns the ways each test feeds an input: whole, in chunks of
// every size from 1 to len(in), and in 20 random splits.
func feedings(in []byte) map[string]func() io.Reader {
	ways := map[string]func() io.Reader{
		"whole": func() io.Reader { return bytes.NewReader(in) },
	}
	for size := 1; size <= len(in); size++ {
		ways["chunks of "+strconv.Itoa(size)] = func() io.Reader {
			return &chunkReader{chunks: splitEvery(bytes.Clone(in), size)}
		}
	}
	for seed := range 20 {
		ways["random split "+strconv.Itoa(seed)] = func() io.Reader {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			return &chunkReader{chunks: splitRandom(bytes.Clone(in), rng)}
		}
	}
	return ways
}

// forEachFeeding decodes in under every feeding and compares what
// summarize makes of it with want; it stops at the first feeding that
// differs, naming it.
func forEachFeeding[T any](t *testing.T, in []byte, opts *sse.DecoderOptions, want T, summarize func(evs []sse.Event, d *sse.Decoder, err error) T) {
	t.Helper()
	for name, feed := range feedings(in) {
		evs, d, err := decodeAll(feed(), opts)
		if !assert.Equal(t, want, summarize(evs, d, err), "fed %s", name) {
			return
		}
	}
}

// readTestdata reads a file under testdata.
func readTestdata(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
}
