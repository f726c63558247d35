// agabort.mjs: @ag-ui/client's HttpAgent runs against the agui bridge and
// stops the run with abortRun() at its first TEXT_MESSAGE_CONTENT, as a
// stop button does (agui/realclients_test.go).
//
//   node agabort.mjs URL THREAD HEADERS_JSON
//
// It prints one JSON line: {events, aborted, error}, the events the agent
// saw before and after the abort.
import { HttpAgent } from "@ag-ui/client";

const [, , url, threadId, headers] = process.argv;
const agent = new HttpAgent({ url, threadId, headers: JSON.parse(headers) });
agent.addMessage({ id: "u1", role: "user", content: "What is the refund policy?" });

const out = { events: [], aborted: false, error: null };
try {
  await agent.runAgent(
    { runId: "run-1" },
    {
      onEvent: ({ event }) => {
        out.events.push(event);
        if (event.type === "TEXT_MESSAGE_CONTENT" && !out.aborted) {
          out.aborted = true;
          agent.abortRun();
        }
      },
    },
  );
} catch (e) {
  out.error = String(e?.message ?? e);
}
console.log(JSON.stringify(out));
