// Generates src/generated/*.ts from the JSON Schemas in the repository's
// schemas/ (written by `cargo run -p riot-protocol --bin gen-schema`, and
// riot_methods.json, the `_riot/...` methods, by `cargo run -p riot-acp
// --bin gen-riot-schema`).
// The UI never hand-writes a type Riot defines (docs/design.md §6.2,
// docs/testing.md L1); `npm run check:generated` fails when regenerating
// changes anything.

import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const schemas = join(here, "../../../schemas");
const out = join(here, "../src/generated");

// The schemas whose types the UI uses, each to a file of the same name.
const USED = ["ui_payload", "agent_event", "terminal_update", "riot_methods"];

const BANNER = (name) =>
  `// Generated from schemas/${name}.json by scripts/generate-types.mjs; do not edit.\n` +
  `// Regenerate with \`npm run generate\` once schemas/ is current (see the script's header).\n`;

async function generate(name) {
  const schema = JSON.parse(await readFile(join(schemas, `${name}.json`), "utf8"));
  const ts = await compile(schema, schema.title ?? name, {
    bannerComment: "",
    additionalProperties: false,
    unknownAny: true,
    strictIndexSignatures: true,
    format: true,
    style: { printWidth: 100, singleQuote: false, trailingComma: "all" },
  });
  return BANNER(name) + "\n" + ts;
}

await mkdir(out, { recursive: true });
const wanted = new Set(USED.map((n) => `${n}.ts`));
for (const file of await readdir(out)) {
  if (!wanted.has(file)) await rm(join(out, file));
}
for (const name of USED) {
  await writeFile(join(out, `${name}.ts`), await generate(name));
}
console.log(`generated ${USED.map((n) => `src/generated/${n}.ts`).join(", ")}`);
