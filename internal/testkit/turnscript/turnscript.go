// Package turnscript is a test kit: a scripted turn (text, a tool call and
// its result, a card) and a host that produces it into a replay window the
// way a turn producer does, for the bridges' tests, their real-client tests
// and the fan-out benchmark.
package turnscript

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The script's tool call and card, as the bridges' tests expect them.
const (
	ToolName   = "search_docs"
	ToolInput  = `{"q":"refund policy"}`
	ToolOutput = `{"hits":2}`
	CardPrompt = "Was this helpful?"
)

// Words are the deltas before and after the tool call: the text is their
// concatenation.
var (
	Before = []string{"Refunds ", "are ", "accepted ", "within "}
	After  = []string{"30 ", "days."}
)

// Text is the turn's whole text.
func Text() string { return strings.Join(Before, "") + strings.Join(After, "") }

// CallID is the id of the tool call of key's turn.
func CallID(key replay.Key) string { return key.TurnID + "-call-1" }

// CardID is the correlation id of the card of key's turn.
func CardID(key replay.Key) string { return "card-" + key.TurnID }

// Events returns the turn's events: started, Before, the tool call and its
// result, After, the card when card, completed.
func Events(key replay.Key, card bool) []chatprotocol.Event {
	evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
	for _, w := range Before {
		evs = append(evs, &chatprotocol.DeltaEvent{Text: w})
	}
	evs = append(evs,
		&chatprotocol.ToolCallEvent{CallID: CallID(key), Name: ToolName, Input: json.RawMessage(ToolInput)},
		&chatprotocol.ToolResultEvent{CallID: CallID(key), Status: chatprotocol.ToolResultOK, Output: json.RawMessage(ToolOutput)})
	for _, w := range After {
		evs = append(evs, &chatprotocol.DeltaEvent{Text: w})
	}
	if card {
		evs = append(evs, Card(key))
	}
	return append(evs, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
}

// Stepped returns evs, a turn of [Events], as two model steps: step 1
// holds Before and the tool call, the tool's result comes between the
// steps, step 2 holds After and ends finished before the card and the end,
// or is still open at the end when open.
func Stepped(evs []chatprotocol.Event, open bool) []chatprotocol.Event {
	out := []chatprotocol.Event{evs[0], &chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepStarted}}
	for _, ev := range evs[1:] {
		switch ev.(type) {
		case *chatprotocol.CardEvent, *chatprotocol.LifecycleEvent:
			if !open {
				out = append(out, &chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepFinished, Reason: "stop"})
				open = true // once
			}
		}
		out = append(out, ev)
		switch ev.(type) {
		case *chatprotocol.ToolCallEvent:
			out = append(out, &chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepFinished, Reason: "tool_calls"})
		case *chatprotocol.ToolResultEvent:
			out = append(out, &chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepStarted})
		}
	}
	return out
}

// Card is the turn's card: a radio card of two options.
func Card(key replay.Key) *chatprotocol.CardEvent {
	return &chatprotocol.CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: CardID(key), CreatedAt: 1_700_000_000_000,
		CardSpec: cards.CardSpec{Prompt: CardPrompt, AllowDecline: true, Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio,
			Options: []cards.CardOption{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}}}}
}

// Envelope returns the envelope of seq in key's turn.
func Envelope(key replay.Key, seq int64, ev chatprotocol.Event) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: key.TurnID + "-e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

// Envelopes returns evs as key's turn, from seq 1.
func Envelopes(key replay.Key, evs []chatprotocol.Event) []*chatprotocol.ChatEventEnvelope {
	envs := make([]*chatprotocol.ChatEventEnvelope, len(evs))
	for i, ev := range evs {
		envs[i] = Envelope(key, int64(i+1), ev)
	}
	return envs
}

