package sse_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

func ExampleEncoder() {
	enc := sse.NewEncoder(os.Stdout)
	_ = enc.Comment("connected")
	_ = enc.Encode(sse.Frame{ID: "1", Event: "delta", Data: []byte(`{"text":"Hel"}`)})
	_ = enc.Heartbeat(1764500000000)
	err := enc.Encode(sse.Frame{ID: "2\ndata: forged"})
	fmt.Println(errors.Is(err, refusal.ErrInvalidFrame))
	// Output:
	// : connected
	//
	// event: delta
	// data: {"text":"Hel"}
	// id: 1
	//
	// event: heartbeat
	// data: {"tsMs":1764500000000}
	//
	// true
}

func ExampleDecoder() {
	stream := ": connected\n\nid: 1\nevent: delta\ndata: {\"text\":\"Hel\"}\n\n" +
		"event: heartbeat\ndata: {\"tsMs\":1764500000000}\n\nid: 2\ndata: line one\r\ndata: line two\r\n\r\n"
	d := sse.NewDecoder(strings.NewReader(stream), nil)
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println("frame", ev.Frame, err)
			return
		}
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		fmt.Printf("frame %d: %s %q (last id %s)\n", ev.Frame, ev.Type, ev.Data, ev.LastEventID)
	}
	// Output:
	// frame 2: delta "{\"text\":\"Hel\"}" (last id 1)
	// frame 4: message "line one\nline two" (last id 2)
}

func ExampleNewWriter() {
	handler := func(rw http.ResponseWriter, r *http.Request) {
		w, err := sse.NewWriter(r.Context(), rw, &sse.WriterOptions{HeartbeatInterval: 15 * time.Second})
		if err != nil {
			http.Error(rw, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		defer w.Close()
		for i, text := range []string{"Hel", "lo"} {
			frame := sse.Frame{ID: fmt.Sprint(i + 1), Event: "delta", Data: fmt.Appendf(nil, `{"text":%q}`, text)}
			if err := w.Send(frame); err != nil {
				return // the client went away, or the write failed
			}
		}
	}
	_ = handler
}
