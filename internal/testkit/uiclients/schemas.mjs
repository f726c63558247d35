// schemas.mjs: checks every chunk or event of a bridge's response body (read
// from stdin) against the clients' own schemas (uistream/schemas_test.go,
// agui/schemas_test.go).
//
//   node schemas.mjs ui [PKGS]  the uiMessageChunkSchema of ai 7, 6 and 5.x,
//                           or of the installed lines PKGS names (ai,ai6)
//   node schemas.mjs agui   @ag-ui/core 1.x's event schemas, every member
//                           one the schema names (metadata and the values
//                           the schema leaves open excepted)
//
// It prints one JSON line: {checked, types, errors}.
import { readFileSync } from "node:fs";

const mode = process.argv[2];
const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
const errors = [];
const types = [];
let checked = 0;

if (mode === "ui") {
  const validators = [];
  for (const pkg of (process.argv[3] ?? "ai,ai6,ai5").split(",")) {
    validators.push([pkg, (await import(pkg)).uiMessageChunkSchema()]);
  }
  for (const line of lines) {
    if (line === "[DONE]") continue;
    const chunk = JSON.parse(line);
    types.push(chunk.type);
    for (const [pkg, v] of validators) {
      const r = await v.validate(chunk);
      if (!r.success) errors.push(`${pkg}: ${line}: ${String(r.error?.message ?? r.error)}`);
    }
    checked++;
  }
} else {
  const s = await import("@ag-ui/core/schemas");
  const unwrap = (z) => {
    for (;;) {
      const d = z?._zod?.def ?? z?.def;
      if (!d) return z;
      if (["optional", "nullable", "default", "readonly", "catch"].includes(d.type)) z = d.innerType;
      else if (d.type === "pipe") z = d.in;
      else if (d.type === "lazy") z = d.getter();
      else return z;
    }
  };
  // known checks that every member of value is one schema names.
  const known = (schema, value, path) => {
    const z = unwrap(schema);
    const d = z?._zod?.def ?? z?.def;
    if (!d || value === null || typeof value !== "object") return;
    if (d.type === "object") {
      for (const k of Object.keys(value)) {
        if (!(k in d.shape)) errors.push(`${path}/${k}: a member the schema does not name`);
        else if (k !== "metadata") known(d.shape[k], value[k], `${path}/${k}`);
      }
    } else if (d.type === "array" && Array.isArray(value)) {
      value.forEach((v, i) => known(d.element, v, `${path}/${i}`));
    } else if (d.type === "union") {
      const option = d.options.find((o) => o.safeParse(value).success);
      if (option) known(option, value, path);
    }
  };
  const pascal = (t) => t.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c) => c.toUpperCase());
  for (const line of lines) {
    const ev = JSON.parse(line);
    types.push(ev.type);
    const schema = s[`${pascal(ev.type)}EventSchema`];
    if (!schema) {
      errors.push(`${line}: an event type the core does not define`);
      continue;
    }
    const r = schema.safeParse(ev);
    if (!r.success) errors.push(`${line}: ${r.error.message}`);
    if (!s.EventSchemas.safeParse(ev).success) errors.push(`${line}: EventSchemas refuses it`);
    known(schema, ev, "");
    checked++;
  }
}
console.log(JSON.stringify({ checked, types, errors }));
