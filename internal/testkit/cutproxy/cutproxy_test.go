package cutproxy

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stream is a response with three SSE frames after an HTTP-like head.
const stream = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
	"id: 1\nevent: delta\ndata: {\"a\":1}\n\n" +
	"id: 2\nevent: delta\ndata: {\"a\":2}\n\n" +
	"id: 3\nevent: lifecycle\ndata: {\"a\":3}\n\n"

// writer serves script to every connection in writes of chunk bytes, then
// closes it.
func writer(t *testing.T, script string, chunk int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				b := []byte(script)
				for len(b) > 0 {
					n := min(chunk, len(b))
					if _, err := c.Write(b[:n]); err != nil {
						return
					}
					b = b[n:]
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, target string, opts *Options) *Proxy {
	t.Helper()
	p, err := New(target, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// fetch reads everything the proxy forwards on one connection.
func fetch(t *testing.T, p *Proxy) string {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	b, err := io.ReadAll(c)
	require.NoError(t, err)
	return string(b)
}

func TestNoPlanForwardsEverything(t *testing.T) {
	p := start(t, writer(t, stream, 7), nil)
	assert.Equal(t, stream, fetch(t, p))
	assert.Equal(t, stream, fetch(t, p))
	assert.Equal(t, Stats{Connections: 2}, p.Stats())
}

func TestCutAfterBytes(t *testing.T) {
	for _, chunk := range []int{1, 5, len(stream)} {
		p := start(t, writer(t, stream, chunk), &Options{Plan: Fixed(Cut{Bytes: 60}, Cut{Bytes: 1})})
		assert.Equal(t, stream[:60], fetch(t, p), "chunk %d", chunk)
		assert.Equal(t, stream[:1], fetch(t, p), "chunk %d", chunk)
		assert.Equal(t, stream, fetch(t, p), "chunk %d: the third connection is not cut", chunk)
		assert.Equal(t, Stats{Connections: 3, Cuts: 2, CutsAtBytes: 2}, p.Stats())
	}
}

func TestCutAfterIDLine(t *testing.T) {
	for _, chunk := range []int{1, 2, 3, 4, 9, len(stream)} {
		p := start(t, writer(t, stream, chunk), &Options{Plan: Fixed(Cut{IDLine: 1}, Cut{IDLine: 2}, Cut{IDLine: 3}, Cut{IDLine: 4})})
		for k := 1; k <= 3; k++ {
			want := stream[:strings.Index(stream, "id: "+string(rune('0'+k))+"\n")+len("id: 1\n")]
			got := fetch(t, p)
			assert.Equal(t, want, got, "chunk %d, id line %d", chunk, k)
			assert.True(t, strings.HasSuffix(got, "\nid: "+string(rune('0'+k))+"\n"))
		}
		assert.Equal(t, stream, fetch(t, p), "chunk %d: a fourth id line never comes", chunk)
		assert.Equal(t, Stats{Connections: 4, Cuts: 3, CutsAtIDLine: 3}, p.Stats())
	}
}

func TestSpareIDLineEndMovesTheCutOneByte(t *testing.T) {
	// The stream of the new layout: data, then id, then the blank line.
	script := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
		"data: {\"a\":1}\nid: 1\n\ndata: {\"a\":2}\nid: 2\n\n"
	idEnd := int64(strings.Index(script, "id: 1\n") + len("id: 1\n")) // counted from the first byte: no Arm
	for _, chunk := range []int{1, 4, len(script)} {
		p := start(t, writer(t, script, chunk), &Options{Plan: Fixed(
			Cut{Bytes: idEnd, SpareIDLineEnd: true}, Cut{Bytes: idEnd - 1, SpareIDLineEnd: true}, Cut{Bytes: idEnd})})
		assert.Equal(t, script[:idEnd+1], fetch(t, p), "chunk %d: moved past the blank line", chunk)
		assert.Equal(t, script[:idEnd-1], fetch(t, p), "chunk %d: inside the id line, not moved", chunk)
		assert.Equal(t, script[:idEnd], fetch(t, p), "chunk %d: not spared", chunk)
		assert.Equal(t, Stats{Connections: 3, Cuts: 3, CutsAtBytes: 3, SparedIDLineEnds: 1}, p.Stats())
	}
}

func TestIDLineOnlyAtALineStart(t *testing.T) {
	script := "data: {\"id:\":\"x\"}\nxid: 9\n\nid: 7\ndata: y\n\n"
	p := start(t, writer(t, script, 1), &Options{Plan: Fixed(Cut{IDLine: 1})})
	assert.Equal(t, script[:strings.Index(script, "id: 7\n")+len("id: 7\n")], fetch(t, p))
}

func TestFirstPointReachedWins(t *testing.T) {
	p := start(t, writer(t, stream, 3), &Options{Plan: Fixed(Cut{Bytes: 10, IDLine: 1}, Cut{Bytes: 1000, IDLine: 2})})
	assert.Equal(t, stream[:10], fetch(t, p))
	assert.True(t, strings.HasSuffix(fetch(t, p), "\nid: 2\n"))
	assert.Equal(t, Stats{Connections: 2, Cuts: 2, CutsAtIDLine: 1, CutsAtBytes: 1}, p.Stats())
}

func TestArmCountsFromTheMarker(t *testing.T) {
	marker := "text/event-stream"
	after := strings.Index(stream, marker) + len(marker)
	for _, chunk := range []int{1, 6, len(stream)} {
		p := start(t, writer(t, stream, chunk), &Options{
			Arm:  []byte(marker),
			Plan: Fixed(Cut{Bytes: 5}, Cut{IDLine: 1}),
		})
		assert.Equal(t, stream[:after+5], fetch(t, p), "chunk %d", chunk)
		assert.True(t, strings.HasSuffix(fetch(t, p), "\nid: 1\n"), "chunk %d", chunk)

		other := strings.Replace(stream, marker, "text/html", 1)
		q := start(t, writer(t, other, chunk), &Options{Arm: []byte(marker), Plan: Fixed(Cut{Bytes: 1}, Cut{IDLine: 1})})
		assert.Equal(t, other, fetch(t, q), "chunk %d: never armed, never cut", chunk)
		assert.Equal(t, other, fetch(t, q))
		assert.Equal(t, 0, q.Stats().Cuts)
	}
}

func TestMaxCuts(t *testing.T) {
	p := start(t, writer(t, stream, len(stream)), &Options{MaxCuts: 2, Plan: func(int, *rand.Rand) Cut { return Cut{IDLine: 2} }})
	cut := fetch(t, p)
	assert.True(t, strings.HasSuffix(cut, "\nid: 2\n"))
	assert.Equal(t, cut, fetch(t, p))
	assert.Equal(t, stream, fetch(t, p))
	assert.Equal(t, stream, fetch(t, p))
	assert.Equal(t, Stats{Connections: 4, Cuts: 2, CutsAtIDLine: 2}, p.Stats())
}

func TestMaxCutsHoldsForOverlappingConnections(t *testing.T) {
	// The target accepts both connections, so the proxy planned both cuts,
	// before it sends either a byte: only the first cut reached is made.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	accepted, release := make(chan net.Conn), make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	p := start(t, ln.Addr().String(), &Options{MaxCuts: 1, Plan: func(int, *rand.Rand) Cut { return Cut{IDLine: 2} }})
	got := make(chan string, 2)
	for range 2 {
		c, err := net.Dial("tcp", p.Addr())
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := io.ReadAll(c)
			if err != nil {
				b = []byte("error: " + err.Error())
			}
			got <- string(b)
		}()
	}
	for range 2 {
		c := <-accepted
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			<-release
			_, _ = c.Write([]byte(stream))
		}()
	}
	close(release)
	a, b := <-got, <-got
	want := stream[:strings.Index(stream, "id: 2\n")+len("id: 2\n")]
	assert.ElementsMatch(t, []string{want, stream}, []string{a, b})
	assert.Equal(t, Stats{Connections: 2, Cuts: 1, CutsAtIDLine: 1}, p.Stats())
}

func TestRandomIsSeededAndInRange(t *testing.T) {
	r := Random{IDLineShare: 0.5, MinIDLine: 2, MaxIDLine: 4, MinBytes: 100, MaxBytes: 200}
	draw := func(seed uint64) []Cut {
		rng := rand.New(rand.NewPCG(seed, seed))
		plan := r.Plan()
		var cuts []Cut
		for i := range 200 {
			cuts = append(cuts, plan(i, rng))
		}
		return cuts
	}
	a, b, c := draw(7), draw(7), draw(8)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
	var ids, byts int
	for _, cut := range a {
		if cut.IDLine != 0 {
			ids++
			assert.Zero(t, cut.Bytes)
			assert.GreaterOrEqual(t, cut.IDLine, 2)
			assert.LessOrEqual(t, cut.IDLine, 4)
		} else {
			byts++
			assert.GreaterOrEqual(t, cut.Bytes, int64(100))
			assert.LessOrEqual(t, cut.Bytes, int64(200))
		}
	}
	assert.Greater(t, ids, 50)
	assert.Greater(t, byts, 50)

	// The proxy hands Plan its own source, seeded with Options.Seed.
	record := func(seed uint64) []Cut {
		var got []Cut
		plan := r.Plan()
		p := start(t, writer(t, stream, len(stream)), &Options{Seed: seed, Plan: func(n int, rng *rand.Rand) Cut {
			cut := plan(n, rng)
			got = append(got, cut)
			return cut
		}})
		for range 5 {
			fetch(t, p)
		}
		require.NoError(t, p.Close())
		return got
	}
	assert.Equal(t, draw(42)[:5], record(42))
}

func TestRandomClampsItsRanges(t *testing.T) {
	plan := Random{IDLineShare: 0.5, MinIDLine: 0, MaxIDLine: -3, MinBytes: 9, MaxBytes: 2}.Plan()
	rng := rand.New(rand.NewPCG(3, 3))
	seen := map[Cut]bool{}
	for i := range 100 {
		seen[plan(i, rng)] = true
	}
	assert.Equal(t, map[Cut]bool{{IDLine: 1}: true, {Bytes: 9}: true}, seen)
}

func TestClientBytesReachTheTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c) // until the proxy passes the client's half-close on
		got <- b
		_, _ = c.Write([]byte("ok"))
	}()
	p := start(t, ln.Addr().String(), nil)
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	req := []byte("GET /x HTTP/1.1\r\nLast-Event-ID: 5\r\n\r\n")
	_, err = c.Write(req)
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	assert.Equal(t, req, <-got)
	resp, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(resp))
}

func TestDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := ln.Addr().String()
	require.NoError(t, ln.Close())
	p := start(t, target, nil)
	assert.Equal(t, "", fetch(t, p))
	assert.Equal(t, Stats{Connections: 1, DialErrors: 1}, p.Stats())
}

func TestCloseEndsOpenConnectionsAndWaits(t *testing.T) {
	// A target that never answers: the connection stays open until Close.
	before := goleak.IgnoreCurrent()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			held <- c
		}
	}()
	p, err := New(ln.Addr().String(), nil)
	require.NoError(t, err)
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	server := <-held
	defer server.Close()

	require.NoError(t, p.Close())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	b, err := io.ReadAll(c)
	require.NoError(t, err, "the client sees the end, not the deadline")
	assert.Empty(t, b)
	require.NoError(t, server.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = server.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
	require.NoError(t, p.Close(), "Close is idempotent")

	_, err = net.Dial("tcp", p.Addr())
	assert.Error(t, err, "nothing listens after Close")
	goleak.VerifyNone(t, before)
}

func TestCutterAcrossEveryChunking(t *testing.T) {
	// Every split of the stream into two chunks finds the same cut point.
	want := strings.Index(stream, "id: 2\n") + len("id: 2\n")
	for split := 0; split <= len(stream); split++ {
		c := newCutter(Cut{IDLine: 2}, nil)
		var out bytes.Buffer
		var hit cutKind
		for _, part := range [][]byte{[]byte(stream[:split]), []byte(stream[split:])} {
			n, k := c.scan(part)
			out.Write(part[:n])
			if k != cutNone {
				hit = k
				break
			}
		}
		require.Equal(t, cutIDLine, hit, "split %d", split)
		require.Equal(t, stream[:want], out.String(), "split %d", split)
	}
}

func TestRandomSparesIDLineEndsOfByteCuts(t *testing.T) {
	plan := Random{IDLineShare: 0.5, MinIDLine: 3, MaxIDLine: 3, MinBytes: 9, MaxBytes: 9, SpareIDLineEnd: true}.Plan()
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[Cut]bool{}
	for i := range 100 {
		seen[plan(i, rng)] = true
	}
	assert.Equal(t, map[Cut]bool{{IDLine: 3}: true, {Bytes: 9, SpareIDLineEnd: true}: true}, seen)
}
