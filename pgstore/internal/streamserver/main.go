// Command streamserver is the server process of pgstore's multi-instance
// tests: the stream handler (package stream) on a replay window, the
// PostgreSQL Window or the memory window, chosen by one flag, plus a
// producer that appends a scripted turn (internal/turnscript) and reports
// every append that returned success. It prints its base URL as the first
// line of stdout, then one line per event:
//
//	acked CONVERSATION TURN SEQ     an Append returned success
//	recovered CONVERSATION TURN SEQ an Append's answer was lost, and its
//	                                retry was refused as already stored
//	produced CONVERSATION TURN N    the scripted turn is complete
//
// Routes:
//
//	GET  /conversations/{conversation}/turns/{turn}/events   the turn's stream
//	POST /conversations/{conversation}/turns/{turn}/produce?frames=N&pace=D
//
// It is a test binary: it authorizes every turn.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "streamserver:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on")
	windowKind := flag.String("window", "postgres", "the replay window: postgres or memory")
	dsn := flag.String("dsn", "", "PostgreSQL DSN (with -window postgres)")
	listenAddr := flag.String("listen-addr", "", "host:port the window's listener connects through (a proxy); empty: the DSN's")
	retry := flag.Duration("retry", 100*time.Millisecond, "the stream's reconnection delay")
	waitOnRequest := flag.Bool("wait-on-request", false, "stream.HandlerOptions.WaitOnRequest: no parked streams")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	window, closeWindow, err := openWindow(*windowKind, *dsn, *listenAddr, log)
	if err != nil {
		return err
	}
	defer closeWindow()

	h, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }, Options: serve.Options{Retry: *retry, WaitOnRequest: *waitOnRequest, Logger: log}})
	if err != nil {
		return err
	}
	out := &lines{}
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
	mux.HandleFunc("POST /conversations/{conversation}/turns/{turn}/produce", func(w http.ResponseWriter, r *http.Request) {
		key, _ := stream.PathKey(r)
		n, err1 := strconv.ParseInt(r.URL.Query().Get("frames"), 10, 64)
		pace, err2 := time.ParseDuration(r.URL.Query().Get("pace"))
		if err1 != nil || err2 != nil || n < 2 {
			http.Error(w, "frames >= 2 and pace are required", http.StatusBadRequest)
			return
		}
		go produce(window, key, n, pace, out)
		w.WriteHeader(http.StatusAccepted)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	out.printf("http://%s", ln.Addr())
	srv := &http.Server{Handler: mux}
	srv.RegisterOnShutdown(h.Close)
	return srv.Serve(ln)
}

// openWindow is the one choice a host makes: the memory window, or the
// PostgreSQL window every instance shares.
func openWindow(kind, dsn, listenAddr string, log *slog.Logger) (replay.Window, func(), error) {
	switch kind {
	case "memory":
		return replay.NewMemory(nil), func() {}, nil
	case "postgres":
	default:
		return nil, nil, errors.New("-window is postgres or memory")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, nil, err
	}
	opts := &pgstore.WindowOptions{Patience: 30 * time.Second, Logger: log}
	if listenAddr != "" {
		lc := cfg.ConnConfig.Copy()
		host, port, err := net.SplitHostPort(listenAddr)
		if err != nil {
			return nil, nil, err
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, nil, err
		}
		lc.Host, lc.Port, lc.Fallbacks = host, uint16(p), nil
		opts.ListenConfig = lc
	}
	w, err := pgstore.NewWindow(pool, opts)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return w, func() { w.Close(); pool.Close() }, nil
}

// produce appends key's scripted turn of n frames, one each pace, retrying
// each append until it is stored: after an error whose outcome is unknown
// (the connection broke, the server restarted), the retry's
// sequence-reordered refusal says the frame was stored after all.
func produce(w replay.Window, key replay.Key, n int64, pace time.Duration, out *lines) {
	ctx := context.Background()
	for seq := int64(1); seq <= n; seq++ {
		env := turnscript.Envelope(key, seq, n)
		outcome := "acked"
		for {
			_, err := w.Append(ctx, key, env)
			if err == nil {
				break
			}
			if ae, ok := errors.AsType[*replay.AppendError](err); ok && refusal.CodeOf(err) == refusal.CodeSequenceReordered && ae.Bounds.Latest >= seq {
				outcome = "recovered" // stored by the attempt whose answer was lost
				break
			}
			if _, ok := errors.AsType[*replay.AppendError](err); ok {
				out.printf("refused %s %s %d %v", key.ConversationID, key.TurnID, seq, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		out.printf("%s %s %s %d", outcome, key.ConversationID, key.TurnID, seq)
		time.Sleep(pace)
	}
	out.printf("produced %s %s %d", key.ConversationID, key.TurnID, n)
}

// lines writes whole lines to stdout, one at a time.
type lines struct{ mu sync.Mutex }

func (l *lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}
