package main

import (
	"bufio"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// linePrinter prints what decode and follow print for each frame: one line
// of canonical JSON per envelope, or {"appEvent": FRAME} for a legacy
// product frame. It reuses one line buffer.
type linePrinter struct {
	out  *bufio.Writer
	line []byte
}

// envelope prints env's canonical JSON as one line.
func (p *linePrinter) envelope(env *chatprotocol.ChatEventEnvelope) error {
	var err error
	if p.line, err = env.AppendJSON(p.line[:0]); err != nil {
		return err // Apply accepted it, so AppendJSON cannot refuse it
	}
	_, err = p.out.Write(append(p.line, '\n'))
	return err
}

// appEvent prints a product frame as {"appEvent": raw}.
func (p *linePrinter) appEvent(raw []byte) error {
	p.line = append(append(append(p.line[:0], `{"appEvent":`...), raw...), "}\n"...)
	_, err := p.out.Write(p.line)
	return err
}

// printState prints s as one line of JSON, streamed: the state's JSON, as
// long as its texts, is never built in memory beside the state.
func printState(out *bufio.Writer, s *chatprotocol.ChatStateV1) error {
	if err := s.WriteJSON(out); err != nil {
		return err
	}
	return out.WriteByte('\n')
}
