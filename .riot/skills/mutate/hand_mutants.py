#!/usr/bin/env python3
"""Hand-written mutants for riot-permissions (docs/testing.md, "Mutation
testing"). Each mutant is one exact text replacement; the script applies it,
runs the crate's tests, records caught/missed, and restores the file.

By default the mutants are applied to a scratch copy of the workspace
(only riot-protocol and riot-permissions, in $MUTATE_DIR or
/tmp/riot-mutants, with its own target dir), so a shared checkout never
holds a mutated file. With --in-place the checkout itself is mutated; its
sources are still always restored: the original is copied to a backup/
directory beside this script before a mutant is applied, and any backup
left by a killed run is put back when the script starts.

Usage (from anywhere):
    python3 .riot/skills/mutate/hand_mutants.py            # all mutants
    python3 .riot/skills/mutate/hand_mutants.py sudo ast   # names containing these words
    python3 .riot/skills/mutate/hand_mutants.py --in-place
"""

import os

import json
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[3]
IN_PLACE = "--in-place" in sys.argv
ROOT = REPO if IN_PLACE else pathlib.Path(os.environ.get("MUTATE_DIR", "/tmp/riot-mutants"))
CRATE = ROOT / "crates" / "riot-permissions" / "src"
BACKUP = pathlib.Path(__file__).resolve().parent / "backup"


def prepare_copy():
    """Copies just what the crate needs to build and test into ROOT."""
    if IN_PLACE:
        return
    for name in ["Cargo.toml", "Cargo.lock", "clippy.toml", "rustfmt.toml"]:
        if (REPO / name).exists():
            ROOT.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, ROOT / name)
    for crate in ["riot-protocol", "riot-permissions"]:
        dest = ROOT / "crates" / crate
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(REPO / "crates" / crate, dest,
                        ignore=shutil.ignore_patterns("target"))

# (name, file relative to the crate's src/, original text, mutated text)
MUTANTS = [
    ("tool-allow-returns-before-safety-checks", "chain/mod.rs",
     "PermissionResult::Allow { reason, .. } => tool_allow = Some(reason.clone()),",
     "PermissionResult::Allow { reason, .. } => return Step::Final(allow(reason.clone())),"),
    ("ask-with-nobody-to-answer-becomes-allow (dont-ask)", "chain/verdicts.rs",
     "            PermissionResult::Deny { reason, message }\n        }\n        (_, PermissionResult::Passthrough)",
     "            let _ = message;\n            allow(reason)\n        }\n        (_, PermissionResult::Passthrough)"),
    ("ask-with-nobody-to-answer-becomes-allow (gate)", "chain/verdicts.rs",
     "pub fn nobody_can_answer(result: PermissionResult, why: &str) -> PermissionResult {\n    match result {",
     "pub fn nobody_can_answer(result: PermissionResult, why: &str) -> PermissionResult {\n    if let PermissionResult::Ask { reason, .. } = result {\n        return allow(reason);\n    }\n    match result {"),
    ("ask-with-nobody-to-answer-becomes-allow (timeout)", "chain/verdicts.rs",
     'PermissionOutcome::TimedOut => nobody_can_answer(asked.clone(), "the question timed out"),',
     'PermissionOutcome::TimedOut => allow(user(String::new())),'),
    ("ast-walk-skips-anonymous-nodes", "bash/walk.rs",
     "for child in node.children(&mut cursor) {\n        if let Some(kind) = first_disallowed(child, depth + 1)",
     "for child in node.named_children(&mut cursor) {\n        if let Some(kind) = first_disallowed(child, depth + 1)"),
    ("sudo-stripped-as-wrapper", "bash/wrappers.rs",
     '"nohup" => Some(1),',
     '"nohup" | "sudo" => Some(1),'),
    ("source-priority-decides-deny-vs-allow", "rules.rs",
     ".filter(|r| r.behavior == behavior && matches(r))\n            .max_by_key(|r| source_rank(r.source))",
     ".filter(|r| matches(r))\n            .max_by_key(|r| source_rank(r.source))\n            .filter(|r| r.behavior == behavior)"),
    ("tool-ask-parked-regardless-of-yields_to_bypass", "chain/mod.rs",
     "if reason.yields_to_bypass() || waived_safety {",
     "if true || waived_safety {"),
    ("scan-stops-at-first-unverifiable", "bash/mod.rs",
     "        if self.dangerous.is_none() {\n            self.dangerous = Some(detail.into());",
     "        if self.dangerous.is_none() && self.unverifiable.is_none() {\n            self.dangerous = Some(detail.into());"),
    ("bash-star-crosses-metacharacters", "rules.rs",
     "let allowed = |b: u8| ast_split || !is_shell_meta(b);",
     "let allowed = |_b: u8| true;"),
    ("unknown-short-flag-accepted", "bash/readonly.rs",
     "            if !spec.short.contains(c) {\n                return false;\n            }",
     "            if !spec.short.contains(c) && c == '\\u{0}' {\n                return false;\n            }"),
    ("git-component-matched-as-substring", "paths.rs",
     'comps.iter().position(|c| *c == ".git")',
     'comps.iter().position(|c| c.contains(".git"))'),
    ("credential-reads-not-checked", "chain/mod.rs",
     "&& (s.applies_to_reads() || *access == PathAccess::Write)",
     "&& *access == PathAccess::Write"),
    ("subcommand-cap-off-by-one", "bash/mod.rs",
     "if analysis.subcommands.len() > MAX_SUBCOMMANDS {",
     "if analysis.subcommands.len() >= MAX_SUBCOMMANDS {"),
    ("outside-project-judged-on-literal-path-only", "chain/mod.rs",
     "literal.starts_with(&self.project) && resolved.starts_with(&project)",
     "literal.starts_with(&self.project) || resolved.starts_with(&project)"),
    ("bypass-skips-safety-checks", "chain/mod.rs",
     "if q.mode != PermissionMode::Unattended\n            && let Some(finding)",
     "if !matches!(q.mode, PermissionMode::Unattended | PermissionMode::Bypass)\n            && let Some(finding)"),
    ("hook-allow-before-ask-rules", "chain/mod.rs",
     "        // 2. Whole-tool ask rule.",
     "        if let Some(HookDecision::Allow { hook, reason }) = hook {\n            return Step::Final(allow(DecisionReason::Hook { detail: reason.clone(), hook: hook.clone() }));\n        }\n        // 2. Whole-tool ask rule."),
    ("redirect-write-covered-by-allow-rule", "chain/mod.rs",
     "let by_rule = if sub.redirect_writes.is_empty() && !sub.words.is_empty() {",
     "let by_rule = if !sub.words.is_empty() {"),
    ("allow-rule-checked-on-literal-path-only", "chain/mod.rs",
     "rules.content(RuleBehavior::Allow, tool, subject(resolved))?;",
     "let _ = subject(resolved);"),
    ("allow-rules-look-through-sudo", "chain/mod.rs",
     "let mut texts = vec![sub.match_text()];\n                        texts.extend(sub.stripped_match_text());\n                        texts.iter()",
     "let mut texts = vec![sub.match_text()];\n                        texts.extend(sub.stripped_match_text());\n                        texts.extend(sub.runner_stripped_match_text());\n                        texts.iter()"),
    ("unattended-waives-ask-rules", "chain/mod.rs",
     "if let Some(rule) = self.content_rule(rules, RuleBehavior::Ask, tool, facts) {",
     "if let Some(rule) = self.content_rule(rules, RuleBehavior::Ask, tool, facts).filter(|_| q.mode != PermissionMode::Unattended) {"),
    ("plan-mode-asks-instead-of-denying", "chain/verdicts.rs",
     "PermissionMode::DontAsk | PermissionMode::Plan,",
     "PermissionMode::DontAsk,"),
    ("deny-rules-do-not-look-through-runners", "chain/mod.rs",
     "                        texts.extend(sub.runner_stripped_match_text());\n                    } else {",
     "                    } else {"),
    ("shape-checks-skip-resolved-path", "chain/mod.rs",
     "if let Some(problem) = paths::shape_problem(resolved_s) {",
     "if let Some(problem) = paths::shape_problem(resolved_s).filter(|_| false) {"),
    ("case-sensitive-sensitive-names", "paths.rs",
     "let lowered = path.to_ascii_lowercase();",
     "let lowered = path.to_owned();"),
    ("file-rules-ignored-for-shell-arguments", "chain/mod.rs",
     ".or_else(|| self.path_rule_on_arguments(rules, behavior, analysis))",
     ""),
    ("classifier-never-pauses", "chain/modes.rs",
     "if in_a_row >= MAX_DENIALS_IN_A_ROW || total >= MAX_DENIALS_PER_SESSION {",
     "if in_a_row > MAX_DENIALS_IN_A_ROW && total >= MAX_DENIALS_PER_SESSION {"),
    ("plan-mode-honours-allow-rules", "chain/mod.rs",
     "if q.mode == PermissionMode::Plan && !modes::is_read_only(q, facts) {",
     "if q.mode == PermissionMode::Plan && modes::is_read_only(q, facts) && false {"),
]


