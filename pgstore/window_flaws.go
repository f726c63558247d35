package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// appendNotifyingEarly is the notifyEarly flaw's Append: the notification
// goes out on a connection of its own, then the frame is stored in a
// transaction that commits notifyEarlyBy later. This package's tests prove
// that the conformance kit catches it; nothing else may use it.
func (w *Window) appendNotifyingEarly(ctx context.Context, args []any, payload string, b *replay.Bounds) error {
	if _, err := w.pool.Exec(ctx, "SELECT pg_notify('"+notifyChannel+"', $1)", payload); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := scanAppended(tx.QueryRow(ctx, sqlAppend, args...), b); err != nil {
			return err
		}
		t := time.NewTimer(w.flaws.notifyEarlyBy)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		return nil
	})
}
