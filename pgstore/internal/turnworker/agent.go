package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// agentTurn runs, or resumes, the scripted agent turn with [agent.Loop]: -tools
// model steps, step k saying -deltas deltas then asking for tool call k,
// then a last step that answers. The model plays the step after the tool
// results its request holds, so that a resumed turn goes on where its
// stream stands. Before the loop, a resumed turn's calls left
// without a result are settled as a host does (the dead worker's lease
// waited out, an outcome lost with its process reconciled from the sink),
// so that the loop finds their results on the stream.
func agentTurn(ctx context.Context, c config, w *pgstore.Window, st *pgstore.RecoveryStore, out *lines) error {
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, &recovery.Options{Worker: c.boot, Lease: c.lease})
	for attempt := 1; ; attempt++ {
		err := agentOnce(ctx, c, w, rec, out)
		if !errors.Is(err, turn.ErrAnotherWriter) || attempt == 3 {
			return err
		}
		out.printf("restart %v", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

// agentOnce runs the agent turn with one Producer.
func agentOnce(ctx context.Context, c config, w *pgstore.Window, rec *recovery.TurnRecovery, out *lines) error {
	p, err := turn.Start(ctx, w, c.key, &turn.Options{Recovery: rec, Caller: "worker", ToolSlots: c.tools})
	if errors.Is(err, refusal.ErrTurnTerminated) {
		out.printf("done ended-before")
		return nil
	}
	if err != nil {
		return err
	}
	out.printf("ready %d %d %d", p.Latest(), len(p.Pending()), p.Steps())
	sink, err := os.OpenFile(c.sink, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer sink.Close()
	h := &host{c: c, p: p, sink: sink, out: out}
	for _, pc := range p.Pending() {
		k, err := strconv.Atoi(strings.TrimPrefix(pc.ID, "call-"))
		if err != nil {
			return err
		}
		if err := h.call(k); err != nil {
			return err
		}
	}
	lookup := agent.Tool{Spec: agent.ToolSpec{Name: "lookup"}, Run: func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		var in struct{ K int }
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, err
		}
		return h.tool(in.K)(ctx)
	}}
	loop := &agent.Loop{Model: agent.ModelFunc(func(ctx context.Context, req *agent.Request, s ingest.Sink) (agent.Reply, error) {
		return agent.Reply{}, agentStep(ctx, c, req, s)
	}), Tools: []agent.Tool{lookup}, MaxSteps: 4 * (c.tools + 1)}
	o, err := loop.Run(ctx, p, []agent.Message{{Role: agent.RoleUser, Text: "Look everything up."}})
	if err != nil {
		return err
	}
	out.printf("done %s", o.Status)
	return nil
}

// agentStep plays the scripted step after the tool results of req: step
// k (from 1) of -tools says -deltas deltas and asks for tool call k; the
// last says -deltas deltas and answers. A step interrupted before its call
// is played again.
func agentStep(ctx context.Context, c config, req *agent.Request, s ingest.Sink) error {
	k := 1
	for _, m := range req.Messages {
		if m.Role == agent.RoleTool {
			k++
		}
	}
	if err := s.Provenance(ctx, "test", "scripted", ""); err != nil {
		return err
	}
	for n := range c.deltas {
		if err := s.Delta(ctx, "step "+strconv.Itoa(k)+" part "+strconv.Itoa(n+1)+". "); err != nil {
			return err
		}
		time.Sleep(c.pace)
	}
	if k > c.tools {
		return s.Complete(ctx, "end_turn")
	}
	if err := s.AnnounceToolCall(ctx, callID(k), "lookup", json.RawMessage(`{"k":`+strconv.Itoa(k)+`}`)); err != nil {
		return err
	}
	return s.Complete(ctx, "tool_use")
}
