/// <reference types="node" />
// @vitest-environment node
// The web UI's layering: no module imports, directly or through others, a
// module that imports it back (type-only imports count: they tie the
// modules as tightly for a reader). Tests are left out; they may import
// anything.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = dirname(fileURLToPath(import.meta.url));

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !/^testing\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

/** Module → the modules it imports (relative specifiers only). */
export function importGraph(files: Map<string, string>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const resolve = (from: string, spec: string): string | null => {
    if (!spec.startsWith(".")) return null;
    const base = normalize(join(dirname(from), spec));
    for (const ext of ["", ".ts", ".tsx", "/index.ts", "/index.tsx"]) {
      if (files.has(base + ext)) return base + ext;
    }
    return null;
  };
  const pattern = /(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
  for (const [file, text] of files) {
    const edges = new Set<string>();
    for (const match of text.matchAll(pattern)) {
      const target = resolve(file, match[1] ?? match[2] ?? "");
      if (target !== null && target !== file) edges.add(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan). */
export function circles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const circle: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        circle.push(w);
        if (w === v) break;
      }
      if (circle.length > 1) found.push(circle.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("the web UI's modules", () => {
  it("import no module that imports them back", () => {
    const files = new Map(sources(SRC).map((f) => [f, readFileSync(f, "utf8")] as const));
    const found = circles(importGraph(files)).map((c) => c.map((f) => relative(SRC, f)));
    expect(found).toEqual([]);
  });

  it("finds a circle, through a type-only import and an index file", () => {
    const files = new Map([
      ["/s/a.ts", 'import { b } from "./b";'],
      ["/s/b.ts", 'import type { C } from "./c";'],
      ["/s/c/index.ts", 'export { a } from "../a";'],
      ["/s/d.ts", 'import { a } from "./a";'],
    ]);
    expect(circles(importGraph(files))).toEqual([["/s/a.ts", "/s/b.ts", "/s/c/index.ts"]]);
  });
});
