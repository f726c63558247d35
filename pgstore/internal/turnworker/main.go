// Command turnworker is a producer instance of pgstore's cross-instance
// turn tests: one [turn.Producer] on a [pgstore.Window], its tool calls run
// through recovery on a [pgstore.RecoveryStore], as a host's worker runs
// them. The tests kill it with SIGKILL and start another one on the same
// turn, or cancel its turn from another instance.
//
// In -mode script it produces a scripted turn: -tools tool calls, each
// after -deltas deltas, then -deltas more, then the end. Started on a turn
// that has frames, it resumes it as a restarted host does: the Producer
// ([turn.Start]) goes on at the window's latest seq, the script goes on
// after the last of its steps on the stream (each step is one delta or
// one tool_call frame), the call left without a result is called again
// with its call id (its stored result, or needs-reconciliation for a tool
// admitted whose outcome was lost: then the host's own record, the
// -sink file every launch appends to, tells what happened, and Reconcile
// stores it), and a claim held by the dead worker is waited out (its
// lease).
//
// In -mode agent it produces the same turn with the loop of package agent and a scripted
// model: -tools steps of -deltas deltas and one tool call each, then a
// last step that answers. Resumed, it settles the calls left without a
// result as in -mode script, then runs the loop, which goes on from the
// turn's stream.
//
// In -mode cancel it runs an AbortListener carrying cancellations to its
// [turn.Runs], watches its turn (WatchTurn) and streams until the turn is
// cancelled: with -cancel-at tool, inside a tool call that runs until its
// context ends; with -cancel-at loop, between deltas.
//
// It reports on stdout, one event a line:
//
//	ready LATEST PENDING STEP       the Producer started (resumed at LATEST)
//	restart ERROR                   a late frame of the killed producer: started again
//	launch K NANOS                  tool call K launched (its sink line written)
//	result K STATUS                 tool call K's tool_result is on the stream
//	lease K                         K's effect is claimed by a dead worker: waiting
//	unknown K                       K's outcome is unknown (needs-reconciliation)
//	reconciled K LAUNCHED           K reconciled from the sink (LAUNCHED 0 or 1)
//	listening                       (cancel) the AbortListener listens
//	streaming                       (cancel) the model loop is under way
//	aborted tool|loop NANOS CAUSE   (cancel) the tool's or the loop's context ended
//	ready LATEST PENDING STEPS      (agent) the Producer started: its last step's number
//	done STATUS                     the turn ended with lifecycle STATUS (ended-before:
//	                                it had ended when this process started)
//
// It is a test binary: it authorizes every call.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "turnworker:", err)
		os.Exit(1)
	}
}

type config struct {
	mode, sink, boot, cancelAt string
	key                        replay.Key
	tools, deltas              int
	pace, toolTime             time.Duration
	lease, listenRetry         time.Duration
}

func run() error {
	var c config
	dsn := flag.String("dsn", "", "PostgreSQL DSN")
	flag.StringVar(&c.key.ConversationID, "conversation", "", "the turn's conversation")
	flag.StringVar(&c.key.TurnID, "turn", "", "the turn")
	flag.StringVar(&c.mode, "mode", "script", "script, agent or cancel")
	flag.StringVar(&c.sink, "sink", "", "the file every tool launch appends a line to (script)")
	flag.StringVar(&c.boot, "boot", "", "this process's name, unique per process")
	flag.IntVar(&c.tools, "tools", 4, "tool calls of the scripted turn")
	flag.IntVar(&c.deltas, "deltas", 6, "deltas before each tool call, and after the last")
	flag.DurationVar(&c.pace, "pace", 4*time.Millisecond, "pause after each step")
	flag.DurationVar(&c.toolTime, "tool-time", 25*time.Millisecond, "how long a tool runs after its launch")
	flag.DurationVar(&c.lease, "lease", 150*time.Millisecond, "recovery's claim lease")
	flag.StringVar(&c.cancelAt, "cancel-at", "tool", "cancel mode: tool or loop")
	flag.DurationVar(&c.listenRetry, "listen-retry", 20*time.Millisecond, "cancel mode: the AbortListener's RetryDelay")
	flag.Parse()
	if c.boot == "" || c.key.ConversationID == "" || c.key.TurnID == "" {
		return errors.New("-boot, -conversation and -turn are required")
	}
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		return err
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	w, err := pgstore.NewWindow(pool, &pgstore.WindowOptions{CatchUpInterval: 200 * time.Millisecond, TrimInterval: -1})
	if err != nil {
		return err
	}
	defer w.Close()
	st, err := pgstore.NewRecoveryStore(pool, nil)
	if err != nil {
		return err
	}
	out := &lines{}
	switch c.mode {
	case "script":
		return script(ctx, c, w, st, out)
	case "cancel":
		return cancel(ctx, c, pool, w, st, out)
	case "agent":
		return agentTurn(ctx, c, w, st, out)
	}
	return errors.New("-mode is script, agent or cancel")
}

