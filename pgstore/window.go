package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of [WindowOptions].
const (
	// DefaultWindowMaxFrames is the number of frames a Window retains per
	// turn: 10,000, as [replay.DefaultMaxFrames].
	DefaultWindowMaxFrames = 10_000
	// DefaultWindowMaxBytes is the frame data a Window retains per turn, in
	// bytes: 64 MiB, 64 frames of the default frame limit (on disk, where
	// [replay.DefaultMaxBytes] bounds memory).
	DefaultWindowMaxBytes = 64 << 20
	// DefaultCatchUpInterval is the time after which every waiting reader
	// reads the database again although no notification came: 2 seconds.
	DefaultCatchUpInterval = 2 * time.Second
	// DefaultPatience is how long Read and Wait keep retrying while the
	// database cannot be reached before they return its error: 10 seconds.
	DefaultPatience = 10 * time.Second
	// DefaultQueryTimeout bounds one read of the window: 10 seconds.
	DefaultQueryTimeout = 10 * time.Second
)

// notifyChannel is the channel every Window notifies on and listens to.
const notifyChannel = "pgstore_replay"

// WindowOptions configures a Window; nil means all defaults, and every
// zero field its default.
type WindowOptions struct {
	// MaxFrameBytes is the largest canonical envelope Append stores, in
	// bytes: 0 means [chatprotocol.DefaultMaxFrameBytes] (1 MiB, the
	// reader's default) and a negative value no limit (see
	// [replay.EncodeFrame]).
	MaxFrameBytes int
	// MaxFrames is the number of frames retained per turn: the Append that
	// stores frame n deletes frame n-MaxFrames and moves Lower to it, in
	// the same statement. 0 means [DefaultWindowMaxFrames], a negative value
	// no count bound.
	MaxFrames int
	// MaxBytes bounds the frame data (canonical JSON) retained per turn, in
	// bytes: the Append that goes beyond it deletes the oldest frames until
	// the rest fit, and moves Lower past them, in the same statement; the
	// newest frame is kept whatever its size. 0 means
	// [DefaultWindowMaxBytes], a negative value no byte bound.
	MaxBytes int
	// ListenConfig is the connection the Window's listener holds: one
	// session, for LISTEN, for as long as the Window is open. nil means the
	// pool's own connection configuration. It must reach the server
	// directly (or through a session pooler): a transaction pooler, such
	// as PgBouncer in transaction mode, does not keep a LISTEN.
	ListenConfig *pgx.ConnConfig
	// CatchUpInterval is the time after which every waiting reader reads
	// the database although no notification came, the net under a slow or
	// lost notification; 0 means [DefaultCatchUpInterval], a negative value
	// never (reconnects of the listener still trigger a catch-up read).
	CatchUpInterval time.Duration
	// Patience is how long Read and Wait retry a read that failed because
	// the database could not be reached (a restart, a failover) before they
	// return the error; 0 means [DefaultPatience], a negative value no retry.
	Patience time.Duration
	// QueryTimeout bounds one read of the database; 0 means
	// [DefaultQueryTimeout].
	QueryTimeout time.Duration
	// MaxAge is how long a turn's frames are kept after its newest one;
	// 0 means [DefaultWindowMaxAge]. EndedTTL is the same for a turn that has
	// ended; 0 means [DefaultWindowEndedTTL]. TombstoneTTL is how long the
	// bounds of a trimmed turn are kept after its newest frame; 0 means
	// [DefaultTombstoneTTL], a negative value forever. See Trim.
	MaxAge, EndedTTL, TombstoneTTL time.Duration
	// TrimInterval is the time between two runs of Trim by this Window; 0
	// means [DefaultTrimInterval], a negative value never (the host calls
	// Trim).
	TrimInterval time.Duration
	// Retries is how many times an Append the server rolled back with a
	// serialization failure or a deadlock is run again; 0 means 16.
	Retries int
	// Logger receives the listener's connection failures; nil logs
	// nothing.
	Logger *slog.Logger

	// flaws are known-broken behaviours, set by this package's tests only
	// to prove that the tests catch them.
	flaws windowFlaws
}

// windowFlaws are the known-broken variants of a Window. None may be set
// outside this package's tests.
type windowFlaws struct {
	// notifyEarly notifies on a connection of its own, then commits the
	// frame notifyEarlyBy later: a reader woken by the notification reads
	// before the frame is visible.
	notifyEarly   bool
	notifyEarlyBy time.Duration
	// noCatchUp drops every catch-up read: Wait relies on notifications
	// alone, from the moment it starts, across listener reconnects and
	// without the periodic one.
	noCatchUp bool
}

