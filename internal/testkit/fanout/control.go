package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// server is one mode of the server: it mounts its streams on mux and
// appends each delta the producer makes.
type server interface {
	mount(mux *http.ServeMux) error
	emit(turn int, env *chatprotocol.ChatEventEnvelope)
}

// memory is what /fanout/idle reports: the runtime's heap and stack in use
// after a collection and the process's resident set, in bytes, and its
// goroutines, each as measured then and at start (before any connection).
type memory struct {
	HeapStack      uint64 `json:"heapStack"`
	RSS            uint64 `json:"rss"`
	Goroutines     int    `json:"goroutines"`
	BaseHeapStack  uint64 `json:"baseHeapStack"`
	BaseRSS        uint64 `json:"baseRss"`
	BaseGoroutines int    `json:"baseGoroutines"`
}

// usage is what /fanout/stop reports: the process's CPU time (user and
// system, all threads) from /fanout/mark to /fanout/stop and the wall time
// between them.
type usage struct {
	CPUNanos  int64 `json:"cpuNanos"`
	WallNanos int64 `json:"wallNanos"`
}

// serve runs a server of the mode newServer makes until SIGTERM or stdin closes.
func serve(c config, newServer func(config) (server, error)) error {
	files, err := raiseFiles(uint64(c.turns*c.per + 1000))
	if err != nil {
		return err
	}
	srv, err := newServer(c)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	if err := srv.mount(mux); err != nil {
		return err
	}
	var (
		mu        sync.Mutex
		stop      context.CancelFunc = func() {}
		markCPU   time.Duration
		markWall  time.Time
		profiling bool
	)
	baseHS, baseRSS, baseG := heapStack(), rss(), runtime.NumGoroutine()
	mux.HandleFunc("GET /fanout/idle", func(w http.ResponseWriter, r *http.Request) {
		// counted now but not at start: this request's goroutines and the
		// one waiting for stdin's end, a few over thousands of connections
		hs := heapStack()
		writeJSON(w, memory{HeapStack: hs, RSS: rss(), Goroutines: runtime.NumGoroutine(),
			BaseHeapStack: baseHS, BaseRSS: baseRSS, BaseGoroutines: baseG})
	})
	mux.HandleFunc("POST /fanout/start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var ctx context.Context
		ctx, stop = context.WithCancel(context.Background())
		go produce(ctx, c.turns, c.pace, srv.emit)
	})
	mux.HandleFunc("POST /fanout/mark", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if c.cpuprofile != "" && !profiling {
			f, err := os.Create(c.cpuprofile)
			if err == nil && pprof.StartCPUProfile(f) == nil {
				profiling = true
			}
		}
		markCPU, markWall = cpuTime(), time.Now()
	})
	mux.HandleFunc("POST /fanout/stop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		u := usage{CPUNanos: int64(cpuTime() - markCPU), WallNanos: int64(time.Since(markWall))}
		stop()
		if profiling {
			pprof.StopCPUProfile()
			profiling = false
		}
		writeJSON(w, u)
	})
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	fmt.Printf("addr %s files %d\n", ln.Addr(), files)
	go func() {
		b := make([]byte, 1)
		os.Stdin.Read(b) // EOF: the benchmark is done with us
		ln.Close()
	}()
	err = (&http.Server{Handler: mux}).Serve(ln)
	if profiling {
		pprof.StopCPUProfile()
	}
	if errors.Is(err, net.ErrClosed) {
		return nil // the benchmark closed us
	}
	return err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// heapStack is the heap and stack memory in use after a collection.
func heapStack() uint64 {
	runtime.GC()
	runtime.GC() // the second frees the stacks of goroutines the first found dead
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// rss is the process's resident set size, in bytes, 0 where unknown.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * uint64(os.Getpagesize())
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
