// npm pack yields a publishable tarball: the built module with its types,
// the LICENSE and README, the repository's version, and nothing of the
// tests, fixtures or sources; unpacked beside the installed dependencies,
// it loads and speaks the conventions of this checkout.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { conventionsPath, pkgDir, repoDir } from "./paths.js";

test("npm pack: a publishable tarball", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpts-pack-"));
  try {
    const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: pkgDir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const [info] = JSON.parse(out.slice(out.indexOf("["))) as { filename: string; name: string; version: string; files: { path: string }[] }[];
    assert.ok(info, out);
    const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { name: string; version: string; types: string; exports: Record<string, { types: string; import: string }> };
    // The project's version, shared by its packages (the Grafana plugin's too).
    const project = JSON.parse(readFileSync(join(repoDir, "grafana-plugin", "package.json"), "utf8")) as { version: string };
    assert.equal(info.name, "@mcpdrift/mcpts");
    assert.equal(info.version, pkg.version);
    assert.equal(pkg.version, project.version, "mcpts and the project's other packages disagree on the version");

    const listed = execFileSync("tar", ["-tzf", join(dir, info.filename)], { encoding: "utf8" }).trim().split("\n").sort();
    for (const want of ["package/package.json", "package/LICENSE", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/dist/gen/conventions.js", "package/dist/gen/conventions.d.ts", "package/dist/server.d.ts", "package/dist/client.d.ts"]) {
      assert.ok(listed.includes(want), `${want} is not in the tarball:\n${listed.join("\n")}`);
    }
    const unwanted = listed.filter((f) => /(^package\/(src|test|build|bench|e2e|scripts|node_modules)\/)|\.test\.|\.ts$(?<!\.d\.ts)|tsconfig|\.tgz$|\.map$/.test(f));
    assert.deepEqual(unwanted, [], "tests, fixtures or sources in the tarball");
    assert.equal(readFileSync(join(pkgDir, "LICENSE"), "utf8"), readFileSync(join(repoDir, "grafana-plugin", "LICENSE"), "utf8"), "the LICENSE is not the repository's");

    // Unpacked beside the installed dependencies, it loads as a user's
    // import would, and was built from this checkout's conventions.
    execFileSync("tar", ["-xzf", join(dir, info.filename), "-C", dir]);
    symlinkSync(join(pkgDir, "node_modules"), join(dir, "package", "node_modules"), "dir");
    const packed = JSON.parse(readFileSync(join(dir, "package", "package.json"), "utf8")) as typeof pkg & { peerDependencies: Record<string, string> };
    assert.equal(packed.types, "./dist/index.d.ts");
    assert.ok(packed.peerDependencies["@modelcontextprotocol/sdk"] && packed.peerDependencies["@opentelemetry/api-logs"]);
    const probe = `import("./dist/index.js").then((m) => console.log(JSON.stringify({ sha: m.CONVENTIONS_SHA256, server: typeof m.DriftServer, client: typeof m.DriftClient, d: m.digest({ name: "x", inputSchema: { type: "object" } }) })))`;
    const got = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: join(dir, "package"), encoding: "utf8" })) as { sha: string; server: string; client: string; d: string };
    assert.equal(got.sha, createHash("sha256").update(readFileSync(conventionsPath)).digest("hex"));
    assert.equal(got.server, "function");
    assert.equal(got.client, "function");
    assert.match(got.d, /^sha256:[0-9a-f]{64}$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
