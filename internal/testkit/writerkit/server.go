package writerkit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The deadlines of the scenarios' waits: generous, since the machine may
// be loaded and the race detector on, but each ends a test that would
// otherwise hang.
const (
	// ShortWait bounds a wait for what a live stream sends at once.
	ShortWait = 10 * time.Second
	// ClientTimeout bounds a whole exchange of the Go client.
	ClientTimeout = 30 * time.Second
)

// Serve serves h on a loopback HTTP/1.1 test server, net/http's own
// ResponseWriter beneath any wrapper, and returns it. When t ends it calls
// closeHandler (the handler's Close, which aborts every stream still
// served), then closes the server, failing t when that does not end
// within [ShortWait].
func Serve(t testing.TB, h http.Handler, closeHandler func()) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		closeHandler()
		done := make(chan struct{})
		go func() {
			srv.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(ShortWait):
			t.Errorf("writerkit: the test server did not close within %v: a stream outlived its handler's Close", ShortWait)
		}
	})
	return srv
}

// Client returns an HTTP/1.1 client of its own, each exchange bounded by
// [ClientTimeout], whose idle connections close when t ends.
func Client(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: ClientTimeout}
}

// Open sends s's request to srv and returns the response, failing t when
// it does not come.
func Open(t testing.TB, s Subject, base string) *http.Response {
	t.Helper()
	resp, err := Client(t).Do(s.HTTPRequest(t, base))
	if err != nil {
		t.Fatalf("writerkit: %s %s: %v", s.Request.Method, s.Request.Path, err)
	}
	return resp
}
