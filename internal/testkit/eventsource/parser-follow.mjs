// parser-follow.mjs: follows one SSE stream with Node's own fetch and the npm
// eventsource-parser package's EventSourceParserStream, as its README shows
// (response.body through a TextDecoderStream and the parser stream), inside
// the minimal reconnect loop a user writes around it, since the package
// parses and never connects:
//   - each request sends Accept: text/event-stream and, once an event with
//     an id was received, Last-Event-ID with the last such id;
//   - a 204 stops the loop for good (the turn ended, docs/contract.md
//     section 14); any other status than 200, or another content type,
//     stops it too;
//   - a response that ends, cleanly or broken, and a fetch that fails, are
//     followed by a new request after the stream's retry interval (the
//     parser's onRetry), 3000 ms until the stream sent one.
// Events named other than message (heartbeat) are dropped; every other
// event is printed as one JSON line, {"id","event","data"}, to stdout, in
// the order received. The parser stream never emits an event whose blank
// line it did not read.
//
//   node parser-follow.mjs --url URL [--timeout-ms N]
//
// stderr: one JSON line per broken response or failed fetch
// {"error","clean":false}, and per clean end {"error":null,"clean":true};
// then one summary line {"done":{"exit","opens","cleanEnds","errors","retryMs"}}.
// Exit status: 0 after a 204; 2 on another status or content type; 3 on the
// timeout (default 60000 ms); 64 on bad arguments.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';

let args;
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      'timeout-ms': { type: 'string', default: '60000' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`parser-follow.mjs: ${err.message}\n`);
  process.exit(64);
}
const timeoutMs = Number(args['timeout-ms']);
if (!args.url || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node parser-follow.mjs --url URL [--timeout-ms N]\n');
  process.exit(64);
}

const stats = { opens: 0, cleanEnds: 0, errors: 0, retryMs: 3000 };
const ctrl = new AbortController();
let finished = false;

// finish stops the loop and exits once stdout has drained.
function finish(code) {
  if (finished) return;
  finished = true;
  clearTimeout(timer);
  ctrl.abort();
  process.stderr.write(JSON.stringify({ done: { exit: code, ...stats } }) + '\n');
  process.stdout.write('', () => process.exit(code));
}

const timer = setTimeout(() => {
  process.stderr.write(JSON.stringify({ timeout: timeoutMs }) + '\n');
  finish(3);
}, timeoutMs);

// follow is the user's loop: it returns the exit status.
async function follow() {
  let lastEventId = '';
  for (;;) {
    const headers = { Accept: 'text/event-stream' };
    if (lastEventId !== '') headers['Last-Event-ID'] = lastEventId;
    try {
      const res = await fetch(args.url, { headers, signal: ctrl.signal });
      stats.opens++;
      if (res.status === 204) return 0;
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== 200 || !type.startsWith('text/event-stream')) {
        process.stderr.write(JSON.stringify({ status: res.status, type }) + '\n');
        return 2;
      }
      const events = res.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => { stats.retryMs = ms; } }));
      for await (const ev of events) {
        if (ev.id !== undefined) lastEventId = ev.id;
        if (ev.event !== undefined && ev.event !== 'message') continue;
        process.stdout.write(JSON.stringify({ id: lastEventId, event: 'message', data: ev.data }) + '\n');
      }
      stats.cleanEnds++;
      process.stderr.write(JSON.stringify({ error: null, clean: true }) + '\n');
    } catch (err) {
      if (finished) return 3;
      stats.errors++;
      process.stderr.write(JSON.stringify({ error: String(err?.cause?.code ?? err?.message ?? err), clean: false }) + '\n');
    }
    await sleep(stats.retryMs);
  }
}

follow().then(finish, () => finish(3));
