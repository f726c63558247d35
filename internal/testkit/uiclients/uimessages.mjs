// uimessages.mjs: checks a UIMessage[] (read from stdin) with the ai
// package's own validateUIMessages on the 7.x, 6.x and 5.x lines
// (uistream/history_test.go).
//
// It prints one JSON line: {checked, errors}.
import { readFileSync } from "node:fs";

const messages = JSON.parse(readFileSync(0, "utf8"));
const checked = [];
const errors = [];
for (const pkg of ["ai", "ai6", "ai5"]) {
  const { validateUIMessages } = await import(pkg);
  try {
    await validateUIMessages({ messages });
    checked.push(pkg);
  } catch (e) {
    errors.push(`${pkg}: ${String(e?.message ?? e)}`);
  }
}
console.log(JSON.stringify({ checked, errors }));
