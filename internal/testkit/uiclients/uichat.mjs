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
//           with resumeStream, as useChat({resume: true}) does on mount.
// It prints one JSON line: {status, error, errors, messages}.
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

const errors = [];
const user = { id: "u1", role: "user", parts: [{ type: "text", text: "What is the refund policy?" }] };
const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api, headers: headers ? JSON.parse(headers) : undefined }),
  messages: mode === "reload" ? [user] : [],
  onError: (e) => errors.push(String(e?.message ?? e)),
});

if (mode === "reload") {
  await chat.resumeStream();
} else {
  await chat.sendMessage(user);
  if (mode === "cut") {
    if (chat.status !== "error") errors.push(`expected the cut to fail the request, status ${chat.status}`);
    chat.clearError?.();
    await chat.resumeStream();
  }
}
console.log(JSON.stringify({ status: chat.status, error: chat.error ? String(chat.error.message ?? chat.error) : null, errors, messages: chat.messages }));
