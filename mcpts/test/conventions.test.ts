// The package speaks the conventions of its checkout: the module generated
// at build time matches otelschema/conventions.json entry for entry, and
// no source file spells a name of the conventions itself.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import * as gen from "../src/gen/conventions.js";
import { ATTR, CONVENTIONS_SHA256, DIGEST, ENUMS, ERROR_CODE, EVENT, META, REQUIRED_ACTION } from "../src/index.js";
import { conventionsPath, pkgDir } from "./paths.js";

interface Conventions {
  events: { key: string; name: string }[];
  attributes: { key: string; name: string; type: string; values?: string[] }[];
  meta: Record<string, string>;
  error_codes: Record<string, string>;
  required_actions: Record<string, string>;
  digest: { prefix: string; fields: string[]; annotations: { members: string[]; defaults: Record<string, unknown> } };
}

const raw = readFileSync(conventionsPath);
const c = JSON.parse(raw.toString("utf8")) as Conventions;

test("the generated module was generated from this conventions.json", () => {
  const sha = createHash("sha256").update(raw).digest("hex");
  assert.equal(CONVENTIONS_SHA256, sha, "otelschema/conventions.json changed since the build: run npm run build");
});

test("every event, attribute, enum, _meta key, code and action is the file's", () => {
  assert.deepEqual(
    Object.entries(EVENT),
    c.events.map((e) => [e.key, e.name]),
  );
  assert.deepEqual(
    Object.entries(ATTR),
    c.attributes.map((a) => [a.key, a.name]),
  );
  assert.deepEqual(
    Object.entries(gen.ATTR_TYPE),
    c.attributes.map((a) => [a.key, a.type]),
  );
  const enums = c.attributes.filter((a) => a.type === "enum");
  assert.deepEqual(
    Object.keys(ENUMS),
    enums.map((a) => a.key),
  );
  for (const a of enums) assert.deepEqual(Object.values(ENUMS[a.key as keyof typeof ENUMS]), a.values, a.name);
  assert.deepEqual({ ...META }, c.meta);
  assert.deepEqual({ ...ERROR_CODE }, c.error_codes);
  assert.deepEqual({ ...REQUIRED_ACTION }, c.required_actions);
  assert.equal(DIGEST.prefix, c.digest.prefix);
  assert.deepEqual([...DIGEST.fields], c.digest.fields);
  assert.deepEqual([...DIGEST.annotations.members], c.digest.annotations.members);
  assert.deepEqual({ ...DIGEST.annotations.defaults }, c.digest.annotations.defaults);
});

test("no source file writes a name of the conventions", () => {
  // The names the package must read from the generated module, quoted as
  // a literal would be.
  const names = new Set<string>();
  for (const e of c.events) names.add(e.name);
  for (const a of c.attributes) names.add(a.name);
  for (const v of Object.values(c.meta)) names.add(v);
  for (const v of Object.values(c.error_codes)) names.add(v);
  for (const v of Object.values(c.required_actions)) names.add(v);
  for (const a of c.attributes) for (const v of a.values ?? []) names.add(v);
  const srcDir = join(pkgDir, "src");
  const files = readdirSync(srcDir).filter((f) => f.endsWith(".ts"));
  assert.ok(files.length >= 8, `only ${files.length} source files in ${srcDir}`);
  const found: string[] = [];
  for (const f of files) {
    const text = readFileSync(join(srcDir, f), "utf8");
    for (const n of names) {
      for (const q of ['"', "'", "`"]) {
        if (text.includes(q + n + q)) found.push(`${f}: ${q}${n}${q}`);
      }
    }
  }
  assert.deepEqual(found, [], "names written in the source instead of read from the generated module");
});
