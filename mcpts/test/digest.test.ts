// Revisions: every vector of otelschema/testdata/digests.json, which
// otelschema/mcpgo's TestDigestVectors writes and checks, gives the same
// digest and advertised revision here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { advertised, canonicalize, CanonicalizationError, digest, revisionAlgorithm, short, toolDigest, toolRevision, type ToolDefinition } from "../src/index.js";
import { testdataDir } from "./paths.js";

const vectors = JSON.parse(readFileSync(join(testdataDir, "digests.json"), "utf8")) as {
  vectors: { name: string; tool: ToolDefinition; digest: string; advertised: string; algorithm: string; tool_digest: string }[];
};

test("digests.json: every vector", () => {
  assert.ok(vectors.vectors.length >= 18, `${vectors.vectors.length} vectors: the file lost some`);
  for (const v of vectors.vectors) {
    assert.equal(digest(v.tool), v.digest, `${v.name}: digest`);
    assert.equal(advertised(v.tool), v.advertised, `${v.name}: advertised`);
    assert.equal(revisionAlgorithm(v.advertised), v.algorithm, `${v.name}: algorithm`);
    assert.equal(toolDigest(v.tool), v.tool_digest, `${v.name}: tool digest (SEP-2636)`);
  }
  // The file holds each algorithm at least once.
  assert.deepEqual([...new Set(vectors.vectors.map((v) => v.algorithm))].sort(), ["declared", "mcpdrift-v1", "sha256-jcs-tool"]);
});

test("tool digests: the revision that records one, and the forms", () => {
  const hex = "615fd8f5d62bd3b04da6e6d665be42d48c0b3aeb51f5184674cf5a598a86db9d";
  assert.equal(toolRevision("sha256:" + hex), "sha256-jcs-tool:" + hex);
  for (const bad of ["", "2", "sha256:" + hex.slice(0, 10), "sha256-jcs-tool:" + hex, "SHA256:" + hex]) {
    assert.throws(() => toolRevision(bad), TypeError, bad);
  }
  assert.equal(short("sha256-jcs-tool:" + hex), hex.slice(0, 12));
  assert.equal(revisionAlgorithm("sha256:" + hex), "mcpdrift-v1");
  assert.equal(revisionAlgorithm("sha256:" + hex.toUpperCase()), "declared");
  assert.equal(revisionAlgorithm("v2"), "declared");
  assert.equal(revisionAlgorithm(""), "");
  // The revision key is left out; a vendor key is not.
  const t: ToolDefinition = { name: "x", inputSchema: { type: "object" } };
  assert.equal(toolDigest({ ...t, _meta: { "dev.mcpdrift/revision": "9" } }), toolDigest(t));
  assert.notEqual(toolDigest({ ...t, _meta: { "vendor/y": 1 } }), toolDigest(t));
  assert.notEqual(toolDigest({ ...t, description: "d" }), toolDigest(t));
});

test("RFC 8785: order by UTF-16 code units, numbers as ECMAScript writes them", () => {
  // The RFC's own sorting example (3.2.3) and number examples (Appendix B).
  const sorted = canonicalize({ "\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis" });
  // (Object.keys would put "1" first: JavaScript orders integer keys so.)
  const order = ["\\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"].map((k) => sorted.indexOf(`"${k}":`));
  assert.ok(order.every((p, i) => p >= 0 && (i === 0 || p > order[i - 1]!)), `members out of order in ${sorted}`);
  assert.equal(canonicalize([1e21, 1e-7, -0, 0.000001, 333333333.3333333, 4.5, 2e-3, 1e23]), "[1e+21,1e-7,0,0.000001,333333333.3333333,4.5,0.002,1e+23]");
  assert.equal(canonicalize({ b: [true, null, "\u001f\"\\"], a: { d: 1, c: undefined } }), '{"a":{"d":1},"b":[true,null,"\\u001f\\"\\\\"]}');
});

test("RFC 8785: what I-JSON refuses has no digest", () => {
  assert.throws(() => canonicalize({ a: Number.NaN }), CanonicalizationError);
  assert.throws(() => canonicalize({ a: Infinity }), CanonicalizationError);
  assert.throws(() => canonicalize({ a: "x\ud800y" }), /unpaired UTF-16 surrogate/);
  assert.throws(() => digest({ name: "t", inputSchema: { type: "object", description: "\udc00" } }), /unpaired/);
});

test("short cuts digests only", () => {
  assert.equal(short("sha256:615fd8f5d62bd3b04da6e6d665be42d48c0b3aeb51f5184674cf5a598a86db9d"), "615fd8f5d62b");
  assert.equal(short("7"), "7");
  assert.equal(short("sha256:abc"), "sha256:abc");
});

test("an explicit revision may be a number, written as Go writes it", () => {
  const t = (r: unknown): ToolDefinition => ({ name: "x", inputSchema: { type: "object" }, _meta: { "dev.mcpdrift/revision": r } });
  // The key is read from the tool's own _meta as a server sends it.
  const key = Object.keys(t(1)._meta!)[0]!;
  assert.ok(key.endsWith("/revision"));
  assert.equal(advertised({ name: "x", inputSchema: { type: "object" }, _meta: { [key]: 7 } }), "7");
  assert.equal(advertised({ name: "x", inputSchema: { type: "object" }, _meta: { [key]: 2.5 } }), "2.5");
  assert.equal(advertised({ name: "x", inputSchema: { type: "object" }, _meta: { [key]: "r-9" } }), "r-9");
});