// allowAll authorizes every call: a test host.
type allowAll struct{}

func (allowAll) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// step is one step of the scripted turn: a delta (tool 0) or tool call
// number tool.
type step struct {
	delta int
	tool  int
}

// steps is the scripted turn.
func steps(c config) []step {
	var out []step
	n := 0
	for k := 1; k <= c.tools+1; k++ {
		for range c.deltas {
			n++
			out = append(out, step{delta: n})
		}
		if k <= c.tools {
			out = append(out, step{tool: k})
		}
	}
	return out
}

// deltaText is the text of the scripted turn's delta n.
func deltaText(n int) string { return "part " + strconv.Itoa(n) + " of the answer. " }

// callID is the provider's call id of tool call k.
func callID(k int) string { return "call-" + strconv.Itoa(k) }

// toolOutput is what tool call k returns.
func toolOutput(k int) json.RawMessage {
	return json.RawMessage(`{"k":` + strconv.Itoa(k) + `,"found":"result of call ` + strconv.Itoa(k) + `"}`)
}

// script produces, or resumes, the scripted turn to its end. A statement
// the killed producer sent before it died may still commit after this one
// read the turn (the server finishes a statement whose client is gone):
// its frame then refuses this Producer's (turn.ErrAnotherWriter), and a
// Producer started again reads it and goes on after it.
func script(ctx context.Context, c config, w *pgstore.Window, st *pgstore.RecoveryStore, out *lines) error {
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, &recovery.Options{Worker: c.boot, Lease: c.lease})
	for attempt := 1; ; attempt++ {
		err := scriptOnce(ctx, c, w, rec, out)
		if !errors.Is(err, turn.ErrAnotherWriter) || attempt == 3 {
			return err
		}
		out.printf("restart %v", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// scriptOnce runs the scripted turn with one Producer.
func scriptOnce(ctx context.Context, c config, w *pgstore.Window, rec *recovery.TurnRecovery, out *lines) error {
	p, err := turn.Start(ctx, w, c.key, &turn.Options{Recovery: rec, Caller: "worker", ToolSlots: c.tools})
	if errors.Is(err, refusal.ErrTurnTerminated) {
		out.printf("done ended-before") // by a late frame of the killed producer
		return nil
	}
	if err != nil {
		return err
	}
	done, err := landedSteps(ctx, w, c.key, p.Latest())
	if err != nil {
		return err
	}
	out.printf("ready %d %d %d", p.Latest(), len(p.Pending()), done)
	sink, err := os.OpenFile(c.sink, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer sink.Close()
	h := &host{c: c, p: p, sink: sink, out: out}
	for _, pc := range p.Pending() { // the call the previous instance left without a result
		k, err := strconv.Atoi(strings.TrimPrefix(pc.ID, "call-"))
		if err != nil {
			return fmt.Errorf("a pending call of another script: %q", pc.ID)
		}
		if err := h.call(k); err != nil {
			return err
		}
	}
	all := steps(c)
	for _, s := range all[done:] {
		if s.tool == 0 {
			err = p.Delta(p.Context(), deltaText(s.delta))
		} else {
			err = h.call(s.tool)
		}
		if err != nil {
			return err
		}
		time.Sleep(c.pace)
	}
	if err := p.Complete(ctx); err != nil {
		return err
	}
	out.printf("done completed")
	return nil
}

// landedSteps counts the script's steps on the stream up to latest: its
// deltas and tool_calls, one frame each.
func landedSteps(ctx context.Context, w replay.Window, key replay.Key, latest int64) (int, error) {
	n := 0
	for after := int64(0); after < latest; {
		_, frames, err := w.Read(ctx, key, after, replay.DefaultPageBytes)
		if err != nil {
			return 0, err
		}
		if len(frames) == 0 {
			break
		}
		for _, f := range frames {
			if f.Type == chatprotocol.EventTypeDelta || f.Type == chatprotocol.EventTypeToolCall {
				n++
			}
			after = f.Seq
		}
	}
	return n, nil
}

// host runs the scripted turn's tool calls as a host does.
type host struct {
	c    config
	p    *turn.Producer
	sink *os.File
	out  *lines
}

// sinkLine is the line tool call k's launch appends to the sink.
func (h *host) sinkLine(k int) string {
	return h.c.key.ConversationID + "|" + h.c.key.TurnID + "|" + strconv.Itoa(k)
}

// tool is tool call k: its effect is the line it appends to the sink,
// then it works a while and answers.
func (h *host) tool(k int) turn.Tool {
	return func(ctx context.Context) (json.RawMessage, error) {
		if _, err := h.sink.WriteString(h.sinkLine(k) + "#" + h.c.boot + "\n"); err != nil {
			return nil, err
		}
		if err := h.sink.Sync(); err != nil {
			return nil, err
		}
		h.out.printf("launch %d %d", k, time.Now().UnixNano())
		t := time.NewTimer(h.c.toolTime)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled}
		}
		return toolOutput(k), nil
	}
}

// verify is the host's lookup of tool call k in its own records, the sink:
// launched, it did its work (its output); never launched, it did nothing.
func (h *host) verify(k int) turn.Tool {
	return func(context.Context) (json.RawMessage, error) {
		n, err := h.launches(k)
		if err != nil {
			return nil, err // unknown still: reconciled later
		}
		if n > 0 {
			return toolOutput(k), nil
		}
		return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled, Output: json.RawMessage(`{"launched":false}`)}
	}
}

