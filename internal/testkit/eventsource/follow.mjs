// follow.mjs: follows one SSE stream with the npm eventsource package's
// EventSource and prints every message it dispatches as one JSON line,
// {"id","event","data"}, to stdout, in the order dispatched.
//
//   node follow.mjs --url URL [--package NAME] [--timeout-ms N]
//
// --package names the installed package to import EventSource from:
// eventsource (the 4.x line, the default) or eventsource5 (the 5.x line,
// installed under that alias). It listens as both lines' READMEs show, with
// addEventListener('message') alone: a version-1 stream names no event, so
// every envelope dispatches as a message, and heartbeat events, which are
// named, do not. Every error event is reported on stderr as one JSON line.
//
// Exit status: 0 when the server ends the stream for good with HTTP 204 (the
// package fails the connection: an error event whose readyState is CLOSED,
// code 204); 2 when the connection fails for good any other way (another
// status, another content type); 3 on the timeout (default 60000 ms); 64 on
// bad arguments.
import { parseArgs } from 'node:util';

let args;
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      package: { type: 'string', default: 'eventsource' },
      'timeout-ms': { type: 'string', default: '60000' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`follow.mjs: ${err.message}\n`);
  process.exit(64);
}
const timeoutMs = Number(args['timeout-ms']);
if (!args.url || !['eventsource', 'eventsource5'].includes(args.package) || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node follow.mjs --url URL [--package eventsource|eventsource5] [--timeout-ms N]\n');
  process.exit(64);
}
const { EventSource } = await import(args.package);

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

es.addEventListener('message', (ev) => {
  if (finished) return;
  process.stdout.write(JSON.stringify({ id: ev.lastEventId, event: ev.type, data: ev.data }) + '\n');
});

es.addEventListener('error', (ev) => {
  const closed = es.readyState === EventSource.CLOSED;
  process.stderr.write(JSON.stringify({ error: ev.message ?? null, code: ev.code ?? null, closed }) + '\n');
  if (closed) finish(ev.code === 204 ? 0 : 2);
});