// Window is a [replay.Window] on PostgreSQL that every instance of a host
// shares, so that a client's reconnect may land on any instance
// (docs/contract.md sections 11 and 14; its design is section 11.8). It
// keeps each frame's event type and canonical envelope bytes as appended,
// and [Window.Read] returns them as they are.
//
// [Window.Append] stores a frame in one statement, its own transaction, at
// read committed or serializable, grouped with the concurrent appends of
// its process, then has every instance notified. [Window.Wait] returns on
// a notification of its turn, on a reconnect of the listener, and at the
// latest after [WindowOptions.CatchUpInterval], so that no reader waits on
// a frame already committed; while the database cannot be reached, Read
// and Wait retry for [WindowOptions.Patience]. Append applies the count and
// byte retention, [Window.Trim] the age retention; a trimmed turn keeps its
// bounds until [WindowOptions.TombstoneTTL].
//
// A Window is safe for concurrent use; Close it when done.
type Window struct {
	pool          *pgxpool.Pool
	maxFrameBytes int
	maxFrames     int
	maxBytes      int // -1: no bound
	catchUp       time.Duration
	patience      time.Duration
	queryTimeout  time.Duration
	retries       int
	maxAge        time.Duration
	endedTTL      time.Duration
	tombstoneTTL  time.Duration
	trimInterval  time.Duration
	log           *slog.Logger
	flaws         windowFlaws

	pub     *publisher
	batcher *appendBatcher
	lis     *listener

	mu       sync.Mutex
	fetchers map[replay.Key]*fetcher

	ctx    context.Context // done on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ replay.Window = (*Window)(nil)

// NewWindow returns a Window on pool's database, which Migrate has brought
// to [LatestVersion], and starts its listener. It fails when opts is out of
// range.
func NewWindow(pool *pgxpool.Pool, opts *WindowOptions) (*Window, error) {
	if pool == nil {
		return nil, errors.New("pgstore: NewWindow needs a pool")
	}
	var o WindowOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxAge < 0 || o.EndedTTL < 0 || o.Retries < 0 {
		return nil, errors.New("pgstore: negative WindowOptions.MaxAge, EndedTTL or Retries")
	}
	w := &Window{
		pool:          pool,
		maxFrameBytes: o.MaxFrameBytes,
		maxFrames:     orDefault(o.MaxFrames, DefaultWindowMaxFrames),
		maxBytes:      max(orDefault(o.MaxBytes, DefaultWindowMaxBytes), -1),
		catchUp:       orDefault(o.CatchUpInterval, DefaultCatchUpInterval),
		patience:      orDefault(o.Patience, DefaultPatience),
		queryTimeout:  o.QueryTimeout,
		retries:       orDefault(o.Retries, defaultRetries),
		maxAge:        orDefault(o.MaxAge, DefaultWindowMaxAge),
		endedTTL:      orDefault(o.EndedTTL, DefaultWindowEndedTTL),
		tombstoneTTL:  orDefault(o.TombstoneTTL, DefaultTombstoneTTL),
		trimInterval:  orDefault(o.TrimInterval, DefaultTrimInterval),
		log:           o.Logger,
		flaws:         o.flaws,
		fetchers:      make(map[replay.Key]*fetcher),
	}
	if w.queryTimeout <= 0 {
		w.queryTimeout = DefaultQueryTimeout
	}
	w.pub = newPublisher(w)
	w.batcher = &appendBatcher{w: w, lanes: appendLanes}
	cfg := o.ListenConfig
	if cfg == nil {
		cfg = pool.Config().ConnConfig
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.lis = newListener(cfg.Copy(), o.Logger, w.catchUp, w.flaws.noCatchUp)
	w.lis.onNotify = w.notified
	w.wg.Go(func() { w.lis.run(w.ctx) })
	w.wg.Go(func() { w.pub.run(w.ctx) })
	if w.trimInterval > 0 {
		w.wg.Go(w.trimLoop)
	}
	return w, nil
}

// Close stops the listener and ends every Wait in progress with an error.
// The pool is the caller's: Close does not close it. Close may be called
// more than once.
func (w *Window) Close() {
	w.batcher.close()
	w.cancel()
	w.wg.Wait()
}

// Capabilities returns what a Window lets a host declare
// (docs/contract.md section 8): connectionReplay and persistedHistory true
// (the frames outlive every process and a restart of the server), and
// interruptedTurnRecovery false: the window replays what was streamed, it
// does not resume an interrupted turn, which takes TurnRecovery
// ([recovery.Store], [NewRecoveryStore]).
func (w *Window) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{ConnectionReplay: true, PersistedHistory: true}
}

// errClosed is the error of a read of a closed Window.
var errClosed = errors.New("pgstore: the window is closed")

// sqlAppend is Append's one statement, its own transaction: it moves the
// turn's latest from $3-1 to $3 (creating the turn row for seq 1), under
// the end rule, inserts the frame at the byte offset after the previous
// one, moves lower past the frames count and byte retention drop and
// deletes them. Byte retention walks the frames from lower+1, one key
// lookup each (LATERAL … LIMIT 1, as readStatement), while the rest would
// not fit (cut): as many steps as frames dropped, plus one, never the new
// frame. It returns the new
// bounds, or no row when the seq or the end rule refused the frame.
//
//	$1 conversation, $2 turn, $3 seq, $4 type, $5 data, $6 the frame ends
//	the turn, $7 it is a tool_result, $8 frames kept (0: no count bound),
//	$9 bytes kept (-1: no byte bound)
const sqlAppend = `WITH RECURSIVE prev AS (
	SELECT coalesce(max(byte_offset + octet_length(data)), 0) AS off FROM pgstore_replay_frames
	WHERE conversation_id = $1 AND turn_id = $2 AND seq = $3 - 1
), old AS (
	SELECT lower FROM pgstore_replay_turns WHERE conversation_id = $1 AND turn_id = $2
), cut(seq, x) AS (
	SELECT old.lower + 1, prev.off + octet_length($5::bytea) - $9 FROM old, prev WHERE $9::bigint >= 0
	UNION ALL
	SELECT c.seq + 1, c.x FROM cut c CROSS JOIN LATERAL (SELECT byte_offset FROM pgstore_replay_frames
		WHERE conversation_id = $1 AND turn_id = $2 AND seq = c.seq LIMIT 1) f
	WHERE f.byte_offset < c.x
), moved AS (
	UPDATE pgstore_replay_turns t
	SET latest = $3, ended = ended OR $6, appended_at = now(),
		lower = greatest(t.lower, CASE WHEN $8::bigint > 0 THEN $3 - $8 ELSE 0 END, (SELECT max(seq) - 1 FROM cut))
	WHERE conversation_id = $1 AND turn_id = $2 AND latest = $3 - 1 AND (NOT ended OR $7)
	RETURNING lower, latest, ended
), created AS (
	INSERT INTO pgstore_replay_turns (conversation_id, turn_id, latest, ended)
	SELECT $1, $2, $3, $6 WHERE $3 = 1 AND NOT EXISTS (SELECT FROM moved)
	ON CONFLICT DO NOTHING
	RETURNING lower, latest, ended
), turn AS (
	SELECT * FROM moved UNION ALL SELECT * FROM created
), frame AS (
	INSERT INTO pgstore_replay_frames (conversation_id, turn_id, seq, type, data, byte_offset)
	SELECT $1, $2, $3, $4, $5, (SELECT off FROM prev) FROM turn
), trimmed AS (
	DELETE FROM pgstore_replay_frames
	WHERE conversation_id = $1 AND turn_id = $2 AND seq > (SELECT lower FROM old) AND seq <= (SELECT lower FROM turn)
)
SELECT t.lower, t.latest, t.ended FROM turn t`

// Append stores env as the next frame of key's turn and returns it (see
// [replay.Window.Append]), in one statement that checks and moves the turn's
// latest seq, inserts the frame's canonical bytes and trims what retention
// drops, in the Window's next batch, then has every instance notified
// (docs/contract.md section 11.8). While its frame waits for a batch, the
// end of ctx takes it off the queue and Append returns ctx's error, nothing
// sent; once its batch is on the wire, Append waits for the answer (bounded
// by [WindowOptions.QueryTimeout]) until ctx ends, and then returns ctx's
// error at once, the outcome unknown as after a broken connection.
// Refusals are [*replay.AppendError] with the turn's bounds and nothing
// stored, with the codes [replay.CheckAppend] and [replay.EncodeFrame]
// give, and invalid-input (no bounds) for a conversation or turn id that
// holds a NUL character or invalid UTF-8. Any other error is the
// database's: when the connection broke after the statement was sent, the
// frame may have been stored, and the writer learns it from the
// sequence-reordered refusal of its retry (or from [Window.Bounds]).
func (w *Window) Append(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	if err := ctx.Err(); err != nil {
		return replay.Frame{}, err
	}
	f, err := replay.EncodeFrame(env, w.maxFrameBytes)
	if err != nil {
		return replay.Frame{}, w.refuse(ctx, key, env, err)
	}
	if env.ConversationID != key.ConversationID || env.TurnID != key.TurnID || env.Seq <= 0 {
		return replay.Frame{}, w.refuse(ctx, key, env, nil)
	}
	if !wire.Storable(key.ConversationID) || !wire.Storable(key.TurnID) {
		return replay.Frame{}, &replay.AppendError{Seq: env.Seq,
			Err: refusal.New(refusal.CodeInvalidInput, "", "a conversation or turn id holds a NUL character or invalid UTF-8")}
	}
	_, toolResult := env.Event.(*chatprotocol.ToolResultEvent)
	ends := replay.EndsTurn(env)
	payload := encodeNotification(key)
	r := &appendRequest{key: key, seq: f.Seq, typ: f.Type, data: f.Data, ends: ends, toolResult: toolResult}
	for range 3 {
		err := w.appendOnce(ctx, r, payload)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, pgx.ErrNoRows):
			return replay.Frame{}, fmt.Errorf("pgstore: append of seq %d: %w", f.Seq, err)
		}
		// Refused by the seq or the end rule: CheckAppend says which,
		// against bounds read after the refusal. They may have moved
		// since (the writer's own lost acknowledgement, read back),
		// making the envelope the next one: then it is tried again.
		if rerr := w.refuse(ctx, key, env, nil); !errors.Is(rerr, errAppendable) {
			return replay.Frame{}, rerr
		}
	}
	return replay.Frame{}, fmt.Errorf("pgstore: append of seq %d: the turn keeps moving", f.Seq)
}

