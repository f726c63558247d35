// agsnapshot.mjs: checks a MESSAGES_SNAPSHOT event (read from stdin) with
// @ag-ui/core 1.x's own schema, strictly: a member the schema does not
// name is an error too (agui/history_test.go).
//
// It prints one JSON line: {errors}.
import { readFileSync } from "node:fs";
const { MessagesSnapshotEventSchema } = await import("@ag-ui/core/schemas");

const event = JSON.parse(readFileSync(0, "utf8"));
const errors = [];
const r = MessagesSnapshotEventSchema.safeParse(event);
if (!r.success) errors.push(String(r.error?.message ?? r.error));
const strict = MessagesSnapshotEventSchema.strict?.().safeParse?.(event);
if (strict && !strict.success) errors.push("strict: " + String(strict.error?.message ?? strict.error));
console.log(JSON.stringify({ errors, messages: r.success ? r.data.messages.length : 0 }));
