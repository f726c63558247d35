package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Registry holds compiled JSON Schemas under their [interactions.SchemaRef]
// and validates values against them. The zero Registry is not usable; call
// [NewRegistry]. A Registry is safe for concurrent use: Register and Validate
// may run at the same time.
type Registry struct {
	mu      sync.RWMutex
	schemas map[interactions.SchemaRef]entry
}

// entry is one registered schema: its compact text and compiled form.
type entry struct {
	text     string
	compiled *sjs.Schema
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{schemas: map[interactions.SchemaRef]entry{}}
}

// Register compiles schema (JSON Schema text) and registers it under ref.
// Registering the same text again under the same ref is a no-op.
//
// Errors: an [*refusal.Error] of code [refusal.CodeInvalidCard] (Path
// "/dataSchemaJson") when ref has no id or a revision below 1, or schema is
// not JSON or not a valid schema (including a $ref to anything outside it);
// of code [refusal.CodeSchemaMismatch] when other text is already registered under
// ref.
func (r *Registry) Register(ref interactions.SchemaRef, schema []byte) error {
	if ref.ID == "" || len(ref.ID) > interactions.MaxIDBytes || ref.Revision < 1 {
		return invalid("a schema is registered under an id and a revision of at least 1", nil)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return invalid("schema is not JSON", err)
	}
	text := compact.String()
	if err := checkNumbers(compact.Bytes()); err != nil {
		return invalid("schema holds a number beyond the exponent limit", err)
	}
	r.mu.RLock()
	old, ok := r.schemas[ref]
	r.mu.RUnlock()
	if ok {
		return sameText(old.text, text)
	}
	compiled, err := compile(text)
	if err != nil {
		return invalid("schema does not compile", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.schemas[ref]; ok {
		return sameText(old.text, text)
	}
	r.schemas[ref] = entry{text: text, compiled: compiled}
	return nil
}

// sameText is nil when a re-registration carries the registered text and
// a schema-mismatch refusal otherwise.
func sameText(registered, text string) error {
	if registered == text {
		return nil
	}
	return &refusal.Error{Code: refusal.CodeSchemaMismatch, Path: "/dataSchemaJson",
		Message: "another schema is already registered under this id and revision"}
}

// invalid is the refusal for a schema that cannot be registered.
func invalid(msg string, err error) error {
	return &refusal.Error{Code: refusal.CodeInvalidCard, Path: "/dataSchemaJson", Message: msg, Err: err}
}

// resourceURL is the URL a schema is compiled under: hierarchical, so a
// relative $ref resolves to another URL that no loader serves, and in the
// reserved .invalid domain, so nothing could ever resolve it.
const resourceURL = "https://chatprotocol.invalid/card-schema.json"

// validate runs the compiled schema and turns a panic of the schema library
// into an error, so that no input can crash the host.
func validate(sch *sjs.Schema, doc any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("schema library panicked: %v", p)
		}
	}()
	return sch.Validate(doc)
}

// MaxExponent is the largest decimal exponent, in absolute value, of a
// number in a validated value. The schema library works with exact
// rationals: a literal such as 1e999999 costs it a million-digit number (a
// tenth of a second) and 1e9999999 crashed it, so larger exponents are
// refused with [refusal.CodeInvalidAnswer] before it sees them.
const MaxExponent = 400

// checkNumbers refuses a value holding a number whose exponent exceeds
// MaxExponent, with the number's JSON pointer under "/value".
func checkNumbers(value json.RawMessage) error {
	dec := jsontext.NewDecoder(bytes.NewReader(value), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // malformed JSON is refused by the parse that follows
		}
		if tok.Kind() != '0' {
			continue
		}
		lit := tok.String()
		i := strings.IndexAny(lit, "eE")
		if i < 0 {
			continue
		}
		exp, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
		if err != nil || exp > MaxExponent || exp < -MaxExponent {
			return &refusal.Error{Code: refusal.CodeInvalidAnswer, Path: "/value" + string(dec.StackPointer()),
				Message: fmt.Sprintf("number exponent beyond ±%d", MaxExponent)}
		}
	}
}

// compile compiles one schema on its own, with loading disabled; a panic of
// the schema library is an error.
func compile(text string) (sch *sjs.Schema, err error) {
	defer func() {
		if p := recover(); p != nil {
			sch, err = nil, fmt.Errorf("schema library panicked: %v", p)
		}
	}()
	doc, err := sjs.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := sjs.NewCompiler()
	c.UseLoader(sjs.SchemeURLLoader{})
	c.DefaultDraft(sjs.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(resourceURL)
}

// SchemaJSON returns the compact text registered under ref, the form
// OpenCardSnapshot.DataSchemaJSON carries to renderers, and whether there
// is one.
func (r *Registry) SchemaJSON(ref interactions.SchemaRef) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.schemas[ref]
	return e.text, ok
}

// Validate implements [interactions.Validator]: it validates value (a JSON
// document) against the schema registered under ref.
//
// Errors: an [*refusal.Error] of code [refusal.CodeUnknownSchema] when nothing is
// registered under ref; of code [refusal.CodeInvalidAnswer] when value is not JSON or
// the schema refuses it, with Path the JSON pointer of the first refused
// location under "/value" (the value's place in a CardResponse).
func (r *Registry) Validate(_ context.Context, ref interactions.SchemaRef, value json.RawMessage) error {
	r.mu.RLock()
	e, ok := r.schemas[ref]
	r.mu.RUnlock()
	if !ok {
		return &refusal.Error{Code: refusal.CodeUnknownSchema,
			Message: fmt.Sprintf("no schema registered as %q revision %d", ref.ID, ref.Revision)}
	}
	if err := checkNumbers(value); err != nil {
		return err
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(value))
	if err != nil {
		return &refusal.Error{Code: refusal.CodeInvalidAnswer, Path: "/value", Message: "value is not JSON", Err: err}
	}
	if err = validate(e.compiled, doc); err == nil {
		return nil
	}
	path, keyword := "/value", ""
	if ve, ok := errors.AsType[*sjs.ValidationError](err); ok {
		leaf := firstLeaf(ve)
		path += pointer(leaf.InstanceLocation)
		if kp := leaf.ErrorKind.KeywordPath(); len(kp) > 0 {
			keyword = kp[len(kp)-1]
		}
	}
	return &refusal.Error{Code: refusal.CodeInvalidAnswer, Path: path,
		Message: "value does not match the card's schema", Err: &SchemaError{keyword: keyword, err: err}}
}

// SchemaError is the cause ([refusal.Error.Err]) of Validate's refusal of a
// value its schema refuses: the schema library's error, with the keyword
// of the rule that refused the member at the refusal's Path. A host may
// show the keyword to the person (it comes from the host's schema, not
// from the submission); the error's text quotes the value and the schema.
type SchemaError struct {
	keyword string
	err     error
}

// Keyword returns the JSON Schema keyword that refused the value ("enum",
// "required", "type" …), or "" when the library names none.
func (e *SchemaError) Keyword() string { return e.keyword }

// Error returns the schema library's text.
func (e *SchemaError) Error() string { return e.err.Error() }

// Unwrap returns the schema library's error.
func (e *SchemaError) Unwrap() error { return e.err }

// firstLeaf follows the first cause down to the most specific error.
func firstLeaf(ve *sjs.ValidationError) *sjs.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

// pointer encodes a location as a JSON pointer (RFC 6901).
func pointer(loc []string) string {
	var b strings.Builder
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escape.Replace(tok))
	}
	return b.String()
}