// appendOnce runs r's statement once: in the Window's next batch, or alone
// (with retries on a serialization failure or a deadlock) when the batch
// failed on the server; then it announces the frame. It returns nil when
// the frame was stored, pgx.ErrNoRows when the seq or the end rule refused
// it, or the database's error.
func (w *Window) appendOnce(ctx context.Context, r *appendRequest, payload string) error {
	if w.flaws.notifyEarly {
		return w.retry(ctx, func() error { return w.appendNotifyingEarly(ctx, r.args(w.maxFrames, w.maxBytes), payload, &r.bounds) })
	}
	r.done, r.err, r.fallback = make(chan struct{}), nil, false
	sent, err := w.batcher.submit(ctx, r)
	if !sent {
		return err // nothing reached the server
	}
	if err == nil { // else ctx ended while the batch was on the wire: r is still the batch's
		err = r.err
		if r.fallback {
			err = w.retry(ctx, func() error { return w.appendAlone(ctx, r) })
		}
	}
	var pgErr *pgconn.PgError
	if !errors.Is(err, pgx.ErrNoRows) && !errors.As(err, &pgErr) {
		// Stored, or maybe stored (an answer lost with its connection):
		// announce it. A notification of nothing new costs a read. A
		// server error rolled the statement back: nothing to announce.
		w.pub.announce(payload)
	}
	return err
}

