#!/usr/bin/env python3
"""Hand-written mutants for riot-tools and riot-runtime (docs/testing.md,
"Mutation testing"): the rules that matter most, each one exact text
replacement. For every mutant the script applies it to a scratch copy of
the workspace (riot-protocol, riot-runtime, riot-tools in $MUTATE_DIR or
/tmp/riot-tools-mutants, with its own target dir — the shared checkout is
never mutated), runs the owning crate's tests, records caught/missed and
restores the file.

Usage:
    python3 .riot/skills/add-tool/mutants.py            # all mutants
    python3 .riot/skills/add-tool/mutants.py cascade    # names containing a word
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
ROOT = pathlib.Path(os.environ.get("MUTATE_DIR", "/tmp/riot-tools-mutants"))
CRATES = ["riot-protocol", "riot-runtime", "riot-tools"]

# (name, crate, file under src/, original text, mutated text)
MUTANTS = [
    ("edit: uniqueness not enforced", "riot-tools", "tools/edit_match.rs",
     "if found.len() > 1 && !replace_all {", "if false {"),
    ("edit: new lines in a CRLF file stay LF", "riot-tools", "tools/edit_match.rs",
     "LineEndings::Crlf => (old.to_owned(), lf_to_crlf(new), None),",
     "LineEndings::Crlf => (old.to_owned(), new.to_owned(), None),"),
    ("edit: BOM dropped on write", "riot-tools", "tools/edit.rs",
     "let bytes = decoded.to_bytes(&plan.new_text);",
     "let bytes = plan.new_text.clone().into_bytes();"),
    ("edit: region of old_string not checked", "riot-tools", "tools/edit.rs",
     "check_region(&state, &display, start, end)?;", "let _ = (&state, start, end);"),
    ("edit: whitespace explanation skipped", "riot-tools", "tools/edit_match.rs",
     "if let Some(line) = whitespace_insensitive_line(text, old) {",
     "if let Some(line) = None::<u64> {"),
    ("freshness: content change not detected", "riot-tools", "freshness.rs",
     "if content_hash(current) != state.content_hash {", "if false {"),
    ("freshness: partial read allows Write", "riot-tools", "freshness.rs",
     "if need == Need::WholeFile && state.view != FileView::Full {", "if false {"),
    ("freshness: not-read reported as changed", "riot-tools", "freshness.rs",
     ".with_code(code::NOT_READ));", ".with_code(code::CHANGED_SINCE_READ));"),
    ("encoding: NUL bytes not treated as binary", "riot-tools", "encoding.rs",
     "if let Some(offset) = memchr_nul(bytes) {", "if let Some(offset) = None::<usize> {"),
    ("write: BOM of an existing file dropped", "riot-tools", "tools/write.rs",
     "if old.bom && !text.starts_with(BOM) {", "if false {"),
    ("bash: scrubbed variables passed through", "riot-tools", "tools/bash.rs",
     "env_remove: ctx.env.scrubbed_env.clone(),", "env_remove: Vec::new(),"),
    ("bash: non-zero exit is a success", "riot-tools", "tools/bash.rs",
     "if out.exit_code == Some(0) && !out.timed_out {", "if !out.timed_out {"),
    ("glob: oldest first", "riot-tools", "tools/glob.rs",
     "        b.mtime_ms\n            .cmp(&a.mtime_ms)", "        a.mtime_ms\n            .cmp(&b.mtime_ms)"),
    ("grep: regex not compiled in validate_input", "riot-tools", "tools/grep.rs",
     "        matcher(input)?;\n", "\n"),
    ("scheduler: every tool cascades", "riot-tools", "scheduler/pipeline.rs",
     "if failed_for_cascade && cascades && !tool_scope.is_cancelled() {",
     "if failed_for_cascade && !tool_scope.is_cancelled() {"),
    ("scheduler: a denial cascades", "riot-tools", "scheduler/pipeline.rs",
     "message: denied_text(&call.name, describe, &message, &reason),\n                    cascades: false,",
     "message: denied_text(&call.name, describe, &message, &reason),\n                    cascades: true,"),
    ("scheduler: nobody to answer becomes allow", "riot-tools", "scheduler/permission.rs",
     "        if !self.gate.can_answer() {\n", "        if !self.gate.can_answer() && false {\n"),
    ("scheduler: timeout becomes allow", "riot-tools", "scheduler/permission.rs",
     "Either::Left((Err(_elapsed), _)) => PermissionOutcome::TimedOut,",
     "Either::Left((Err(_elapsed), _)) => PermissionOutcome::AllowOnce,"),
    ("scheduler: no cancellation check after the gate", "riot-tools", "scheduler/pipeline.rs",
     "        if scope.is_cancelled() {\n            return Err(Ending::CancelledBeforeStart);",
     "        if false {\n            return Err(Ending::CancelledBeforeStart);"),
    ("scheduler: skipped calls get no result (break)", "riot-tools", "scheduler/mod.rs",
     "            continue;\n        }\n        // INV-3", "            break;\n        }\n        // INV-3"),
    ("scheduler: concurrency cap ignored", "riot-tools", "scheduler/mod.rs",
     "Some(last) if safe && open_parallel && last.len() < cap =>", "Some(last) if safe && open_parallel =>"),
    ("scheduler: unsafe calls join parallel batches", "riot-tools", "scheduler/mod.rs",
     "let safe = concurrency_safe(&item.1);", "let safe = { let _ = concurrency_safe(&item.1); true };"),
    ("scheduler: budget never spills", "riot-tools", "scheduler/budget.rs",
     "if total <= limit {", "if total <= limit.saturating_mul(1000) {"),
    ("scheduler: empty output passed through", "riot-tools", "scheduler/pipeline.rs",
     "        if is_empty(&content) {\n", "        if false && is_empty(&content) {\n"),
    ("scheduler: AllowAlways not remembered", "riot-tools", "scheduler/permission.rs",
     "self.remember(&rule, RuleBehavior::Allow);", "let _ = &rule;"),
    ("runtime: no own process group", "riot-runtime", "group.rs",
     "        .process_group(0);", "        ;"),
    ("runtime: leftovers of a finished leader survive", "riot-runtime", "process.rs",
     "            // killed too, which also closes the pipes for the readers.\n            guard.kill_now();",
     "            // killed too, which also closes the pipes for the readers.\n            std::mem::forget(guard);"),
    ("runtime: no PR_SET_PDEATHSIG", "riot-runtime", "group.rs",
     "if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {", "if false {"),
    ("runtime: tail not kept", "riot-runtime", "capture.rs",
     "        if bytes.is_empty() || self.limit.tail_bytes == 0 {", "        if true {"),
    ("runtime: atomic write loses the mode", "riot-runtime", "fs.rs",
     "        if let Some(mode) = existing_mode {", "        if let Some(mode) = None::<u32> {"),
]


def prepare_copy():
    ROOT.mkdir(parents=True, exist_ok=True)
    for name in ["Cargo.toml", "Cargo.lock", "clippy.toml", "rustfmt.toml"]:
        if (REPO / name).exists():
            shutil.copy2(REPO / name, ROOT / name)
    for crate in CRATES:
        dest = ROOT / "crates" / crate
        if dest.exists():
            shutil.rmtree(dest)
        # shutil.copy, not copy2: fresh mtimes, so cargo never reuses a
        # build of an earlier run's mutant.
        shutil.copytree(REPO / "crates" / crate, dest, ignore=shutil.ignore_patterns("target"),
                        copy_function=shutil.copy)


def cargo(*args):
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"))
    return subprocess.run(["cargo", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def tests_pass(crate):
    return cargo("test", "-q", "-p", crate, "--tests")


def verdict_of(crate):
    """A mutant that does not compile proves nothing: it is reported apart."""
    if not cargo("test", "-q", "-p", crate, "--tests", "--no-run"):
        return "does-not-compile"
    return "missed" if tests_pass(crate) else "caught"


def main():
    words = [a for a in sys.argv[1:] if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not words or any(w in m[0] for w in words)]
    prepare_copy()
    for crate in {m[1] for m in chosen}:
        if not tests_pass(crate):
            sys.exit(f"{crate}: the unmutated tests fail; fix that first")
    results = []
    for name, crate, rel, before, after in chosen:
        path = ROOT / "crates" / crate / "src" / rel
        original = path.read_text()
        if original.count(before) != 1:
            results.append((name, "stale (text not found exactly once)"))
            continue
        path.write_text(original.replace(before, after))
        try:
            verdict = verdict_of(crate)
        finally:
            path.write_text(original)
        results.append((name, verdict))
        print(f"{verdict:7} {name}", flush=True)
    caught = sum(1 for _, v in results if v == "caught")
    print(json.dumps({"caught": caught, "total": len(results),
                      "missed": [n for n, v in results if v != "caught"]}, indent=1))


if __name__ == "__main__":
    main()
