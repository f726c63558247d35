package legacy

import (
	"reflect"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
)

// strictCases are frames with whether decodeStrict takes them.
var strictCases = []struct {
	d     Dialect
	frame string
	takes bool
}{
	{Scout, `{"type":"token","content":"Hel"}`, true},
	{Scout, " \r\n{ \"content\" : \"a\\n\\\"b\\\" \\u00fc \\ud83d\\udc5f \\/\" , \"type\":\"token\" }\t", true},
	{Scout, `{"type":"token","content":"x","extra":[1,-2.5e+3,{"a":null,"a":true}],"more":{"deep":[[[]]]}}`, true},
	{Scout, `{"type":"session","sessionId":""}`, true},
	{Scout, `{"type":"tool_start","tool":"search"}`, true},
	{Scout, `{"type":"tool_start","tool":"search","callId":"c-1"}`, true},
	{Scout, `{"type":"card_closed","correlationId":"k"}`, true},
	{Scout, `{"type":"error","message":"boom"}`, true},
	{Scout, `{"type":"navigate","href":"/p"}`, true},
	{Scout, `{"type":"products","products":[{"sku":"A-1","price":89.0}],"type2":"x"}`, true},
	{Scout, `{"type":"delta","text":"a papercusp type is a product type in scout"}`, true},
	{Papercusp, `{"type":"delta","text":"Hel"}`, true},
	{Papercusp, `{"type":"token","content":"a scout type is a product type in papercusp"}`, true},

	{Scout, `{"type":"token","content":"a","content":"b"}`, false},     // duplicate: last one wins in JSON.parse
	{Scout, `{"type":"token","type":"products"}`, false},               // duplicate type
	{Scout, `{"schemaVersion":1,"type":"token","content":"x"}`, false}, // not legacy
	{Scout, `{"type":"token","content":null}`, false},                  // null is absent: refused
	{Scout, `{"type":"token","content":7}`, false},                     // wrong type: refused
	{Scout, `{"type":"token"}`, false},                                 // missing: refused
	{Scout, `{"type":"tool_start","tool":"t","callId":null}`, false},   // null optional member
	{Scout, `{"typ\u0065":"token","content":"x"}`, false},              // escaped name
	{Scout, `{"type":"token","content":"\ud800"}`, false},              // lone surrogate
	{Scout, "{\"type\":\"token\",\"content\":\"\xff\"}", false},        // invalid UTF-8
	{Scout, "\ufeff{\"type\":\"token\",\"content\":\"x\"}", false},     // BOM
	{Scout, `{"type":"token","content":"x"} {}`, false},                // data after
	{Scout, `{"type":"token","content":"x",}`, false},                  // trailing comma
	{Scout, `{"type":"token","content":"x","n":01}`, false},            // bad number
	{Scout, `{"type":"token","content":"tab	inside"}`, false},          // raw control character
	{Scout, `{"type":"card","card":{"correlationId":"k"}}`, false},     // object member: general path
	{Scout, `{"type":"done"}`, false},                                  // object member in its type
	{Scout, `{"type":"state","version":1}`, true},
	{Scout, `{"type":"state","version":7,"snapshot":{"cart":{"items":[1,2],"total":9.5}}}`, true},
	{Scout, `{"type":"state","snapshot":null,"version":-0}`, true},
	{Scout, `{"type":"state","version":1e3,"snapshot":"s"}`, true},
	{Papercusp, `{"type":"tool_call","callId":"c","name":"n","input":{"q":"x"}}`, true},
	{Papercusp, `{"type":"tool_result","status":"ok","output":[1,{"a":null}]}`, true},
	{Scout, `{"type":"state","version":1.5}`, true},                                       // a number, as the reference types it
	{Scout, `{"type":"state","version":1e400}`, false},                                    // Infinity: refused
	{Scout, `{"type":"state","version":9007199254740992}`, true},                          // a number beyond 2^53-1 too
	{Scout, `{"type":"state","snapshot":{}}`, false},                                      // no version: refused
	{Scout, `{"type":"tool_start","tool":"t","callId":""}`, true},                         // an empty call id is present
	{Scout, `{"type":"state","version":null}`, false},                                     // null number: the general path
	{Scout, `{"type":"state","version":"1"}`, false},                                      // wrong type: refused
	{Scout, `{"type":7}`, false},                                                          // type not a string
	{Scout, `{"content":"x"}`, false},                                                     // no type
	{Scout, `["type","token"]`, false},                                                    // not an object
	{Scout, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"type":"products"}`, false}, // too many members
	{Scout, `{"type":"products","x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`, false},
}

func TestDecodeStrictTakesOnlyWhatItReadsExactly(t *testing.T) {
	for _, c := range strictCases {
		f, ok := decodeStrict([]byte(c.frame), c.d)
		assert.Equal(t, c.takes, ok, "%s %q", c.d, c.frame)
		if ok {
			want, err := decodeGeneral([]byte(c.frame), c.d)
			assert.NoError(t, err)
			assert.Equal(t, want, f, "%q", c.frame)
		}
	}
	f, ok := decodeStrict([]byte(`{"type":"token","content":"a\nb"}`), Scout)
	assert.True(t, ok)
	assert.Equal(t, &TokenFrame{Content: "a\nb"}, f)
}

// FuzzDecodeStrict compares the fast path with the general one: whenever
// decodeStrict takes a frame, it must return what decodeGeneral returns.
func FuzzDecodeStrict(f *testing.F) {
	for _, c := range strictCases {
		f.Add([]byte(c.frame), c.d == Papercusp)
	}
	f.Fuzz(func(t *testing.T, data []byte, papercusp bool) {
		d := Scout
		if papercusp {
			d = Papercusp
		}
		fast, ok := decodeStrict(data, d)
		if !ok {
			return
		}
		general, err := decodeGeneral(data, d)
		if err != nil {
			t.Fatalf("%q: the fast path took a frame the general path refuses: %v", data, err)
		}
		if !reflect.DeepEqual(fast, general) {
			t.Fatalf("%q: fast %#v, general %#v", data, fast, general)
		}
	})
}