// appendAlone runs r's frame in a statement of its own (sqlAppend).
func (w *Window) appendAlone(ctx context.Context, r *appendRequest) error {
	return scanAppended(w.pool.QueryRow(ctx, sqlAppend, r.args(w.maxFrames, w.maxBytes)...), &r.bounds)
}

// errAppendable is refuse's answer when the bounds it read allow env.
var errAppendable = errors.New("pgstore: appendable")

func scanAppended(row pgx.Row, b *replay.Bounds) error {
	var lower, latest int64
	var ended bool
	if err := row.Scan(&lower, &latest, &ended); err != nil {
		return err
	}
	*b = replay.Bounds{Lower: lower, Latest: latest, Ended: ended}
	return nil
}

// refuse reads key's bounds and returns env's refusal against them: cause
// (an EncodeFrame refusal) when set, else replay.CheckAppend's, or
// errAppendable when the bounds allow env.
func (w *Window) refuse(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope, cause error) error {
	var b replay.Bounds
	err := w.retry(ctx, func() (err error) {
		b, _, err = w.query(ctx, key, nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: reading the bounds of a refused append: %w", err)
	}
	if cause != nil {
		var seq int64
		if env != nil {
			seq = env.Seq
		}
		return &replay.AppendError{Seq: seq, Bounds: b, Err: cause}
	}
	if err := replay.CheckAppend(key, b, env); err != nil {
		return err
	}
	return errAppendable
}

// retry runs op again after a serialization failure or a deadlock, up to
// w.retries times.
func (w *Window) retry(ctx context.Context, op func() error) error {
	s := settings{retries: w.retries}
	return s.retry(ctx, op)
}
