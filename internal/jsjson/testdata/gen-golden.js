// Regenerates jsparse-golden.jsonl: what a browser's TextDecoder + JSON.parse
// make of each input. Run with Node.js 20 or later, from this directory:
//   node gen-golden.js > jsparse-golden.jsonl
//   node gen-golden.js trim > es-whitespace.json
// The second lists every code point that String.prototype.trim removes.
// Each line: {"hex": input bytes, "ok": JSON.parse accepted, "canon": the
// value written with sorted members, ±Infinity as bare words and -0 as -0,
// or null when !ok}. The Go test reads the file; Node is not needed to run it.
'use strict';
const dec = new TextDecoder('utf-8', { ignoreBOM: true });
const B = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const inputs = [
  '{}', '[]', ' \t\n\r1 \r\n', '\ufeff{}', '{}\ufeff', '\u00a0{}', '\u000b1', '\u000c1', '\u20281',
  'null', 'true', 'false', 'tru', 'nul', 'true false', 'truex', '', ' ',
  '0', '-0', '1', '-1', '0.1', '1E+2', '1e-2', '1.5e3', '01', '-01', '1.', '.5', '-', '+1', '--1', '1e', '1e+', '0x10',
  'Infinity', 'NaN', '1e400', '-1e400', '1e-400', '5e-324', '2.4703282292062327e-324', '1.7976931348623157e308',
  '1.7976931348623158e308', '1.7976931348623159e308', '123456789012345678901234567890', '0.30000000000000004',
  '[1,]', '[,1]', '[1 2]', '{"a":1,}', '{,}', '{"a" 1}', '{"a":}', '{a:1}', "{'a':1}", '{"a":1 "b":2}', '[1]]', '{"a":1}}',
  '{"a":1,"a":2}', '{"a":{"x":1},"a":{"y":2}}', '{"a":[1],"a":null}', '{"A":1,"a":2}', '{"type":"x","TYPE":"y"}',
  '{"__proto__":1}', '{"constructor":{"a":1}}', '{"":0}', '{"1":1,"0":0,"b":2}',
  '"\\ud800"', '"\\udc00"', '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"', '"\\udc00\\ud800"', '"\\ud800\\u0041"', '"\\ud800\\ud800\\udc00"',
  '"\\ud83d"', '"x\\ud83dy"', '"\\ud83d\\n"', '"\\u00e9\\u0000\\u001f"', '"\\/\\b\\f\\n\\r\\t\\"\\\\"', '"\\x"', '"\\u12"', '"\\u12g4"', '"\\U0041"', '"\\\'"',
  '"a\u0000"', '"a\u001fb"', '"\u007f"', '"\u2028\u2029"', '"tab\there"', '"\ufeff"', '"unterminated', '"\\"',
  B('"', [0xe2, 0x82, 0x41], '"'), B('"', [0xed, 0xa0, 0x80], '"'), B('"', [0xf0, 0x9f, 0x98], '"'), B('"', [0xf0, 0x9f, 0x98, 0x80], '"'),
  B('"', [0xc0, 0xaf], '"'), B('"', [0xff], '"'), B('"', [0xf4, 0x90, 0x80, 0x80], '"'), B('"', [0xe0, 0x80, 0x80], '"'),
  B('"', [0xc2], '"'), B('"', [0xef, 0xbf, 0xbd], '"'), B('"', [0xe2, 0x82]), B([0xff], '1'), B('1', [0x80]), B('{"', [0xed, 0xb0, 0x80], '":1}'),
  B('"a', [0xf1, 0x80], 'b"'), B('"a', [0xf4, 0x8f, 0xbf, 0xbf], '"'), B('"', [0xed, 0x9f, 0xbf], '"'),
  '[[[[]]]]', '[{"a":[{"b":[]}]}]', '['.repeat(3000) + ']'.repeat(3000), '['.repeat(3000) + ']'.repeat(2999),
  '{"a":'.repeat(2000) + '1' + '}'.repeat(2000),
];
function canon(v) {
  if (typeof v === 'number') {
    if (v === Infinity) return 'Infinity';
    if (v === -Infinity) return '-Infinity';
    if (Object.is(v, -0)) return '-0';
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return '[' + v.map(canon).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}
if (process.argv[2] === 'trim') {
  const ws = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    if (String.fromCodePoint(c).trim() === '') ws.push(c);
  }
  process.stdout.write(JSON.stringify(ws) + '\n');
  process.exit(0);
}
for (const input of inputs) {
  const buf = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  let ok = true;
  let value;
  try {
    value = JSON.parse(dec.decode(buf));
  } catch {
    ok = false;
  }
  process.stdout.write(JSON.stringify({ hex: buf.toString('hex'), ok, canon: ok ? canon(value) : null }) + '\n');
}
