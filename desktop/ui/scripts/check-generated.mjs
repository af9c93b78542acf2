// Fails when regenerating src/generated from schemas/ changes it: the
// committed types are stale (docs/testing.md L1, like scripts/test's schema
// drift check). Compares the files before and after regeneration — so it
// also works before the first commit — and then asks git, which catches
// a generated file that differs from what is committed.

import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "src/generated");

async function snapshot() {
  const files = new Map();
  for (const name of (await readdir(dir).catch(() => [])).sort()) {
    files.set(name, await readFile(join(dir, name), "utf8"));
  }
  return files;
}

const before = await snapshot();
execFileSync(process.execPath, [join(root, "scripts/generate-types.mjs")], { stdio: "inherit" });
const after = await snapshot();

const stale = [];
for (const name of new Set([...before.keys(), ...after.keys()])) {
  if (!before.has(name)) stale.push(`${name} is new`);
  else if (!after.has(name)) stale.push(`${name} is no longer generated`);
  else if (before.get(name) !== after.get(name)) stale.push(`${name} changed`);
}
if (stale.length > 0) {
  console.error(
    `src/generated was stale (${stale.join("; ")}); it is regenerated now: review and commit it`,
  );
  process.exit(1);
}
try {
  execFileSync("git", ["diff", "--exit-code", "--", "src/generated"], { cwd: root, stdio: "inherit" });
} catch {
  console.error("src/generated differs from the committed files: commit the regenerated types");
  process.exit(1);
}
console.log("src/generated is up to date with schemas/");
