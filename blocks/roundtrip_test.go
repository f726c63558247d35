package blocks

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf16"

	"pgregory.net/rapid"
)

// jsString draws a string as a JavaScript string may hold it: a sequence of
// UTF-16 code units, including lone surrogates, tag look-alikes and
// ECMAScript whitespace, stored the way the parsers store it (valid UTF-8
// plus WTF-8 for lone surrogates).
func jsString() *rapid.Generator[string] {
	units := rapid.OneOf(
		rapid.SampledFrom([]uint16{'<', '>', '&', '/', '"', '\\', ' ', '\t', '\n', 0, 0x1f, 0xa0, 0xfeff, 0x2028, 0x85, 0x200b}),
		rapid.SampledFrom([]uint16{'a', 's', 'k', 'A', 'S', 'K', 'r', 'e', 'p', 'o', 't', 'R'}),
		rapid.Uint16Range(0xd800, 0xdfff),
		rapid.Uint16(),
	)
	return rapid.Custom(func(t *rapid.T) string {
		us := rapid.SliceOfN(units, 0, 12).Draw(t, "units")
		var b []byte
		for i := 0; i < len(us); i++ {
			u := rune(us[i])
			if utf16.IsSurrogate(u) {
				if u < 0xdc00 && i+1 < len(us) && us[i+1] >= 0xdc00 && us[i+1] <= 0xdfff {
					b = append(b, string(utf16.DecodeRune(u, rune(us[i+1])))...)
					i++
					continue
				}
				b = append(b, 0xe0|byte(u>>12), 0x80|byte(u>>6)&0x3f, 0x80|byte(u)&0x3f)
				continue
			}
			b = append(b, string(u)...)
		}
		return string(b)
	})
}

func askBlock() *rapid.Generator[AskBlock] {
	return rapid.Custom(func(t *rapid.T) AskBlock {
		b := AskBlock{Question: jsString().Draw(t, "question")}
		for range rapid.IntRange(0, 3).Draw(t, "options") {
			b.Options = append(b.Options, AskOption{ID: jsString().Draw(t, "id"), Label: jsString().Draw(t, "label"), Description: jsString().Draw(t, "description")})
		}
		b.Refs = rapid.SliceOfN(jsString(), 0, 3).Draw(t, "refs")
		return b
	})
}

func reportBlock() *rapid.Generator[ReportBlock] {
	return rapid.Custom(func(t *rapid.T) ReportBlock {
		b := ReportBlock{Title: jsString().Draw(t, "title")}
		for range rapid.IntRange(0, 3).Draw(t, "plans") {
			p := ReportPlan{Slug: jsString().Draw(t, "slug"), Title: jsString().Draw(t, "ptitle"), Status: jsString().Draw(t, "status"), Summary: jsString().Draw(t, "summary")}
			for range rapid.IntRange(0, 3).Draw(t, "items") {
				p.Items = append(p.Items, ReportItem{ID: jsString().Draw(t, "id"), Text: jsString().Draw(t, "text"), Status: jsString().Draw(t, "istatus"), Ref: jsString().Draw(t, "ref")})
			}
			b.Plans = append(b.Plans, p)
		}
		return b
	})
}

// TestAskTagRoundTrip: for any block, the serialized tag reads back as the
// block's canonical JSON body reads; a block in normal form reads back
// equal, also with text around the tag.
func TestAskTagRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roundTrip(t, askBlock().Draw(t, "block"), SerializeAskTag, ParseAskTag, ParseAskBody)
	})
}

func TestReportTagRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roundTrip(t, reportBlock().Draw(t, "block"), SerializeReportTag, ParseReportTag, ParseReportBody)
	})
}

func roundTrip[B json.Marshaler](t *rapid.T, b B, serialize func(B) string, parseTag, parseBody func(string) (B, bool)) {
	body, _ := b.MarshalJSON()
	want, wantOK := parseBody(string(body))
	got, gotOK := parseTag(serialize(b))
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("tag gives %+v %v, body gives %+v %v", got, gotOK, want, wantOK)
	}
	if !wantOK {
		return
	}
	again, ok := parseTag("before " + serialize(want) + " after </ask></report>")
	if !ok || !reflect.DeepEqual(again, want) {
		t.Fatalf("normal block %+v reads back as %+v %v", want, again, ok)
	}
}
