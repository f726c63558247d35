// fetch-follow.mjs: follows one SSE stream with the npm
// @microsoft/fetch-event-source package over Node's own fetch, in one of two
// usages (--usage), and prints every message as one JSON line,
// {"id","event","data"}, to stdout, in the order dispatched.
//
//   node fetch-follow.mjs --url URL [--usage advanced|basic] [--timeout-ms N]
//
// advanced (the default), as its README's advanced usage advises: onopen
// accepts a 200 text/event-stream response; onclose throws a retriable
// error, so that a stream the server closes is resumed too; onerror rethrows
// a fatal error and otherwise returns nothing, so the package retries after
// the stream's retry interval, with the Last-Event-ID it holds. A 204 (the
// turn ended, docs/contract.md section 14) is fatal: it stops (the package's
// default onopen refuses a 204 for its content type, and onerror returning
// nothing would then retry it forever).
//
// basic, its README's basic usage: onmessage alone, plus openWhenHidden
// (under Node there is no page to hide). A clean end of a response resolves
// the package's promise: it stops there for good, which after the turn's
// last frame is the turn's end. An error (a cut) is retried after the
// stream's retry interval with the Last-Event-ID it holds. A 204 fails the
// default onopen (its content type), which is retried forever: the script
// gives up on the third 204 (exit 4), counting them in the fetch it gives
// the package as window.fetch, Node's own.
//
// The package calls onmessage for every event, named or not, and also for the
// blank line that ends a comment (": heartbeat"), with empty data and no id,
// where the EventSource rules dispatch nothing: the script drops named events
// (heartbeat) and those empty messages, and counts the latter.
//
// Written for browsers, the package reads window (setTimeout, clearTimeout,
// and fetch when none is given) and document (removeEventListener, on every
// end even with openWhenHidden): under Node the script provides both, as a
// Node user of the package must.
//
// Without the onclose above, a clean end of the response resolves the package's
// promise: it stops for good, also when a server ends a stream before its turn.
//
// stderr: one JSON line per error the package reports to onerror (advanced),
// then one summary line {"done":{"exit","opens","empty","errors","noContent",
// "resolved"}} (opens and errors counted in advanced only, noContent and
// resolved in basic only). Exit status: 0 after a 204 (advanced) or once the
// promise resolved (basic); 2 when the stream fails for good any other way
// (advanced: a 4xx other than 429; another content type is retried); 3 on
// the timeout (default 60000 ms); 4 on the third 204 (basic); 64 on bad
// arguments.
import { fetchEventSource, EventStreamContentType } from '@microsoft/fetch-event-source';
import { parseArgs } from 'node:util';

let args;
try {
  args = parseArgs({
    options: {
      url: { type: 'string' },
      usage: { type: 'string', default: 'advanced' },
      'timeout-ms': { type: 'string', default: '60000' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`fetch-follow.mjs: ${err.message}\n`);
  process.exit(64);
}
const timeoutMs = Number(args['timeout-ms']);
if (!args.url || !['advanced', 'basic'].includes(args.usage) || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: node fetch-follow.mjs --url URL [--usage advanced|basic] [--timeout-ms N]\n');
  process.exit(64);
}

const nodeFetch = globalThis.fetch;
globalThis.window ??= {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  async fetch(input, init) {
    const res = await nodeFetch(input, init);
    if (res.status === 204 && ++stats.noContent >= 3) finish(4);
    return res;
  },
};
globalThis.document ??= { hidden: false, addEventListener() {}, removeEventListener() {} };

class RetriableError extends Error {}
class FatalError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

const stats = { opens: 0, empty: 0, errors: 0, noContent: 0, resolved: false };
const ctrl = new AbortController();
let finished = false;

// finish stops the package and exits once stdout has drained.
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

// onmessage prints msg unless it is named or empty (see the top).
function onmessage(msg) {
  if (finished || (msg.event !== '' && msg.event !== 'message')) return;
  if (msg.data === '' && msg.id === '') {
    stats.empty++;
    return;
  }
  process.stdout.write(JSON.stringify({ id: msg.id, event: 'message', data: msg.data }) + '\n');
}

if (args.usage === 'basic') {
  fetchEventSource(args.url, {
    openWhenHidden: true,
    onmessage,
  }).then(
    () => {
      stats.resolved = true;
      finish(0);
    },
    () => finish(2),
  );
} else {
  fetchEventSource(args.url, {
    fetch: nodeFetch,
    openWhenHidden: true,
    signal: ctrl.signal,
    async onopen(response) {
      stats.opens++;
      if (response.status === 204) {
        throw new FatalError('the turn ended', 204);
      }
      const type = response.headers.get('content-type') ?? '';
      if (response.ok && type.startsWith(EventStreamContentType)) {
        return;
      }
      if (response.status >= 400 && response.status < 500 && response.status !== 429) {
        throw new FatalError(`status ${response.status}`, response.status);
      }
      throw new RetriableError(`status ${response.status}, content type ${type}`);
    },
    onmessage,
    onclose() {
      throw new RetriableError('the server ended the stream');
    },
    onerror(err) {
      stats.errors++;
      const status = err instanceof FatalError ? err.status : null;
      process.stderr.write(JSON.stringify({ error: String(err?.message ?? err), status }) + '\n');
      if (err instanceof FatalError) throw err;
      // nothing: retry after the stream's retry interval
    },
  }).then(
    () => finish(3), // only the timeout's abort resolves
    (err) => finish(err instanceof FatalError && err.status === 204 ? 0 : 2),
  );
}
