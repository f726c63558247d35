package blocks

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// seedBodies are the parity table's inputs plus the known attacks.
func seedBodies(f *testing.F, fn string) {
	for _, c := range readParity(f) {
		if c.Fn == fn {
			f.Add(c.Input)
		}
	}
	for _, s := range []string{
		`{"QUESTION":"q","Plans":[]}`, `{"questionſ":"q"}`, "{\"question\\u0000\":\"q\"}",
		`{"question":"a","question":"b","plans":[{"title":"x"}],"plans":[{"slug":"y"}]}`,
		`{"question":"q","plans":[{"title":"t"}],"x":1e400}`, "\ufeff{\"question\":\"q\"}",
		`{"question":"\ud800\udc00\ud800","plans":[{"title":"\udfff"}]}`, "{\"question\":\"\xff\xe2\x82\"}",
		`{"question":"q","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"question":"</ask>","plans":[{"title":"</report>"}]}`,
	} {
		f.Add(s)
	}
}

// checkAsk fails when b is not in the parser's normal form or does not
// survive MarshalJSON and SerializeAskTag.
func checkAsk(t *testing.T, b AskBlock) {
	if b.Question == "" || jsjson.Trim(b.Question) != b.Question {
		t.Fatalf("question %q not normal", b.Question)
	}
	for _, o := range b.Options {
		if o.ID == "" || o.Label == "" || jsjson.Trim(o.ID) != o.ID {
			t.Fatalf("option %+v not normal", o)
		}
	}
	body, _ := b.MarshalJSON()
	if again, ok := ParseAskBody(string(body)); !ok || !reflect.DeepEqual(again, b) {
		t.Fatalf("%s reads back as %+v", body, again)
	}
	if again, ok := ParseAskTag(SerializeAskTag(b)); !ok || !reflect.DeepEqual(again, b) {
		t.Fatalf("tag of %+v reads back as %+v", b, again)
	}
}

func checkReport(t *testing.T, b ReportBlock) {
	if len(b.Plans) == 0 {
		t.Fatal("block without plans")
	}
	for _, p := range b.Plans {
		if p.Title == "" || (p.Items != nil && len(p.Items) == 0) {
			t.Fatalf("plan %+v not normal", p)
		}
		for _, it := range p.Items {
			if it.Text == "" {
				t.Fatalf("item %+v not normal", it)
			}
		}
	}
	body, _ := b.MarshalJSON()
	if again, ok := ParseReportBody(string(body)); !ok || !reflect.DeepEqual(again, b) {
		t.Fatalf("%s reads back as %+v", body, again)
	}
	if again, ok := ParseReportTag(SerializeReportTag(b)); !ok || !reflect.DeepEqual(again, b) {
		t.Fatalf("tag of %+v reads back as %+v", b, again)
	}
}

func FuzzParseAskBody(f *testing.F) {
	seedBodies(f, "ask-body")
	f.Fuzz(func(t *testing.T, s string) {
		if b, ok := ParseAskBody(s); ok {
			checkAsk(t, b)
		}
	})
}

func FuzzParseReportBody(f *testing.F) {
	seedBodies(f, "report-body")
	f.Fuzz(func(t *testing.T, s string) {
		if b, ok := ParseReportBody(s); ok {
			checkReport(t, b)
		}
	})
}

// The reference's tag patterns, as RE2 can state them: ASCII letters in
// either case and nothing else (see indexOpenTag), lazy body.
var (
	refAskTag    = regexp.MustCompile(`<[aA][sS][kK]>([\s\S]*?)</[aA][sS][kK]>`)
	refReportTag = regexp.MustCompile(`<[rR][eE][pP][oO][rR][tT]>([\s\S]*?)</[rR][eE][pP][oO][rR][tT]>`)
)

// refBody returns the body the reference gives JSON.parse: the trimmed
// capture of its regular expression.
func refBody(re *regexp.Regexp, s string) (string, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return jsjson.Trim(m[1]), true
}

// FuzzParseAskTag compares ParseAskTag with the reference's reading (regular
// expression, trim, JSON.parse) wherever the two must agree: text with at
// most one closing tag, so none can hide inside a JSON string.
func FuzzParseAskTag(f *testing.F) {
	seedTags(f, "ask-tag", "ask")
	f.Fuzz(func(t *testing.T, s string) {
		compareWithReference(t, s, "ask", refAskTag, ParseAskTag, ParseAskBody, checkAsk)
	})
}

// FuzzParseReportTag is FuzzParseAskTag for <report>.
func FuzzParseReportTag(f *testing.F) {
	seedTags(f, "report-tag", "report")
	f.Fuzz(func(t *testing.T, s string) {
		compareWithReference(t, s, "report", refReportTag, ParseReportTag, ParseReportBody, checkReport)
	})
}

// compareWithReference checks a tag parser's answer on s for normal form
// and, when s has at most one closing tag, against the reference's reading.
func compareWithReference[B any](t *testing.T, s, tag string, re *regexp.Regexp,
	parseTag, parseBody func(string) (B, bool), check func(*testing.T, B)) {
	b, ok := parseTag(s)
	if ok {
		check(t, b)
	}
	if strings.Count(strings.ToLower(s), "</"+tag+">") > 1 {
		return
	}
	var want B
	wantOK := false
	if body, found := refBody(re, s); found {
		want, wantOK = parseBody(body)
	}
	if ok != wantOK || !reflect.DeepEqual(b, want) {
		t.Fatalf("tag parser %+v %v, reference reading %+v %v", b, ok, want, wantOK)
	}
}

func seedTags(f *testing.F, fn, tag string) {
	for _, c := range readParity(f) {
		if c.Fn == fn {
			f.Add(c.Input)
		}
	}
	for _, s := range []string{
		"<" + tag + ">\ufeff{\"question\":\"q\",\"plans\":[{\"title\":\"t\"}]}\u00a0</" + tag + ">",
		"<" + strings.ToUpper(tag) + ">{\"question\":\"q\",\"plans\":[{\"slug\":\"s\"}]}</" + tag + ">",
		"<" + strings.ReplaceAll(tag, "s", "ſ") + ">{\"question\":\"q\"}</" + tag + ">",
		"<" + tag + ">{\"question\":\"</" + tag + ">\",\"plans\":[{\"title\":\"</" + tag + ">\"}]}</" + tag + ">",
		"<" + tag + ">\u0085{\"question\":\"q\"}</" + tag + ">",
		"<" + tag + ">{\"question\":\"q\"} trailing</" + tag + ">",
		"<" + tag + "><" + tag + ">{\"question\":\"q\"}</" + tag + ">",
	} {
		f.Add(s)
	}
}
