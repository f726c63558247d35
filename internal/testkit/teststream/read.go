package teststream

import (
	"errors"
	"io"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// EventFrames reads r to its end with an [sse.Decoder] of default options and
// returns, for each event frame that is neither a comment nor a heartbeat,
// its last event id and a copy of its data. The error is the decoder's.
func EventFrames(r io.Reader) (ids []string, data [][]byte, err error) {
	d := sse.NewDecoder(r, nil)
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return ids, data, nil
		}
		if err != nil {
			return ids, data, err
		}
		if ev.Comment || ev.Type == sse.EventHeartbeat {
			continue
		}
		ids = append(ids, ev.LastEventID)
		data = append(data, ev.Clone().Data)
	}
}