// launches counts tool call k's lines in the sink.
func (h *host) launches(k int) (int, error) {
	f, err := os.Open(h.c.sink)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if key, _, _ := strings.Cut(sc.Text(), "#"); key == h.sinkLine(k) {
			n++
		}
	}
	return n, sc.Err()
}

// call runs tool call k to a result on the stream: a new call, or the
// call the previous instance left pending, whose effect may be completed
// (its stored result), claimed by the dead worker (wait out its lease) or
// admitted with its outcome lost (needs-reconciliation: the sink decides).
func (h *host) call(k int) error {
	tc := turn.ToolCall{ID: callID(k), Name: "lookup", Input: json.RawMessage(`{"k":` + strconv.Itoa(k) + `}`)}
	reconcile := false
	for attempt := 0; attempt < 200; attempt++ {
		var res turn.ToolResult
		var err error
		if reconcile {
			res, err = h.p.Reconcile(h.p.Context(), tc.ID, h.verify(k))
		} else {
			res, err = h.p.RunToolCall(h.p.Context(), tc, h.tool(k))
		}
		if le, ok := errors.AsType[*recovery.LeaseError](err); ok {
			h.out.printf("lease %d", k)
			time.Sleep(time.Until(le.Until) + 5*time.Millisecond)
			continue
		}
		switch {
		case err == nil && reconcile:
			n, _ := h.launches(k)
			h.out.printf("reconciled %d %d", k, n)
			h.out.printf("result %d %s", k, res.Status)
			return nil
		case err == nil:
			h.out.printf("result %d %s", k, res.Status)
			return nil
		case errors.Is(err, refusal.ErrNeedsReconciliation) && !reconcile:
			h.out.printf("unknown %d", k)
			reconcile = true
		default:
			return fmt.Errorf("tool call %d: %w", k, err)
		}
	}
	return fmt.Errorf("tool call %d: no result after 200 attempts", k)
}

