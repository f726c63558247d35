// uicards.mjs: the npm ai package's Chat (as uichat.mjs drives it) answering
// the uistream bridge's cards in the client's own shapes, with no body
// member of the module's (uistream/cards_realclients_test.go).
//
//   node uicards.mjs PKG API CHAT MODE HEADERS_JSON
//
// MODE:
//   tools    ai 7 and 6 (HandlerOptions.Cards CardsTools): send a message;
//            approve the confirm card's tool approval request with
//            addToolApprovalResponse, which sendAutomaticallyWhen sends;
//            answer the next card, a client-side tool call, with
//            addToolOutput({optionId: "yes"}), sent the same way; then
//            send the same messages again with sendMessage().
//   inplace  ai 5 (CardsInPlace): send a message; answer its card with
//            sendMessage() and the body's answer member, twice.
// Then it checks the messages with the client's validateUIMessages, where
// the line has it. It prints one JSON line: {status, error, errors,
// messages, snapshots}, snapshots the messages after each step.
const [, , pkg, api, chatId, mode, headers] = process.argv;
const ai = await import(pkg);
const { AbstractChat, DefaultChatTransport } = ai;

class State {
  constructor(messages) {
    this.status = "ready";
    this.error = undefined;
    this.messages = messages;
  }
  pushMessage(m) { this.messages = this.messages.concat(m); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)]; }
  snapshot(x) { return structuredClone(x); }
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new State(init.messages ?? []) }); }
}

const errors = [];
const snapshots = [];
const snap = () => snapshots.push(structuredClone(chat.messages));
const sendAutomaticallyWhen = mode === "tools"
  ? (o) => ai.lastAssistantMessageIsCompleteWithApprovalResponses(o) || ai.lastAssistantMessageIsCompleteWithToolCalls(o)
  : undefined;
const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api, headers: JSON.parse(headers) }),
  onError: (e) => errors.push(String(e?.message ?? e)),
  sendAutomaticallyWhen,
});

// until waits, within 20 s, for pred to hold with the chat ready.
const until = async (what, pred) => {
  const deadline = Date.now() + 20000;
  while (!(chat.status === "ready" && pred())) {
    if (chat.status === "error") throw new Error(`${what}: the chat failed: ${chat.error?.message}`);
    if (Date.now() > deadline) throw new Error(`${what}: timed out, status ${chat.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const cardPart = (id) => chat.messages.at(-1)?.parts.find((p) => p.toolCallId === id);

try {
  await chat.sendMessage({ id: "u1", role: "user", parts: [{ type: "text", text: "Refund my order" }] });
  snap();
  if (mode === "tools") {
    const confirm = chat.messages.at(-1).parts.find((p) => p.type === "tool-card" && p.state === "approval-requested");
    if (!confirm) throw new Error("no approval request");
    await chat.addToolApprovalResponse({ id: confirm.approval.id, approved: true });
    await until("the approval", () => cardPart(confirm.toolCallId)?.state === "output-available"
      && chat.messages.at(-1).parts.some((p) => p.type === "tool-card" && p.state === "input-available"));
    snap();
    const ask = chat.messages.at(-1).parts.find((p) => p.type === "tool-card" && p.state === "input-available");
    await chat.addToolOutput({ tool: "card", toolCallId: ask.toolCallId, output: { optionId: "yes" } });
    await until("the tool output", () => chat.messages.at(-1).parts.some((p) => p.type === "text" && p.text === "Thanks."));
    snap();
    await chat.sendMessage();
    snap();
  } else {
    const card = chat.messages.at(-1).parts.find((p) => p.type === "data-card");
    const answer = { submissionId: "s-1", response: { action: "submit", correlationId: card.id, value: { optionId: "yes" } } };
    await chat.sendMessage(undefined, { body: { answer } });
    snap();
    await chat.sendMessage(undefined, { body: { answer } });
    snap();
  }
  // The messages the bridge's chunks built are UI messages by the
  // client's own schema (5.0.0 has no validateUIMessages).
  if (ai.validateUIMessages) await ai.validateUIMessages({ messages: chat.messages });
} catch (e) {
  errors.push(String(e?.message ?? e));
}
console.log(JSON.stringify({ status: chat.status, error: chat.error ? String(chat.error.message ?? chat.error) : null, errors, messages: chat.messages, snapshots }));
