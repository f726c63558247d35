// Command newcomer is a whole conversation service in a few lines of host
// code (package service) on the in-memory stores:
//
//	ADDR=127.0.0.1:8080 go run ./examples/newcomer
//
// then, as alice, start a turn with useChat's protocol and read the chat's
// history:
//
//	curl -N -H 'Authorization: Bearer alice-token' -H 'Content-Type: application/json' \
//	  -d '{"id":"chat-1","message":{"id":"m1","role":"user","parts":[{"type":"text","text":"Refunds?"}]}}' http://ADDR/api/chat
//	curl -H 'Authorization: Bearer alice-token' http://ADDR/api/chat/chat-1/messages
//
// The same service on PostgreSQL, only the store constructors changed, is
// pgstore/examples/newcomer.
package main

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/examples/newcomer/service"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ln, err := net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080"))
	if err == nil {
		log.Info("serving", "addr", ln.Addr().String())
		err = service.Serve(ctx, ln, memory(), log)
	}
	if err != nil {
		log.Error("newcomer", "err", err)
		os.Exit(1)
	}
}

// memory returns the in-memory stores, the card store's authority the
// service's access rule.
func memory() conversation.Stores {
	convs := conversation.NewMemoryStore()
	cards := interactions.NewMemoryStore((&conversation.Gate{Store: convs, Access: service.Access}).CardAuthorityFunc(), nil)
	return conversation.Stores{Window: replay.NewMemory(nil), Conversations: convs, Recovery: recovery.NewMemoryStore(nil), Cards: cards}
}
