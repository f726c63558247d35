// uichat.mjs: the npm ai package's framework-agnostic Chat (AbstractChat with
// a plain state, as useChat's is) and DefaultChatTransport, against the
// uistream bridge (uistream/realclients_test.go).
//
//   node uichat.mjs PKG API CHAT MODE [HEADERS_JSON]
//
// PKG is the installed line (ai, ai6, ai5); API the bridge's endpoint;
// CHAT the chat id; HEADERS_JSON the headers of every request (none when
// absent). MODE:
//   send    send one message and read the assistant message whole;
//   cut     send one message (the test cuts the response), then resume the
//           chat's stream with resumeStream, on the same Chat;
//   reload  a new Chat holding the user's message only (a page reload) resumes
//           with resumeStream, as useChat({resume: true}) does on mount;
//   stop    send one message and, at its first text, stop it as the ai
//           documentation's recipe for stopping a resumable stream does: a
//           POST {api}/{chatId}/stop with the partial assistant message and
//           the active stream's id (the message's id, the turn's), then
//           chat.stop(); once the stop's answer came, a reload (as above);
//   abort   the same with chat.stop() alone, which only closes the request.
// It prints one JSON line: {status, error, errors, messages, reload?}, reload
// the reloaded Chat's {status, error, messages}.
const [, , pkg, api, chatId, mode, headers] = process.argv;
const { AbstractChat, DefaultChatTransport } = await import(pkg);

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

// stopOnFirstText stops chat as a stop button would, once the assistant
// message holds text: with the recipe's request (mode stop) or without
// (mode abort), then chat.stop().
function stopOnFirstText(chat) {
  const state = chat.state;
  const replace = state.replaceMessage.bind(state);
  const push = state.pushMessage.bind(state);
  state.replaceMessage = (i, m) => { replace(i, m); seen(m); };
  state.pushMessage = (m) => { push(m); seen(m); };
  const seen = (m) => {
    if (stopping === null && m.role === "assistant" && m.parts.some((p) => p.type === "text" && p.text)) {
      stopping = Promise.resolve();
      setTimeout(() => {
        if (mode === "stop") {
          const lastMessage = chat.messages[chat.messages.length - 1];
          const assistantMessage = lastMessage?.role === "assistant" ? lastMessage : undefined;
          const activeStreamId = assistantMessage?.id;
          stopping = fetch(`${api}/${encodeURIComponent(chatId)}/stop`, {
            method: "POST",
            headers: { "Content-Type": "application/json", ...extra },
            body: JSON.stringify(assistantMessage || activeStreamId ? { assistantMessage, activeStreamId } : {}),
          }).then((r) => r.status, (e) => errors.push(`stop: ${e}`));
        }
        void chat.stop();
      }, 0);
    }
  };
}

const errors = [];
const extra = headers ? JSON.parse(headers) : {};
let stopping = null; // the stop: null, or once started the stop request's promise
const user = { id: "u1", role: "user", parts: [{ type: "text", text: "What is the refund policy?" }] };
const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api, headers: headers ? JSON.parse(headers) : undefined }),
  messages: mode === "reload" ? [user] : [],
  onError: (e) => errors.push(String(e?.message ?? e)),
});

async function reload() {
  const again = new Chat({
    id: chatId,
    transport: new DefaultChatTransport({ api, headers: headers ? JSON.parse(headers) : undefined }),
    messages: [user],
    onError: (e) => errors.push(String(e?.message ?? e)),
  });
  await again.resumeStream();
  return { status: again.status, error: again.error ? String(again.error.message ?? again.error) : null, messages: again.messages };
}

let reloaded;
if (mode === "reload") {
  await chat.resumeStream();
} else if (mode === "stop" || mode === "abort") {
  stopOnFirstText(chat);
  await chat.sendMessage(user);
  if (stopping === null) errors.push("the message ended before any text to stop at");
  const answer = await stopping;
  if (mode === "stop" && answer !== 200) errors.push(`the stop was answered ${answer}`);
  reloaded = await reload();
} else {
  await chat.sendMessage(user);
  if (mode === "cut") {
    if (chat.status !== "error") errors.push(`expected the cut to fail the request, status ${chat.status}`);
    chat.clearError?.();
    await chat.resumeStream();
  }
}
console.log(JSON.stringify({ status: chat.status, error: chat.error ? String(chat.error.message ?? chat.error) : null, errors, messages: chat.messages, reload: reloaded }));
