// uihistory.mjs: a page reload with the ai package's message-persistence
// recipe: the npm ai package's Chat (AbstractChat with a plain state, as
// useChat's is) sends a message; a new Chat, as a reloaded page makes it,
// gets its initial messages from the server's history (GET HISTORY with
// the chat's id in place of {chatId}, checked by validateUIMessages where
// the line exports it), then sends the next message with a transport that
// sends the last message only (prepareSendMessagesRequest, {id, message}).
//
//   node uihistory.mjs PKG API HISTORY CHAT HEADERS_JSON
//
// It prints one JSON line: {status, errors, first, loaded, after}: the
// first Chat's messages, the reloaded Chat's initial messages, and its
// messages after its own message.
const [, , pkg, api, historyURL, chatId, headers] = process.argv;
const ai = await import(pkg);
const { AbstractChat, DefaultChatTransport } = ai;
const extra = JSON.parse(headers);

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
const onError = (e) => errors.push(String(e?.message ?? e));
const first = new Chat({ id: chatId, transport: new DefaultChatTransport({ api, headers: extra }), onError });
await first.sendMessage({ text: "What is the refund policy?" });

// The reload: the page loads the chat's messages, then makes its Chat.
const res = await fetch(historyURL.replace("{chatId}", encodeURIComponent(chatId)), { headers: extra });
if (res.status !== 200) errors.push(`history: ${res.status}`);
let loaded = await res.json();
if (typeof ai.validateUIMessages === "function") loaded = await ai.validateUIMessages({ messages: loaded });
const again = new Chat({
  id: chatId,
  messages: loaded,
  transport: new DefaultChatTransport({
    api,
    headers: extra,
    prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, message: messages[messages.length - 1] } }),
  }),
  onError,
});
const initial = structuredClone(again.messages);
await again.sendMessage({ text: "And for gift cards?" });
console.log(JSON.stringify({ status: again.status, errors, first: first.messages, loaded: initial, after: again.messages }));
