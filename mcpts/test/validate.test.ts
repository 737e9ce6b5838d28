// The validator: every case of otelschema/testdata/validation.json, which
// internal/argschema's TestValidationVectors checks too, gets the same
// verdict here — the same fields and keywords at fault.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { compileSchema, SchemaError } from "../src/index.js";
import { testdataDir } from "./paths.js";

const file = JSON.parse(readFileSync(join(testdataDir, "validation.json"), "utf8")) as {
  cases: { name: string; schema: unknown; args: unknown; compiles?: boolean; valid?: boolean; violations?: { field: string; kind: string }[] }[];
};

test("validation.json: every case", async (t) => {
  assert.ok(file.cases.length >= 20, `${file.cases.length} cases: the file lost some`);
  for (const c of file.cases) {
    await t.test(c.name, () => {
      if (c.compiles === false) {
        assert.throws(() => compileSchema(c.schema), SchemaError, `schema ${JSON.stringify(c.schema)} compiled, want it refused`);
        return;
      }
      const v = compileSchema(c.schema).validate(c.args);
      if (c.valid) {
        assert.equal(v, null, `want valid, got ${JSON.stringify(v)}`);
        return;
      }
      assert.ok(v, "want violations, got valid");
      for (const x of v) assert.ok(x.message.length > 0, `violation ${JSON.stringify(x)} has no message`);
      const got = v.map((x) => `${x.field} ${x.kind}`).sort();
      const want = (c.violations ?? []).map((x) => `${x.field} ${x.kind}`);
      assert.deepEqual(got, want);
    });
  }
});

test("the validator never changes the arguments it validates", () => {
  const v = compileSchema({ type: "object", properties: { region: { type: "string", default: "us-east-preview" } } });
  const args = { branch: "b" };
  assert.equal(v.validate(args), null);
  assert.deepEqual(args, { branch: "b" });
});
