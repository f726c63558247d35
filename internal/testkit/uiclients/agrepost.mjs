// agrepost.mjs: @ag-ui/client's HttpAgent runs a run against one instance,
// loses its connection at the run's first TEXT_MESSAGE_CONTENT
// (abortRun()), then runs the same run id again, on the same agent,
// against another instance (redisstore/examples/server), as a client
// behind a load balancer does after a dropped connection.
//
//   node agrepost.mjs URL_A URL_B THREAD RUN HEADERS_JSON
//
// It prints one JSON line: {first, second} (each {events, error}) and the
// agent's messages.
import { HttpAgent } from "@ag-ui/client";

const [, , urlA, urlB, threadId, runId, headers] = process.argv;
const agent = new HttpAgent({ url: urlA, threadId, headers: JSON.parse(headers) });
agent.addMessage({ id: "u1", role: "user", content: "What is the refund policy?" });

async function run(cut) {
  const out = { events: [], error: null };
  let aborted = false;
  try {
    await agent.runAgent(
      { runId },
      {
        onEvent: ({ event }) => {
          out.events.push(event);
          if (cut && event.type === "TEXT_MESSAGE_CONTENT" && !aborted) {
            aborted = true;
            agent.abortRun();
          }
        },
      },
    );
  } catch (e) {
    out.error = String(e?.message ?? e);
  }
  return out;
}

const first = await run(true);
agent.url = urlB;
const second = await run(false);
console.log(JSON.stringify({ first, second, messages: agent.messages }));
