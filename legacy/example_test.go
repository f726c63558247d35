package legacy_test

import (
	"context"
	"errors"
	"fmt"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func ExampleUpgradeLegacyChatFrame() {
	ctx := context.Background() // a request's context: a Host may ask its store
	reg, _ := chatprotocol.NewRegistry(map[string]chatprotocol.Channel{"products": chatprotocol.ChannelEvent})
	host := legacy.NewStreamHost(&legacy.StreamHostOptions{Registry: reg})
	for _, data := range []string{
		`{"type":"session","sessionId":"s-7f3a"}`,
		`{"type":"tool_start","tool":"search_products"}`,
		`{"type":"products","products":[]}`,
		`{"type":"cart_mutate","op":"add"}`,
		`{"type":"error","message":"upstream timed out"}`,
	} {
		frame, err := legacy.DecodeLegacyChatFrame([]byte(data), legacy.Scout)
		if err != nil {
			fmt.Println(err)
			continue
		}
		envs, err := legacy.UpgradeLegacyChatFrame(ctx, frame, host)
		if errors.Is(err, refusal.ErrUnsupportedEvent) {
			fmt.Println("not registered:", frame.FrameType())
			continue
		}
		for _, env := range envs {
			out, _ := env.MarshalJSON()
			fmt.Println(string(out))
		}
	}
	// Output:
	// {"schemaVersion":1,"conversationId":"s-7f3a","turnId":"turn-1","eventId":"e-1","seq":1,"event":{"type":"session","sessionId":"s-7f3a"}}
	// {"schemaVersion":1,"conversationId":"s-7f3a","turnId":"turn-1","eventId":"e-2","seq":2,"event":{"type":"tool_call","callId":"turn-1-call-1","name":"search_products"}}
	// {"schemaVersion":1,"conversationId":"s-7f3a","turnId":"turn-1","eventId":"e-3","seq":3,"event":{"type":"products","products":[]}}
	// not registered: cart_mutate
	// {"schemaVersion":1,"conversationId":"s-7f3a","turnId":"turn-1","eventId":"e-4","seq":4,"event":{"type":"error","code":"legacy-error","message":"upstream timed out","retryable":false}}
	// {"schemaVersion":1,"conversationId":"s-7f3a","turnId":"turn-1","eventId":"e-5","seq":5,"event":{"type":"lifecycle","status":"failed"}}
}

func ExampleEncodeLegacyChatFrame() {
	for _, data := range []string{
		`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-6","seq":6,"event":{"type":"delta","text":"Refunds are accepted "}}`,
		`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-8","seq":8,"event":{"type":"result","blocks":[]}}`,
		`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-9","seq":9,"event":{"type":"lifecycle","status":"completed","usage":{"totalTokens":431}}}`,
	} {
		env, err := chatprotocol.ParseEnvelope([]byte(data))
		if err != nil {
			fmt.Println(err)
			continue
		}
		frame, err := legacy.EncodeLegacyChatFrame(env, legacy.Scout)
		if err != nil {
			fmt.Printf("seq %d: %s, the host picks a fallback\n", env.Seq, refusal.CodeOf(err))
			continue
		}
		out, _ := legacy.MarshalChatEvent(frame)
		fmt.Printf("id: %d\ndata: %s\n", env.Seq, out)
	}
	// Output:
	// id: 6
	// data: {"type":"token","content":"Refunds are accepted "}
	// seq 8: unsupported-event, the host picks a fallback
	// id: 9
	// data: {"type":"done","usage":{"totalTokens":431}}
}

func ExampleDecodeLegacyChatFrame() {
	for _, d := range []legacy.Dialect{legacy.Scout, legacy.Papercusp} {
		frame, err := legacy.DecodeLegacyChatFrame([]byte(`{"type":"delta","text":"Hel"}`), d)
		fmt.Printf("%s: %T %v\n", d, frame, err)
	}
	_, err := legacy.DecodeLegacyChatFrame([]byte(`{"schemaVersion":1,"event":{"type":"delta","text":"Hel"}}`), legacy.Scout)
	fmt.Println(err)
	// Output:
	// scout: *legacy.AppFrame <nil>
	// papercusp: *legacy.DeltaFrame <nil>
	// unsupported-version at /schemaVersion: a frame with schemaVersion is not legacy0: read it with ParseEnvelope
}

func ExampleParseChatEvent() {
	frames := []string{
		`{"type":"token","content":"Hel"}`,
		`{"type":"navigate","href":"/products/A-100"}`,
		`{"type":"cart_mutate","op":"add","sku":"A-100"}`,
		`{"TYPE":"token","content":"x"}`,
	}
	for _, f := range frames {
		switch ev := legacy.ParseChatEvent([]byte(f)).(type) {
		case *legacy.TokenFrame:
			fmt.Println("token:", ev.Content, "replayable:", legacy.IsReplayableFrame(ev.FrameType()))
		case *legacy.NavigateFrame:
			fmt.Println("navigate:", ev.Href, "replayable:", legacy.IsReplayableFrame(ev.FrameType()))
		case *legacy.AppFrame:
			fmt.Println("app frame:", ev.Type, string(ev.Raw))
		case nil:
			fmt.Println("not a frame")
		}
	}
	// Output:
	// token: Hel replayable: true
	// navigate: /products/A-100 replayable: false
	// app frame: cart_mutate {"type":"cart_mutate","op":"add","sku":"A-100"}
	// not a frame
}

func ExampleMarshalChatEvent() {
	out, err := legacy.MarshalChatEvent(&legacy.DoneFrame{Usage: &legacy.Usage{TotalTokens: new(812.0)}})
	fmt.Println(string(out), err)
	// Output: {"type":"done","usage":{"totalTokens":812}} <nil>
}

func ExampleFrameChannel() {
	for _, t := range []string{"token", "card", "navigate", "products"} {
		c, ok := legacy.FrameChannel(t)
		fmt.Println(t, c, ok)
	}
	// Output:
	// token event true
	// card state true
	// navigate transient true
	// products invalid false
}
