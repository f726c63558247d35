// Command server is the example chat service of examples/server (package
// demo; see its documentation for the turns, endpoints and output) with
// its replay window and its conversations on Redis: -store redis ADDR
// keeps the turns' frames in a [redisstore.Window] and the conversations,
// their turns and each one's running turn in a
// [redisstore.ConversationStore] on the server at ADDR (host:port, or a
// redis:// URL). The recovery store and the card store stay in the
// process's memory in this example: a turn runs, is cancelled and has its
// cards answered in the instance that started it, and they are gone when
// it stops; a real host keeps them on PostgreSQL (pgstore/examples/server).
// It lives in the redisstore module, so that the core module links no
// Redis client; -store memory is examples/server.
//
//	cd redisstore && go run ./examples/server -store redis 127.0.0.1:6379
//
// Every instance on the same Redis serves every turn's stream, the history
// of every conversation, and a useChat resume of a turn another instance
// runs (the running turn is the conversation store's, on Redis): start a
// second one with -addr and another -conversation, then follow the first
// one's turn through the second, its URL the first printed with the
// second's address:
//
//	go run ./examples/server -addr 127.0.0.1:8081 -conversation c-2 -store redis 127.0.0.1:6379
//	go run ../cmd/chatwire follow 'http://127.0.0.1:8081/conversations/c-1/turns/TURN/events?access_token=demo'
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/examples/server/demo"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/redisstore"
)

func main() { demo.Main(open) }

// open is the demo's Opener: the window and the conversations on Redis for
// -store redis, with the recovery and card stores in memory; the in-memory
// stores otherwise.
func open(ctx context.Context, store, addr string, authority interactions.AuthorityFunc) (demo.Stores, error) {
	if store != "redis" {
		return demo.Memory(ctx, store, addr, authority)
	}
	opts := &redis.Options{Addr: addr}
	if strings.Contains(addr, "://") {
		var err error
		if opts, err = redis.ParseURL(addr); err != nil {
			return demo.Stores{}, err
		}
	}
	client := redis.NewClient(opts)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		_ = client.Close()
		return demo.Stores{}, fmt.Errorf("redis at %s: %w", addr, err)
	}
	window, err := redisstore.NewWindow(client, nil)
	if err != nil {
		_ = client.Close()
		return demo.Stores{}, err
	}
	conversations, err := redisstore.NewConversationStore(client, nil)
	if err != nil {
		window.Close()
		_ = client.Close()
		return demo.Stores{}, err
	}
	mem, err := demo.Memory(ctx, "memory", "", authority)
	if err != nil {
		window.Close()
		_ = client.Close()
		return demo.Stores{}, err
	}
	return demo.Stores{Window: window, Conversations: conversations, Recovery: mem.Recovery, Cards: mem.Cards,
		Close: func() { window.Close(); _ = client.Close() }}, nil
}
