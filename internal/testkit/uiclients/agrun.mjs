// agrun.mjs: @ag-ui/client's HttpAgent, which verifies every event against
// the 1.x schema and the sequencing rules, runs against the agui bridge
// (agui/realclients_test.go).
//
//   node agrun.mjs URL THREAD HEADERS_JSON ANSWER_JSON
//
// It runs run-1; when that run ends with an interrupt outcome and
// ANSWER_JSON is not "null", it runs run-2 on the same agent, answering
// every interrupt with resume entries {status: "resolved", payload:
// ANSWER_JSON}, as the client requires before the thread goes on. It prints
// one JSON line: {runs: [{events, outcome, error}], messages}.
import { HttpAgent } from "@ag-ui/client";

const [, , url, threadId, headers, answer] = process.argv;
const agent = new HttpAgent({ url, threadId, headers: JSON.parse(headers) });
agent.addMessage({ id: "u1", role: "user", content: "What is the refund policy?" });

async function run(runId, resume) {
  const out = { events: [], outcome: null, error: null };
  try {
    await agent.runAgent(
      { runId, ...(resume ? { resume } : {}) },
      {
        onEvent: ({ event }) => { out.events.push(event); },
        onRunFinishedEvent: ({ event }) => { out.outcome = event.outcome ?? null; },
      },
    );
  } catch (e) {
    out.error = String(e?.message ?? e);
  }
  return out;
}

const runs = [await run("run-1")];
const payload = JSON.parse(answer);
if (payload !== null && runs[0].outcome?.type === "interrupt") {
  const resume = runs[0].outcome.interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload }));
  runs.push(await run("run-2", resume));
}
console.log(JSON.stringify({ runs, messages: agent.messages }));
