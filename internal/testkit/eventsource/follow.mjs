// follow.mjs: follows one SSE stream with the npm eventsource package's
// EventSource and prints every message it dispatches as one JSON line,
// {"id","event","data"}, to stdout, in the order dispatched.
//
//   node follow.mjs --url URL --events delta,lifecycle,... [--timeout-ms N]
//
// An EventSource only dispatches named events to listeners of that name, so
// --events lists every event name the stream may carry ("message" is always
// listened to). Every error event is reported on stderr as one JSON line.
//
// Exit status: 0 when the server ends the stream for good with HTTP 204 (the
// package fails the connection: an error event whose readyState is CLOSED,
// code 204); 2 when the connection fails for good any other way (another
// status, another content type); 3 on the timeout (default 60000 ms); 64 on
// bad arguments.
import { EventSource } from 'eventsource';
import { parseArgs } from 'node:util';

let args;
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      events: { type: 'string', default: '' },
      'timeout-ms': { type: 'string', default: '60000' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`follow.mjs: ${err.message}\n`);
  process.exit(64);
}
const timeoutMs = Number(args['timeout-ms']);
if (!args.url || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node follow.mjs --url URL --events a,b,... [--timeout-ms N]\n');
  process.exit(64);
}

const names = new Set(['message', ...args.events.split(',').filter((s) => s !== '')]);
const es = new EventSource(args.url);
let finished = false;

// finish closes the EventSource and exits once stdout has drained.
function finish(code) {
  if (finished) return;
  finished = true;
  clearTimeout(timer);
  es.close();
  process.stdout.write('', () => process.exit(code));
}

const timer = setTimeout(() => {
  process.stderr.write(JSON.stringify({ timeout: timeoutMs }) + '\n');
  finish(3);
}, timeoutMs);

for (const name of names) {
  es.addEventListener(name, (ev) => {
    if (finished) return;
    process.stdout.write(JSON.stringify({ id: ev.lastEventId, event: ev.type, data: ev.data }) + '\n');
  });
}

es.addEventListener('error', (ev) => {
  const closed = es.readyState === EventSource.CLOSED;
  process.stderr.write(JSON.stringify({ error: ev.message ?? null, code: ev.code ?? null, closed }) + '\n');
  if (closed) finish(ev.code === 204 ? 0 : 2);
});
