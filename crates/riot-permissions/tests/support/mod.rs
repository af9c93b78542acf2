//! Shared helpers for the decision tables.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::{Path, PathBuf};

use riot_permissions::{Policy, builtin_query};
use riot_protocol::{
    PermissionMode, PermissionPolicy, PermissionQuery, PermissionResult, PermissionRule,
    RuleBehavior, RulePattern, RuleSource,
};
use serde_json::{Value, json};

pub const PROJECT: &str = "/work/proj";
pub const HOME: &str = "/home/me";

pub fn rule(text: &str, behavior: RuleBehavior, source: RuleSource) -> PermissionRule {
    PermissionRule {
        pattern: RulePattern::parse(text).unwrap(),
        behavior,
        source,
    }
}

pub fn policy(rules: Vec<PermissionRule>) -> Policy {
    Policy::new(PROJECT, Some(PathBuf::from(HOME)))
        .with_riot_home(format!("{HOME}/.config/riot"))
        .with_rules(rules)
}

pub fn mode(name: &str) -> PermissionMode {
    name.parse().unwrap()
}

/// The query the built-in tool would produce.
pub fn query(tool: &str, arg: &str, mode: PermissionMode) -> PermissionQuery {
    let input = input_for(tool, arg);
    builtin_query(tool, &input, Path::new(PROJECT), mode)
}

pub fn input_for(tool: &str, arg: &str) -> Value {
    match tool {
        "Bash" => json!({"command": arg}),
        "Read" | "Write" | "Edit" => {
            json!({"file_path": arg, "content": "", "old_string": "a", "new_string": "b"})
        }
        "Glob" | "Grep" => json!({"pattern": "x", "path": arg}),
        "WebFetch" => json!({"url": arg}),
        _ => json!({}),
    }
}

/// `(decision, reason kind)` of a result.
pub fn verdict(result: &PermissionResult) -> (&'static str, &'static str) {
    match result {
        PermissionResult::Allow { reason, .. } => ("allow", reason.kind()),
        PermissionResult::Ask { reason, .. } => ("ask", reason.kind()),
        PermissionResult::Deny { reason, .. } => ("deny", reason.kind()),
        PermissionResult::Passthrough => ("passthrough", "none"),
    }
}

pub async fn decide(policy: &Policy, q: &PermissionQuery) -> (&'static str, &'static str) {
    verdict(&policy.decide(q).await)
}

/// Runs a table of `(tool, argument, expected decision, expected kind)`
/// in one mode and reports every mismatch at once.
pub async fn run_table(policy: &Policy, mode_name: &str, rows: &[(&str, &str, &str, &str)]) {
    let m = mode(mode_name);
    let mut failures = Vec::new();
    for &(tool, arg, decision, kind) in rows {
        let got = decide(policy, &query(tool, arg, m)).await;
        if got != (decision, kind) {
            failures.push(format!(
                "{mode_name:>12} {tool}({arg:?}): expected {decision}/{kind}, got {}/{}",
                got.0, got.1
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}
