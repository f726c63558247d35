package recovery_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// One option turns on structured logs: every moment of the turn is a
// log/slog record with the stable keys of package observe.
func ExampleOptions_observer() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == observe.KeyDuration || a.Key == observe.KeyErr {
				return slog.Attr{} // a fixed output for the example: no times, no message text
			}
			return a
		},
	}))
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		Outcome: func(recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{Data: []byte(`{"ok":true}`)}, nil
		},
	})
	turn := recovery.TurnRef{Conversation: "conv-7", Turn: "turn-3"}
	host.Grant("user-42", turn)

	// README:begin
	rec := recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: host, Aborter: host},
		&recovery.Options{Observer: observe.NewSlog(logger)})
	// README:end
	_, _ = rec.Start(ctx, "user-42", turn, []string{"call-charge"})
	_, _ = rec.Execute(ctx, "user-42", recovery.EffectRef{Turn: turn, Effect: "call-charge"}, host)
	_, _ = rec.Execute(ctx, "user-42", recovery.EffectRef{Turn: turn, Effect: "call-invented"}, host)
	_ = rec.Cancel(ctx, "user-42", turn)
	// Output:
	// level=INFO msg=turn.start event=turn.start conversation=conv-7 turn=turn-3
	// level=INFO msg=effect.launch event=effect.launch conversation=conv-7 turn=turn-3 effect=call-charge
	// level=INFO msg=effect.complete event=effect.complete conversation=conv-7 turn=turn-3 effect=call-charge
	// level=WARN msg=effect.refuse event=effect.refuse conversation=conv-7 turn=turn-3 effect=call-invented code=unknown-effect
	// level=INFO msg=turn.end event=turn.end conversation=conv-7 turn=turn-3 status=cancelled
	// level=INFO msg=turn.abort event=turn.abort conversation=conv-7 turn=turn-3 count=0
}
