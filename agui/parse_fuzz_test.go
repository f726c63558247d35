package agui

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseInput: any body either parses into a run input with valid
// thread and run ids and at most one resume entry per interrupt, or is
// refused; it never panics.
func FuzzParseInput(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t-1","runId":"r-1","messages":[],"tools":[],"context":[],"state":{},"forwardedProps":{}}`,
		`{"threadId":"t-1","runId":"r-2","messages":[],"resume":[{"interruptId":"card-1","status":"resolved","payload":{"optionId":"yes"}}]}`,
		`{"threadId":"t-1","runId":"r-2","messages":[],"resume":[{"interruptId":"x","status":"resolved"},{"interruptId":"x","status":"cancelled"}]}`,
		`{"threadId":"a","threadId":"b","runId":"r","messages":[]}`,
		"{\"threadId\":\"\xff\",\"runId\":\"r\",\"messages\":[]}",
		`{"THREADID":"t","RUNID":"r","MESSAGES":[]}`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := parseInput(body)
		if err != nil {
			return
		}
		if in.ThreadID == "" || in.RunID == "" || !utf8.ValidString(in.ThreadID) || !utf8.ValidString(in.RunID) {
			t.Fatalf("accepted %q as thread %q run %q", body, in.ThreadID, in.RunID)
		}
		seen := map[string]bool{}
		for _, r := range in.Resume {
			if seen[r.InterruptID] {
				t.Fatalf("accepted two resume entries for %q", r.InterruptID)
			}
			seen[r.InterruptID] = true
		}
	})
}