// cancel runs a turn until another instance cancels it.
func cancel(ctx context.Context, c config, pool *pgxpool.Pool, w *pgstore.Window, st *pgstore.RecoveryStore, out *lines) error {
	runs := turn.NewRuns()
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}, Aborter: runs}, &recovery.Options{Worker: c.boot, Lease: c.lease})
	listening := make(chan struct{}, 1)
	l, err := pgstore.NewAbortListener(pool.Config().ConnConfig, st, runs, &pgstore.AbortListenerOptions{
		RetryDelay: c.listenRetry,
		Logger:     slog.New(slog.DiscardHandler),
		OnListen: func() {
			out.printf("listening")
			select {
			case listening <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		return err
	}
	lctx, stopListener := context.WithCancel(ctx)
	defer stopListener()
	go func() { _ = l.Run(lctx) }()
	<-listening
	ref := recovery.TurnRef{Conversation: c.key.ConversationID, Turn: c.key.TurnID}
	defer l.WatchTurn(ref)() // before Start: a cancellation from now on reaches runs
	p, err := turn.Start(ctx, w, c.key, &turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
	if err != nil {
		return err
	}
	loop := p.Context()
	stopped := context.AfterFunc(loop, func() {
		out.printf("aborted loop %d %s", time.Now().UnixNano(), causeName(loop))
	})
	defer stopped()
	var mu sync.Mutex // the loop's own steps, for the report
	streamed := 0
	delta := func() error {
		mu.Lock()
		defer mu.Unlock()
		streamed++
		return p.Delta(loop, deltaText(streamed))
	}
	var loopErr error
	switch c.cancelAt {
	case "tool":
		for range 3 {
			if loopErr = delta(); loopErr != nil {
				break
			}
		}
		if loopErr == nil {
			out.printf("streaming")
			_, loopErr = p.RunToolCall(loop, turn.ToolCall{ID: callID(1), Name: "long"}, func(ctx context.Context) (json.RawMessage, error) {
				out.printf("launch 1 %d", time.Now().UnixNano())
				<-ctx.Done()
				out.printf("aborted tool %d %s", time.Now().UnixNano(), causeName(ctx))
				return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled, Output: json.RawMessage(`{"aborted":true}`)}
			})
		}
	case "loop":
		for i := 0; loop.Err() == nil; i++ {
			if loopErr = delta(); loopErr != nil {
				break
			}
			if i == 2 {
				out.printf("streaming")
			}
			t := time.NewTimer(c.pace)
			select {
			case <-t.C:
			case <-loop.Done():
			}
			t.Stop()
		}
	default:
		return errors.New("-cancel-at is tool or loop")
	}
	if loopErr != nil && !errors.Is(context.Cause(loop), turn.ErrCancelled) {
		return loopErr
	}
	if err := p.End(ctx, context.Cause(loop)); err != nil {
		return err
	}
	b, err := w.Bounds(ctx, c.key)
	if err != nil {
		return err
	}
	_, frames, err := w.Read(ctx, c.key, b.Latest-1, replay.DefaultPageBytes)
	if err != nil || len(frames) != 1 {
		return fmt.Errorf("reading the end: %v", err)
	}
	env, err := chatprotocol.ParseEnvelope(frames[0].Data)
	if err != nil {
		return err
	}
	lc, ok := env.Event.(*chatprotocol.LifecycleEvent)
	if !ok {
		return fmt.Errorf("the turn ends with a %s", env.Event.EventType())
	}
	out.printf("done %s", lc.Status)
	return nil
}

// causeName names why ctx ended: "cancelled" for the turn's cancellation.
func causeName(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), turn.ErrCancelled) {
		return "cancelled"
	}
	return "other"
}

// lines writes whole lines to stdout, one at a time.
type lines struct{ mu sync.Mutex }

func (l *lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}
