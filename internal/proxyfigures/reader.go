package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// arrival is one frame a reader got whole (its blank line read): its seq
// and when.
type arrival struct {
	seq int64
	at  time.Time
}

// response is what a reader saw of one request.
type response struct {
	status   int
	encoding string // Content-Encoding
	frames   []arrival
	// end is how the body ended: "clean" (io.EOF), or the error that broke
	// it ("unexpected EOF", a reset), or "" when ctx ended first.
	end string
}

// readStream GETs url with Accept-Encoding: gzip, as a browser does (and
// decodes gzip itself), and Last-Event-ID when lastID is not empty. It
// reads frames until the body ends or ctx does, sending each whole frame
// with an id to each (when not nil) as it arrives.
func readStream(ctx context.Context, client *http.Client, url, lastID string, each chan<- arrival) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Accept-Encoding", "gzip")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &response{status: res.StatusCode, encoding: res.Header.Get("Content-Encoding")}
	var body io.Reader = res.Body
	if out.encoding == "gzip" {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			out.end = endOf(ctx, err)
			return out, nil
		}
		body = zr
	}
	br := bufio.NewReader(body)
	var id int64
	var hasID bool
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			out.end = endOf(ctx, err)
			return out, nil
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if hasID {
				a := arrival{seq: id, at: time.Now()}
				out.frames = append(out.frames, a)
				if each != nil {
					select {
					case each <- a:
					case <-ctx.Done():
					}
				}
			}
			hasID = false
		case strings.HasPrefix(line, "id:"):
			n, perr := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "id:")), 10, 64)
			if perr != nil {
				return out, fmt.Errorf("id line %q: %w", line, perr)
			}
			id, hasID = n, true
		}
	}
}

// endOf names how a body ended.
func endOf(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return ""
	case errors.Is(err, io.EOF):
		return "clean"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "broken (unexpected EOF)"
	default:
		return "broken (" + err.Error() + ")"
	}
}

// newClient is an http.Client of its own connections, which never
// decodes a body itself.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
}