// NewerCard is a card as a newer producer writes it: an unknown member,
// strings holding <, > and &, an escape kept as written, whitespace.
// StoredCard is the bytes a window stores of it, its canonical JSON
// (docs/contract.md section 5.4), which the bridges carry as they are.
const (
	NewerCard = `{"correlationId":"card-1", "createdAt":1700000000000, "prompt":"Pick <one> & go \u00e9",
		"presentation":{"kind":"radio","options":[{"id":"a","label":"A & B"},{"id":"b","label":"<b>"}]}, "zFuture":{"k":"x > y","n":[1,2.50]}}`
	StoredCard = `{"correlationId":"card-1","createdAt":1700000000000,"prompt":"Pick <one> & go \u00e9","presentation":{"kind":"radio","options":[{"id":"a","label":"A & B"},{"id":"b","label":"<b>"}]},"zFuture":{"k":"x > y","n":[1,2.50]}}`
)

// Parse reads events, each an event object's JSON, as the envelopes of
// key's turn from seq 1, as [chatprotocol.ParseEnvelope] reads a frame.
func Parse(key replay.Key, events ...string) ([]*chatprotocol.ChatEventEnvelope, error) {
	envs := make([]*chatprotocol.ChatEventEnvelope, len(events))
	for i, ev := range events {
		seq := int64(i + 1)
		head, err := json.Marshal(struct {
			SchemaVersion  int    `json:"schemaVersion"`
			ConversationID string `json:"conversationId"`
			TurnID         string `json:"turnId"`
			EventID        string `json:"eventId"`
			Seq            int64  `json:"seq"`
		}{1, key.ConversationID, key.TurnID, Envelope(key, seq, nil).EventID, seq})
		if err != nil {
			return nil, err
		}
		env, err := chatprotocol.ParseEnvelope(append(head[:len(head)-1], `,"event":`+ev+`}`...))
		if err != nil {
			return nil, err
		}
		envs[i] = &env
	}
	return envs, nil
}

// Host produces scripted turns into Window, one running turn per chat at
// most, each frame Pace after the previous one. Safe for concurrent use.
type Host struct {
	Window replay.Window
	Pace   time.Duration
	Card   bool // the script opens a card before it completes
	// HoldLast keeps each turn's last frame back until Active is asked for
	// the turn's chat (a client resuming it), or for 20 s at most, so that
	// a test of a resume never races the turn's end on a slow machine.
	HoldLast bool

	mu      sync.Mutex
	steps   bool // SetSteps
	open    bool
	turns   int
	active  map[string]replay.Key
	cancel  map[replay.Key]chan struct{}
	resumed map[string]chan struct{} // HoldLast: closed by Active
	done    sync.WaitGroup
}

// SetSteps makes the turns started from now on two model steps
// ([Stepped]), the second still open at the end when open is set; it may be
// called while a server serves the Host.
func (h *Host) SetSteps(steps, open bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.steps, h.open = steps, open
}

// Start starts a new turn of chat chatID and returns its key; the turn's
// frames are appended by a goroutine of its own, the first before Start
// returns.
func (h *Host) Start(chatID string) replay.Key {
	h.mu.Lock()
	if h.active == nil {
		h.active, h.cancel = make(map[string]replay.Key), make(map[replay.Key]chan struct{})
		h.resumed = make(map[string]chan struct{})
	}
	h.turns++
	key := replay.Key{ConversationID: chatID, TurnID: "t-" + strconv.Itoa(h.turns)}
	h.active[chatID] = key
	stop := make(chan struct{})
	h.cancel[key] = stop
	var resumed chan struct{}
	if h.HoldLast {
		resumed = make(chan struct{})
		h.resumed[chatID] = resumed
	}
	steps, open := h.steps, h.open
	h.mu.Unlock()
	evs := Events(key, h.Card)
	if steps {
		evs = Stepped(evs, open)
	}
	envs := Envelopes(key, evs)
	h.Window.Append(context.Background(), key, envs[0])
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		defer h.end(chatID, key)
		for seq, env := range envs[1:] {
			wait := time.After(h.Pace)
			if resumed != nil && seq == len(envs)-2 {
				wait = holdLast(resumed, h.Pace)
			}
			select {
			case <-stop:
				h.Window.Append(context.Background(), key, Envelope(key, int64(seq+2),
					&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCancelled}))
				return
			case <-wait:
			}
			if _, err := h.Window.Append(context.Background(), key, env); err != nil {
				return
			}
		}
	}()
	return key
}

