package chatprotocol_test

import (
	"errors"
	"fmt"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func ExampleParseEnvelope() {
	frame := []byte(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel","hint":"from a newer producer"}}`)
	env, err := chatprotocol.ParseEnvelope(frame)
	if err != nil {
		fmt.Println(refusal.CodeOf(err))
		return
	}
	if d, ok := env.Event.(*chatprotocol.DeltaEvent); ok {
		fmt.Printf("turn %s seq %d: %q\n", env.TurnID, env.Seq, d.Text)
	}
	line, _ := env.MarshalJSON()
	fmt.Println(string(line))

	_, err = chatprotocol.ParseEnvelope([]byte(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"seq":3,"event":{"type":"delta","text":"lo"}}`))
	var refused *refusal.Error
	if errors.As(err, &refused) {
		fmt.Println(refused.Code, refused.Path)
	}
	// Output:
	// turn t-1 seq 1: "Hel"
	// {"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel","hint":"from a newer producer"}}
	// invalid-envelope /seq
}

func ExampleChatStateV1_Apply() {
	state := chatprotocol.NewChatStateV1("c-1")
	for _, frame := range []string{
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"tool_call","callId":"call-1","name":"charge_card"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"lifecycle","status":"cancelled"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"lifecycle","status":"cancelled"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-3","seq":3,"event":{"type":"tool_result","callId":"call-1","status":"ok"}}`,
		`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-4","seq":4,"event":{"type":"delta","text":"more"}}`,
	} {
		env, err := chatprotocol.ParseEnvelope([]byte(frame))
		if err == nil {
			err = state.Apply(env)
		}
		if err != nil {
			fmt.Println(env.Seq, "refused:", refusal.CodeOf(err))
			continue
		}
		fmt.Println(env.Seq, "applied")
	}
	turn, _ := state.Turn("t-1")
	fmt.Println(turn.Status, turn.ToolCalls[0].Status)
	// Output:
	// 1 applied
	// 2 applied
	// 2 applied
	// 3 applied
	// 4 refused: turn-terminated
	// cancelled ok
}

func ExampleNegotiateChatVersion() {
	for _, v := range []string{"1", "0", "2", `"1"`, ""} {
		got, err := chatprotocol.NegotiateChatVersion([]byte(v))
		if err != nil {
			fmt.Printf("%q: %s\n", v, refusal.CodeOf(err))
			continue
		}
		fmt.Printf("%q: version %s\n", v, got)
	}
	// Output:
	// "1": version 1
	// "0": version legacy0
	// "2": unsupported-version
	// "\"1\"": unsupported-version
	// "": unsupported-version
}

func ExampleRequireChatCapabilities() {
	lightweight := &chatprotocol.ChatCapabilities{ConnectionReplay: true}
	err := chatprotocol.RequireChatCapabilities(lightweight,
		chatprotocol.CapabilityConnectionReplay, chatprotocol.CapabilityInterruptedTurnRecovery, chatprotocol.CapabilityPersistedHistory)
	var missing *chatprotocol.MissingCapabilitiesError
	if errors.As(err, &missing) {
		fmt.Println(refusal.CodeOf(err), missing.Missing)
	}
	// Output:
	// unsupported-capability [interruptedTurnRecovery persistedHistory]
}
