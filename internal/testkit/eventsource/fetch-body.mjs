// fetch-body.mjs: requests one URL with Node's own fetch (undici, no npm
// package) and reads the response body straight from res.body's reader,
// byte for byte, until it is done or fails: how a fetch-based client tells
// a stream its server aborted from one that ended (docs/contract.md section
// 14.2). It parses nothing.
//
//   node fetch-body.mjs --url URL [--method GET] [--body TEXT]
//        [--content-type TYPE] [--signal TEXT] [--timeout-ms N]
//
// stdout, one JSON object a line:
//   {"open":{"status":N,"headers":{name:value,...}}} once the response's
//     headers arrived (names lower case, as fetch's Headers has them);
//   {"signal":{"bytes":N}} once the body read so far holds TEXT (--signal),
//     N the bytes read then;
//   {"end":{"bytes":N,"clean":bool,"timeout":bool,"error":E}} last: clean
//     when the reader reported done, else E = {"name","code","message",
//     "cause":{"name","code","message"}} of the error the read (or the
//     fetch) rejected with; timeout when the script's own timeout aborted
//     it (default 30000 ms).
// Exit status: 0 on a clean end, 1 on an error, 3 on the timeout, 64 on bad
// arguments.
import { parseArgs } from 'node:util';

let args;
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      method: { type: 'string', default: 'GET' },
      body: { type: 'string' },
      'content-type': { type: 'string' },
      signal: { type: 'string' },
      'timeout-ms': { type: 'string', default: '30000' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`fetch-body.mjs: ${err.message}\n`);
  process.exit(64);
}
const timeoutMs = Number(args['timeout-ms']);
if (!args.url || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node fetch-body.mjs --url URL [--method M] [--body TEXT] [--content-type T] [--signal TEXT] [--timeout-ms N]\n');
  process.exit(64);
}

const print = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

// describe keeps what tells one error from another: name, code, message,
// and the same of its cause (undici puts the socket's error there).
const describe = (err) => {
  if (err === undefined || err === null) return null;
  const one = (e) => ({ name: String(e?.name ?? ''), code: String(e?.code ?? ''), message: String(e?.message ?? e) });
  const out = one(err);
  if (err.cause !== undefined) out.cause = one(err.cause);
  return out;
};

const ctrl = new AbortController();
let timedOut = false;
const timer = setTimeout(() => {
  timedOut = true;
  ctrl.abort();
}, timeoutMs);

let bytes = 0;
const finish = (clean, err) => {
  clearTimeout(timer);
  print({ end: { bytes, clean, timeout: timedOut, error: describe(err) } });
  process.exit(clean ? 0 : timedOut ? 3 : 1);
};

const init = { method: args.method, signal: ctrl.signal, headers: {} };
if (args.body !== undefined) init.body = args.body;
if (args['content-type'] !== undefined) init.headers['content-type'] = args['content-type'];

let res;
try {
  res = await fetch(args.url, init);
} catch (err) {
  finish(false, err);
}
print({ open: { status: res.status, headers: Object.fromEntries(res.headers) } });
if (res.body === null) finish(true);

const decoder = new TextDecoder();
let text = '';
let signalled = args.signal === undefined;
const reader = res.body.getReader();
for (;;) {
  let chunk;
  try {
    chunk = await reader.read();
  } catch (err) {
    finish(false, err);
  }
  if (chunk.done) finish(true);
  bytes += chunk.value.byteLength;
  if (!signalled) {
    text += decoder.decode(chunk.value, { stream: true });
    if (text.includes(args.signal)) {
      signalled = true;
      text = '';
      print({ signal: { bytes } });
    }
  }
}
