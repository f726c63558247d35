package redisstore

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// appendRequest is one Append's script call, queued for a batch.
type appendRequest struct {
	keys []string
	args []any
	res  any // the script's answer: 1, or the bounds of a refusal
	err  error
	done chan struct{} // closed once res and err are set
	lead chan struct{} // buffered: this request's caller sends the next batch

	// Guarded by batcher.mu.
	sent, abandoned, leader bool
}

// appendLanes is the number of pipelines a Window has in flight at once.
const appendLanes = 4

// batcher groups the appends of a Window that wait at the same moment
// into pipelines: one write and one read for several of them, where each
// would cost its own. It has no goroutine: a caller that finds fewer than
// appendLanes pipelines in flight sends its own request at once; the
// others queue, and the next pipeline of a lane is sent by the first
// caller that queued, with everything queued by then.
type batcher struct {
	w       *Window
	mu      sync.Mutex
	queue   []*appendRequest
	leading int // lanes whose caller is sending a pipeline, or has been told to
}

// submit runs r in a batch and waits for its answer, or until ctx ends:
// then, when r was not sent yet, it is taken off the queue and nothing is
// stored; when it was, the outcome is unknown. It returns ctx's error, or
// nil once r.res and r.err are set.
func (bt *batcher) submit(ctx context.Context, r *appendRequest) error {
	r.done, r.lead = make(chan struct{}), make(chan struct{}, 1)
	bt.mu.Lock()
	bt.queue = append(bt.queue, r)
	if bt.leading < appendLanes {
		bt.leading++
		r.leader = true
		r.lead <- struct{}{}
	}
	bt.mu.Unlock()
	for {
		select {
		case <-r.done:
			return nil
		case <-r.lead:
			bt.send()
		case <-ctx.Done():
			select {
			case <-r.done:
				return nil
			default:
			}
			bt.mu.Lock()
			if !r.sent {
				r.abandoned = true
			}
			if r.leader && !r.sent {
				// Told to send the next batch: someone must.
				go bt.send()
			}
			bt.mu.Unlock()
			return ctx.Err()
		}
	}
}

// send sends the queued requests, those abandoned left out, as one
// pipeline, sets their answers, and hands the sending of the next batch to
// the first request queued meanwhile, if any.
func (bt *batcher) send() {
	bt.mu.Lock()
	batch := make([]*appendRequest, 0, len(bt.queue))
	for _, r := range bt.queue {
		if !r.abandoned {
			r.sent = true
			batch = append(batch, r)
		}
	}
	bt.queue = bt.queue[:0]
	bt.mu.Unlock()

	bt.run(batch)
	for _, r := range batch {
		close(r.done)
	}

	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, next := range bt.queue {
		if !next.abandoned && !next.leader { // a leader already sends what is queued
			next.leader = true
			next.lead <- struct{}{}
			return
		}
	}
	bt.leading--
}

// run calls the append script for each request of batch: alone for one
// (EVALSHA, or EVAL when Redis lost the script), in one pipeline for more,
// each request whose script was missing then sent again alone.
func (bt *batcher) run(batch []*appendRequest) {
	ctx, client := bt.w.ctx, bt.w.client
	switch len(batch) {
	case 0:
		return
	case 1:
		r := batch[0]
		r.res, r.err = bt.w.appendScript.Run(ctx, client, r.keys, r.args...).Result()
		return
	}
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range batch {
			cmds[i] = bt.w.appendScript.EvalSha(ctx, p, r.keys, r.args...)
		}
		return nil
	})
	for i, r := range batch {
		r.res, r.err = cmds[i].Result()
		if r.err != nil && redis.HasErrorPrefix(r.err, "NOSCRIPT") {
			// Not run: running it again stores the frame once.
			r.res, r.err = bt.w.appendScript.Run(ctx, client, r.keys, r.args...).Result()
		}
	}
}
