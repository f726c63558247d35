package sse

import "errors"

// ErrClosed is returned by a Writer's Send, Comment and Heartbeat after
// Close. It is not a wire refusal: it reports a use of the Writer after the
// host ended it.
var ErrClosed = errors.New("sse: writer closed")