def restore_leftovers():
    if not BACKUP.exists():
        return
    for saved in BACKUP.rglob("*.rs"):
        target = CRATE / saved.relative_to(BACKUP)
        shutil.copy2(saved, target)
        print(f"restored {target} from an interrupted run")
    shutil.rmtree(BACKUP)


def run_tests():
    proc = subprocess.run(
        ["cargo", "nextest", "run", "-p", "riot-permissions", "--no-fail-fast"],
        cwd=ROOT, capture_output=True, text=True,
    )
    failed = [line.split()[-1] for line in proc.stdout.splitlines() + proc.stderr.splitlines()
              if line.strip().startswith("FAIL")]
    compiled = "could not compile" not in proc.stderr
    return proc.returncode, sorted(set(failed)), compiled


def main():
    if IN_PLACE:
        restore_leftovers()
    prepare_copy()
    words = [w for w in sys.argv[1:] if not w.startswith("--")]
    results = []
    for name, rel, old, new in MUTANTS:
        if words and not any(w in name for w in words):
            continue
        path = CRATE / rel
        text = path.read_text()
        if text.count(old) != 1:
            results.append({"mutant": name, "status": "stale (original text not found once)"})
            continue
        backup = (BACKUP if IN_PLACE else ROOT / "backup") / rel
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
        try:
            path.write_text(text.replace(old, new))
            code, failed, compiled = run_tests()
        finally:
            shutil.copy2(backup, path)
            backup.unlink()
        status = "caught" if code != 0 and compiled else ("did not compile" if not compiled else "MISSED")
        results.append({"mutant": name, "status": status, "killed_by": failed[:5]})
        print(f"{status:>16}  {name}  {' '.join(failed[:3])}", flush=True)
    if IN_PLACE and BACKUP.exists():
        shutil.rmtree(BACKUP)
    (pathlib.Path(__file__).resolve().parent / "last_run.json").write_text(json.dumps(results, indent=2) + "\n")
    missed = [r for r in results if r["status"] != "caught"]
    print(f"{len(results) - len(missed)}/{len(results)} caught")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