// holdLast returns a channel that fires pace after resumed is closed, or
// after 20 s.
func holdLast(resumed <-chan struct{}, pace time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	go func() {
		select {
		case <-resumed:
		case <-time.After(20 * time.Second):
		}
		c <- <-time.After(pace)
	}()
	return c
}

func (h *Host) end(chatID string, key replay.Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active[chatID] == key {
		delete(h.active, chatID)
		delete(h.resumed, chatID)
	}
	delete(h.cancel, key)
}

// Active returns the running turn of chatID, and lets its last frame go
// under HoldLast.
func (h *Host) Active(chatID string) (replay.Key, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.resumed[chatID]; c != nil {
		close(c)
		delete(h.resumed, chatID)
	}
	key, ok := h.active[chatID]
	return key, ok
}

// Cancel cancels key's turn, if it runs.
func (h *Host) Cancel(key replay.Key) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if stop, ok := h.cancel[key]; ok {
		close(stop)
		delete(h.cancel, key)
	}
}

// Wait waits until every turn started has ended.
func (h *Host) Wait() { h.done.Wait() }

// EarlierCard is the correlation id of the card of an earlier turn that
// Every's turn closes (docs/contract.md section 13.2).
const EarlierCard = "card-of-an-earlier-turn"

// Every returns a turn holding every event type of docs/contract.md section
// 6 and each tool result status, ending with status end (completed, failed
// or cancelled), for the bridges' schema checks; it closes a card of an
// earlier turn ([EarlierCard]) too, one the turn never saw open. Its model
// steps end finished and failed, a tool result comes between two steps,
// and the last step is still open at the end.
func Every(key replay.Key, end chatprotocol.LifecycleStatus) []chatprotocol.Event {
	total, step := int64(42), int64(20)
	return []chatprotocol.Event{
		&chatprotocol.SessionEvent{SessionID: "s-1"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.CardClosedEvent{CorrelationID: EarlierCard, Outcome: "expired"},
		&chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepStarted},
		&chatprotocol.ProvenanceEvent{Provider: "p", Model: "m"},
		&chatprotocol.CapabilitiesEvent{},
		&chatprotocol.DeltaEvent{Text: "line one\nand \"two\" \u2028 é"},
		&chatprotocol.DeltaEvent{Text: ""},
		&chatprotocol.ToolCallEvent{CallID: "c1", Name: "a"},
		&chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepFinished, Reason: "tool_calls", Usage: &chatprotocol.Usage{TotalTokens: &step}},
		&chatprotocol.ToolResultEvent{CallID: "c1", Status: chatprotocol.ToolResultError, Output: json.RawMessage(`"it broke"`)},
		&chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepStarted},
		&chatprotocol.DeltaEvent{Text: "step two"},
		&chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepFailed, Reason: "provider-overloaded <&>"},
		&chatprotocol.StepEvent{Step: 3, Status: chatprotocol.StepStarted},
		&chatprotocol.ToolCallEvent{CallID: "c2", Name: "b", Input: json.RawMessage(`{"x":[1,2,{"y":null}]}`)},
		&chatprotocol.ToolResultEvent{CallID: "c2", Status: chatprotocol.ToolResultCancelled},
		&chatprotocol.ToolCallEvent{CallID: "c3", Name: "c", Input: json.RawMessage(`[]`)},
		&chatprotocol.ToolResultEvent{CallID: "c3", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"deep":{"er":true}}`)},
		&chatprotocol.ResultEvent{Blocks: []chatprotocol.ResultBlock{}},
		&chatprotocol.StateEvent{Version: 1, Snapshot: json.RawMessage(`{"a":1}`)},
		&chatprotocol.NavigateEvent{Href: "/x"},
		Card(key),
		&chatprotocol.CardClosedEvent{CorrelationID: CardID(key), Outcome: "answered"},
		&chatprotocol.DeltaEvent{Text: "after"},
		&chatprotocol.ErrorEvent{Code: "boom", Message: "it failed", Retryable: false},
		&chatprotocol.LifecycleEvent{Status: end, Reason: "because", Usage: &chatprotocol.Usage{TotalTokens: &total}},
	}
}
