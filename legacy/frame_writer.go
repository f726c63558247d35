package legacy

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// frameWriter appends one frame object after its type, remembering the
// first error. at is the JSON pointer of the object being written, for
// the paths of refusals; first is true right after an object opens.
type frameWriter struct {
	b     []byte
	err   error
	at    string
	first bool
}

func (w *frameWriter) name(name string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *frameWriter) open() {
	w.b = append(w.b, '{')
	w.first = true
}

func (w *frameWriter) close() {
	w.b = append(w.b, '}')
	w.first = false
}

func (w *frameWriter) fail(path, message string) {
	if w.err == nil {
		w.err = refusal.New(refusal.CodeInvalidEvent, path, message)
	}
}

func (w *frameWriter) str(name, s string) {
	w.name(name)
	w.b = jsjson.AppendString(w.b, s, false)
}

func (w *frameWriter) optStr(name string, s *string) {
	if s != nil {
		w.str(name, *s)
	}
}

// nonEmpty writes a string member of the Papercusp dialect, whose frames
// hold "" for absent.
func (w *frameWriter) nonEmpty(name, s string) {
	if s != "" {
		w.str(name, s)
	}
}

func (w *frameWriter) num(name string, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail(w.at+"/"+name, "JSON has no NaN or infinite number")
	}
	w.name(name)
	w.b = jsjson.AppendNumber(w.b, f)
}

func (w *frameWriter) optNum(name string, f *float64) {
	if f != nil {
		w.num(name, *f)
	}
}

func (w *frameWriter) optBool(name string, b *bool) {
	if b != nil {
		w.name(name)
		w.b = strconv.AppendBool(w.b, *b)
	}
}

// optRaw writes the JSON text raw, without the whitespace around it, or
// nothing when raw is nil; text that is not JSON is refused at its path.
func (w *frameWriter) optRaw(name string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	if !jsjson.Valid(raw) {
		w.fail(w.at+"/"+name, "not JSON")
		return
	}
	w.name(name)
	w.b = append(w.b, bytes.Trim(raw, " \t\r\n")...)
}

// card writes the members of c's JSON object (docs/contract.md section
// 3.1).
func (w *frameWriter) card(c *Card) {
	at := w.at
	w.str("correlationId", c.CorrelationID)
	w.num("createdAt", c.CreatedAt)
	w.str("prompt", c.Prompt)
	if p := c.Presentation; p != nil {
		w.presentation(p)
	}
	w.optBool("allowDecline", c.AllowDecline)
	w.optNum("timeoutMs", c.TimeoutMs)
	w.optStr("fallbackText", c.FallbackText)
	if r := c.Report; r != nil {
		w.report(r)
	}
	if c.DataSchemaJSON != nil {
		if v, ok := jsjson.Parse(c.DataSchemaJSON); !ok || !isJSONObject(v) {
			w.fail(at+"/dataSchemaJson", "not the text of a JSON object")
		}
		w.optRaw("dataSchemaJson", c.DataSchemaJSON)
	}
	w.unknown(c.Unknown, cardNames)
}

// begin writes the member name and opens its object, whose JSON pointer
// path is w.at until end, for the paths of refusals; it returns the w.at
// before, for end.
func (w *frameWriter) begin(name, path string) (prev string) {
	w.name(name)
	prev, w.at = w.at, path
	w.open()
	return prev
}

// end closes the object begin opened and makes prev w.at again.
func (w *frameWriter) end(prev string) {
	w.close()
	w.at = prev
}

func isJSONObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// presentation writes the member presentation of the card whose path is
// w.at.
func (w *frameWriter) presentation(p *CardPresentation) {
	prev := w.begin("presentation", w.at+"/presentation")
	at := w.at
	w.str("kind", p.Kind)
	if p.Options != nil {
		w.objects("options", len(p.Options), func(i int) { w.option(&p.Options[i], at, i) })
	}
	w.optStr("placeholder", p.Placeholder)
	w.optBool("multiline", p.Multiline)
	w.bound("min", p.Min)
	w.bound("max", p.Max)
	w.optNum("step", p.Step)
	w.optBool("voiceAnswerable", p.VoiceAnswerable)
	w.unknown(p.Unknown, presentationNames)
	w.end(prev)
}

func (w *frameWriter) bound(name string, b *CardBound) {
	switch {
	case b == nil:
	case b.IsString:
		w.str(name, b.String)
	default:
		w.num(name, b.Number)
	}
}

// option writes the members of option i of the presentation at at.
func (w *frameWriter) option(o *CardOption, at string, i int) {
	w.str("id", o.ID)
	w.str("label", o.Label)
	w.optStr("description", o.Description)
	w.optStr("hint", o.Hint)
	w.optStr("style", o.Style)
	w.unknownAt(o.Unknown, optionNames, at, "options", i)
}

// report writes the member report of the card whose path is w.at.
func (w *frameWriter) report(r *Report) {
	prev := w.begin("report", w.at+"/report")
	at := w.at
	w.objects("plans", len(r.Plans), func(i int) { w.plan(&r.Plans[i], at, i) })
	w.optStr("title", r.Title)
	w.unknown(r.Unknown, reportNames)
	w.end(prev)
}

// plan writes the members of plan i of the report at at.
func (w *frameWriter) plan(p *ReportPlan, at string, i int) {
	w.optStr("slug", p.Slug)
	w.str("title", p.Title)
	w.optStr("status", p.Status)
	w.optStr("summary", p.Summary)
	if p.Items != nil {
		w.objects("items", len(p.Items), func(j int) { w.item(&p.Items[j], at, i, j) })
	}
	w.unknownAt(p.Unknown, planNames, at, "plans", i)
}

// item writes the members of item j of plan i of the report at at; the
// path of its kept members is built only when it has some.
func (w *frameWriter) item(it *ReportItem, at string, i, j int) {
	w.optStr("id", it.ID)
	w.str("text", it.Text)
	w.optStr("status", it.Status)
	w.optStr("ref", it.Ref)
	if len(it.Unknown) > 0 {
		w.unknownAt(it.Unknown, itemNames, at+"/plans/"+strconv.Itoa(i), "items", j)
	}
}

// objects writes the array member name of n objects, each opened, given
// its members by members(i) and closed.
func (w *frameWriter) objects(name string, n int, members func(i int)) {
	w.name(name)
	w.array(n, func(i int) {
		w.open()
		members(i)
		w.close()
	})
}

// array writes a JSON array of n elements, each written by elem(i).
func (w *frameWriter) array(n int, elem func(i int)) {
	w.b = append(w.b, '[')
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		elem(i)
	}
	w.b = append(w.b, ']')
}

// unknownAt writes the kept members of element i of the array member name
// of the object at path at (an option, a plan, an item), whose path is
// built only when there are some.
func (w *frameWriter) unknownAt(ms []chatprotocol.Member, known []string, at, name string, i int) {
	if len(ms) == 0 {
		return
	}
	prev := w.at
	w.at = at + "/" + name + "/" + strconv.Itoa(i)
	w.unknown(ms, known)
	w.at = prev
}
