// page.js: follows one SSE stream with the browser's own EventSource and,
// once the stream is closed for good (an error event with readyState
// CLOSED, which a browser reports when the server answers 204), POSTs what it
// collected as JSON to the result URL:
//
//   {"messages": [{"id","event","data"}, ...], "opens": N, "errors": N}
//
// Parameters come from the page's query string: src (the stream URL) and
// result (the URL to POST to), both same-origin with the page. It listens
// with onmessage alone: every envelope of a version-1 stream dispatches as a
// message.
(function () {
  'use strict';
  var params = new URLSearchParams(window.location.search);
  var src = params.get('src');
  var result = params.get('result');
  var messages = [];
  var opens = 0;
  var errors = 0;
  var done = false;
  var status = document.getElementById('status');

  function post(body, attempt) {
    // The POST may meet a connection the test's proxy cuts: retry a few times.
    fetch(result, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body })
      .then(function (res) {
        if (!res.ok) throw new Error('status ' + res.status);
        status.textContent = 'posted';
      })
      .catch(function (err) {
        if (attempt < 10) {
          setTimeout(function () { post(body, attempt + 1); }, 100);
        } else {
          status.textContent = 'post failed: ' + err;
        }
      });
  }

  var es = new EventSource(src);
  es.onmessage = function (ev) {
    if (!done) messages.push({ id: ev.lastEventId, event: ev.type, data: ev.data });
  };
  es.addEventListener('open', function () { opens++; });
  es.addEventListener('error', function () {
    errors++;
    if (es.readyState !== EventSource.CLOSED || done) return;
    done = true;
    es.close();
    status.textContent = 'closed';
    post(JSON.stringify({ messages: messages, opens: opens, errors: errors }), 0);
  });
})();
