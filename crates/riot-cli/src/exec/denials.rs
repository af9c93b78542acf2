//! The end of a `riot exec` run: which calls were denied, and the flags
//! that would have allowed them, in words for a person.
//!
//! The model was told about each denial in its own words (the transcript
//! keeps them); the person gets this summary instead. A flag is only
//! offered after the permission chain confirmed it: each candidate (an
//! `--allow` rule, `--permission-mode accept-edits`, as a last resort
//! `bypass`) is put to a [`Probe`] — the kernel's `check_permission` with
//! the run's own flags widened by the candidate — and kept only when the
//! call would then be allowed.
//!
//! Exit code: a run whose turn completed still exits 0 when calls were
//! denied. Denials are the normal working of exec's permission model — the
//! model was told, and often finds another way — so they do not make the
//! run a failure; the summary is printed last on stderr so it is seen.

use std::path::Path;

use riot_protocol::{PermissionMode, PermissionResult};
use serde_json::{Value, json};

use super::status::cut;

/// Words the scheduler uses when nobody can answer a permission question
/// (riot-tools `scheduler/permission.rs`); the CLI tests pin the pairing.
const NOBODY_ANSWERS: &str = "nobody can answer permission questions";
/// Every permission denial the scheduler reports starts so.
const DENIAL_START: &str = "Permission to run ";

/// At most this many distinct calls are listed per group.
const MAX_LISTED: usize = 10;

/// Why a call was denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenialKind {
    /// It needed a person's approval, and nobody can answer in exec.
    NobodyAnswers,
    /// A rule, mode, hook or safety check refused it.
    Refused,
}

/// One denied call, as the run saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    pub tool: String,
    pub input: Value,
    pub describe: String,
    pub kind: DenialKind,
    /// The chain's reason, for a person ("`cargo test` is not a known
    /// read-only command").
    pub why: String,
}

/// Recognizes a permission denial in a tool result's text; returns its
/// kind and reason.
pub fn classify(text: &str) -> Option<(DenialKind, String)> {
    if !text.starts_with(DENIAL_START) {
        return None;
    }
    if text.contains(NOBODY_ANSWERS) {
        let why = text
            .split_once("it needs the person's approval (")
            .and_then(|(_, rest)| rest.rsplit_once("), and nobody can answer"))
            .map(|(why, _)| why.to_owned())
            .unwrap_or_default();
        return Some((DenialKind::NobodyAnswers, why));
    }
    let (_, rest) = text.split_once(") was denied: ")?;
    let why = rest
        .split_once(". Do not retry")
        .map_or(rest, |(why, _)| why)
        .lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('.');
    Some((DenialKind::Refused, why.to_owned()))
}

/// How the run's flags are widened for a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Widen {
    Nothing,
    /// These `--allow` rules added.
    Allow(Vec<String>),
    /// `--permission-mode` replaced.
    Mode(PermissionMode),
}

/// The permission chain's decision for a call under the run's flags,
/// widened.
#[async_trait::async_trait]
pub trait Probe: Send + Sync {
    /// `None` when the chain cannot judge the call here (a tool that is
    /// not built in, an input that does not parse).
    async fn decide(&self, tool: &str, input: &Value, widen: &Widen) -> Option<PermissionResult>;
}

async fn allows(probe: &dyn Probe, tool: &str, input: &Value, widen: &Widen) -> Option<bool> {
    probe
        .decide(tool, input, widen)
        .await
        .map(|r| matches!(r, PermissionResult::Allow { .. }))
}

/// The summary lines for stderr; empty when nothing was denied.
pub async fn summary(denials: &[Denial], cwd: &Path, probe: &dyn Probe) -> Vec<String> {
    let mut lines = Vec::new();
    for (kind, heading) in [
        (
            DenialKind::NobodyAnswers,
            "denied because nobody can answer permission questions in `riot exec`",
        ),
        (DenialKind::Refused, "denied by the permission checks"),
    ] {
        let of_kind: Vec<&Denial> = denials.iter().filter(|d| d.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let total = of_kind.len();
        let (calls, were) = if total == 1 {
            ("call", "was")
        } else {
            ("calls", "were")
        };
        lines.push(format!("riot: {total} {calls} {were} {heading}:"));
        // The same call denied again (a model retrying) is listed once.
        let mut distinct: Vec<(&Denial, usize)> = Vec::new();
        for d in of_kind {
            match distinct
                .iter_mut()
                .find(|(seen, _)| seen.tool == d.tool && seen.input == d.input)
            {
                Some((_, n)) => *n += 1,
                None => distinct.push((d, 1)),
            }
        }
        for (d, n) in distinct.iter().take(MAX_LISTED) {
            let times = if *n > 1 {
                format!(" ({n} times)")
            } else {
                String::new()
            };
            let label = label(&d.tool, &d.input, &d.describe);
            let line = match explain(d, cwd, probe).await {
                Explanation::Flags(flags) => {
                    format!("  • {label}{times} — allow it with {}", flags.join(" or "))
                }
                Explanation::NoFlag(why) => {
                    format!("  • {label}{times} — no flag allows it: {why}")
                }
                Explanation::Unexplained(why) if why.is_empty() => format!("  • {label}{times}"),
                Explanation::Unexplained(why) => format!("  • {label}{times} — {why}"),
            };
            lines.push(line);
        }
        if distinct.len() > MAX_LISTED {
            lines.push(format!(
                "  … and {} more (the session's transcript has them all)",
                distinct.len() - MAX_LISTED
            ));
        }
    }
    lines
}

/// What the summary says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Explanation {
    /// Each entry allows the call (one or more flags, shell-quoted).
    Flags(Vec<String>),
    /// The chain still refuses it with any flag tried; the reason.
    NoFlag(String),
    /// The chain cannot judge it here, or would allow it now (the session's
    /// mode or a hook differed): the reason recorded at the time.
    Unexplained(String),
}

async fn explain(d: &Denial, cwd: &Path, probe: &dyn Probe) -> Explanation {
    let base = probe.decide(&d.tool, &d.input, &Widen::Nothing).await;
    let why_now = match &base {
        Some(PermissionResult::Ask { reason, .. } | PermissionResult::Deny { reason, .. }) => {
            reason.detail().to_owned()
        }
        Some(_) => return Explanation::Unexplained(d.why.clone()),
        None => String::new(),
    };
    let mut flags = Vec::new();
    for rules in candidate_rules(&d.tool, &d.input, cwd, probe).await {
        let widen = Widen::Allow(rules.clone());
        let verdict = allows(probe, &d.tool, &d.input, &widen).await;
        // An MCP tool is not judged here, but its name is the documented rule.
        if verdict == Some(true) || (verdict.is_none() && d.tool.starts_with("mcp__")) {
            let shown: Vec<String> = rules
                .iter()
                .map(|r| format!("--allow {}", shell_quote(r)))
                .collect();
            flags.push(shown.join(" "));
            break;
        }
    }
    if allows(
        probe,
        &d.tool,
        &d.input,
        &Widen::Mode(PermissionMode::AcceptEdits),
    )
    .await
        == Some(true)
    {
        flags.push("--permission-mode accept-edits".to_owned());
    }
    if flags.is_empty()
        && allows(
            probe,
            &d.tool,
            &d.input,
            &Widen::Mode(PermissionMode::Bypass),
        )
        .await
            == Some(true)
    {
        flags.push("--permission-mode bypass".to_owned());
    }
    if !flags.is_empty() {
        return Explanation::Flags(flags);
    }
    match base {
        Some(_) => Explanation::NoFlag(if why_now.is_empty() {
            d.why.clone()
        } else {
            why_now
        }),
        None => Explanation::Unexplained(d.why.clone()),
    }
}

/// `Bash \`cargo test\``, `Write out.txt`.
fn label(tool: &str, input: &Value, describe: &str) -> String {
    if tool == "Bash"
        && let Some(command) = input.get("command").and_then(Value::as_str)
    {
        let first = command.lines().next().unwrap_or("");
        let more = if command.lines().nth(1).is_some() {
            " …"
        } else {
            ""
        };
        return format!("Bash `{}{more}`", cut(first, 80));
    }
    if describe.is_empty() || describe == tool {
        tool.to_owned()
    } else if describe.starts_with(tool) {
        describe.to_owned()
    } else {
        format!("{tool} ({describe})")
    }
}

/// Rule sets to try, narrowest useful first; each set is offered whole.
async fn candidate_rules(
    tool: &str,
    input: &Value,
    cwd: &Path,
    probe: &dyn Probe,
) -> Vec<Vec<String>> {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    match tool {
        "Bash" => match text("command") {
            Some(command) => bash_rules(command, probe).await,
            None => Vec::new(),
        },
        "Read" | "Glob" | "Grep" | "Write" | "Edit" | "NotebookEdit" => {
            let family = if matches!(tool, "Read" | "Glob" | "Grep") {
                "Read"
            } else {
                "Edit"
            };
            let path = text("file_path")
                .or_else(|| text("notebook_path"))
                .or_else(|| text("path"));
            match path {
                Some(p) => vec![vec![format!("{family}({})", rule_path(p, cwd))]],
                None => vec![vec![tool.to_owned()]],
            }
        }
        _ => vec![vec![tool.to_owned()]],
    }
}

/// A path as rules write it: `./rel` inside the project, else absolute.
fn rule_path(raw: &str, cwd: &Path) -> String {
    // Rules name the home directory as `~/` too, as the file tools do.
    if raw == "~" || raw.starts_with("~/") {
        return raw.to_owned();
    }
    let path = Path::new(raw);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    match absolute.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => {
            let rel = rel.display().to_string();
            format!("./{}", rel.trim_start_matches("./"))
        }
        _ => absolute.display().to_string(),
    }
}

/// For each simple command the chain would not allow on its own: a rule
/// for its first two words (`Bash(cargo test *)`) when the second is a
/// subcommand, then, as the fallback set, rules for the exact commands.
async fn bash_rules(command: &str, probe: &dyn Probe) -> Vec<Vec<String>> {
    let analysis = riot_permissions::analyze_command(command);
    let mut general = Vec::new();
    let mut exact = Vec::new();
    for sub in &analysis.subcommands {
        let alone = json!({"command": sub.text});
        if allows(probe, "Bash", &alone, &Widen::Nothing).await == Some(true) {
            continue;
        }
        let text = sub
            .stripped_match_text()
            .unwrap_or_else(|| sub.match_text());
        let words: Vec<&str> = text.split_whitespace().collect();
        let rule = format!("Bash({text})");
        let prefix = match words.as_slice() {
            [name, sub_command, ..] if is_subcommand(sub_command) => {
                format!("Bash({name} {sub_command} *)")
            }
            _ => rule.clone(),
        };
        if !general.contains(&prefix) {
            general.push(prefix);
        }
        if !exact.contains(&rule) {
            exact.push(rule);
        }
    }
    if general.is_empty() {
        return Vec::new();
    }
    if general == exact {
        vec![general]
    } else {
        vec![general, exact]
    }
}

/// `test` in `cargo test`, `run` in `npm run`: a plain lower-case word.
fn is_subcommand(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// One shell word in single quotes.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {

    use riot_protocol::DecisionReason;

    use super::*;

    /// A chain that allows what a fixed list of (flags → call) says.
    struct FakeChain {
        /// (rule or mode the flags must contain, tool, command or path).
        allowed_by: Vec<(Widen, &'static str, &'static str)>,
        /// Calls allowed without any flag.
        allowed: Vec<(&'static str, &'static str)>,
    }

    fn key(input: &Value) -> &str {
        input
            .get("command")
            .or_else(|| input.get("file_path"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    #[async_trait::async_trait]
    impl Probe for FakeChain {
        async fn decide(
            &self,
            tool: &str,
            input: &Value,
            widen: &Widen,
        ) -> Option<PermissionResult> {
            if tool.starts_with("mcp__") {
                return None;
            }
            let allowed = self.allowed.contains(&(tool, key(input)))
                || self
                    .allowed_by
                    .iter()
                    .any(|(w, t, k)| w == widen && *t == tool && *k == key(input));
            let reason = DecisionReason::Safety {
                detail: format!("the chain's reason for {}", key(input)),
            };
            Some(if allowed {
                PermissionResult::Allow {
                    reason,
                    updated_input: None,
                }
            } else {
                PermissionResult::Ask {
                    reason,
                    message: String::new(),
                }
            })
        }
    }

    fn denial(tool: &str, input: Value, describe: &str) -> Denial {
        Denial {
            tool: tool.into(),
            input,
            describe: describe.into(),
            kind: DenialKind::NobodyAnswers,
            why: "recorded reason".into(),
        }
    }

    fn allow(rules: &[&str]) -> Widen {
        Widen::Allow(rules.iter().map(|r| (*r).to_owned()).collect())
    }

    #[test]
    fn the_schedulers_denials_are_recognized_with_their_reasons() {
        let nobody = "Permission to run Bash (cargo test) was denied: it needs the person's approval (`cargo test` is not a known read-only command), and nobody can answer permission questions in this session. Do not retry it; find another way that does not need this permission, or tell the person what you need and why.";
        assert_eq!(
            classify(nobody),
            Some((
                DenialKind::NobodyAnswers,
                "`cargo test` is not a known read-only command".into()
            ))
        );
        let rule = "Permission to run Bash (rm -rf x) was denied: `Bash(rm *)` from a command-line flag denies this call. Do not retry the same call; choose an approach this permission allows, or tell the person what you need.";
        assert_eq!(
            classify(rule),
            Some((
                DenialKind::Refused,
                "`Bash(rm *)` from a command-line flag denies this call".into()
            ))
        );
        assert_eq!(classify("Exit code 1"), None);
        assert_eq!(classify("Interrupted by the user before it started."), None);
    }

    #[tokio::test]
    async fn each_call_gets_the_flags_the_chain_confirmed() {
        let chain = FakeChain {
            allowed_by: vec![
                (allow(&["Bash(cargo test *)"]), "Bash", "cargo test"),
                (allow(&["Edit(./out.txt)"]), "Write", "out.txt"),
                (Widen::Mode(PermissionMode::AcceptEdits), "Write", "out.txt"),
                (Widen::Mode(PermissionMode::Bypass), "Bash", "rm -rf build"),
            ],
            allowed: vec![],
        };
        let cargo = json!({"command": "cargo test"});
        let denials = [
            denial("Bash", cargo.clone(), "cargo test"),
            denial(
                "Write",
                json!({"file_path": "out.txt", "content": "x"}),
                "Write out.txt",
            ),
            denial("Bash", cargo, "cargo test"),
            // Neither its exact rule nor accept-edits: only bypass.
            denial("Bash", json!({"command": "rm -rf build"}), "rm -rf build"),
            denial(
                "Write",
                json!({"file_path": ".git/config", "content": "x"}),
                "Write .git/config",
            ),
            denial("mcp__db__drop", json!({}), "mcp__db__drop"),
        ];
        let lines = summary(&denials, Path::new("/project"), &chain).await;
        assert_eq!(
            lines,
            [
                "riot: 6 calls were denied because nobody can answer permission questions in `riot exec`:",
                "  • Bash `cargo test` (2 times) — allow it with --allow 'Bash(cargo test *)'",
                "  • Write out.txt — allow it with --allow 'Edit(./out.txt)' or --permission-mode accept-edits",
                "  • Bash `rm -rf build` — allow it with --permission-mode bypass",
                "  • Write .git/config — no flag allows it: the chain's reason for .git/config",
                "  • mcp__db__drop — allow it with --allow 'mcp__db__drop'",
            ]
        );
    }

    #[tokio::test]
    async fn a_compound_command_gets_rules_only_for_the_parts_that_need_one() {
        let chain = FakeChain {
            allowed_by: vec![(
                allow(&["Bash(npm run *)", "Bash(git push *)"]),
                "Bash",
                "cd web && npm run build && git push origin main",
            )],
            allowed: vec![("Bash", "cd web")],
        };
        let d = denial(
            "Bash",
            json!({"command": "cd web && npm run build && git push origin main"}),
            "Build and push",
        );
        let lines = summary(&[d], Path::new("/project"), &chain).await;
        assert_eq!(
            lines[1],
            "  • Bash `cd web && npm run build && git push origin main` — allow it with --allow 'Bash(npm run *)' --allow 'Bash(git push *)'"
        );
    }

    #[tokio::test]
    async fn refused_calls_are_listed_apart_with_the_reason() {
        let chain = FakeChain {
            allowed_by: vec![],
            allowed: vec![],
        };
        let mut d = denial("Bash", json!({"command": "rm -rf /"}), "rm -rf /");
        d.kind = DenialKind::Refused;
        let lines = summary(&[d], Path::new("/project"), &chain).await;
        assert_eq!(
            lines,
            [
                "riot: 1 call was denied by the permission checks:",
                "  • Bash `rm -rf /` — no flag allows it: the chain's reason for rm -rf /",
            ]
        );
    }

    #[test]
    fn rules_quote_for_the_shell_and_paths_read_as_rules_write_them() {
        assert_eq!(
            shell_quote("Bash(echo 'hi' *)"),
            r"'Bash(echo '\''hi'\'' *)'"
        );
        let cwd = Path::new("/project");
        assert_eq!(rule_path("src/lib.rs", cwd), "./src/lib.rs");
        assert_eq!(rule_path("/project/src/lib.rs", cwd), "./src/lib.rs");
        assert_eq!(rule_path("/etc/hosts", cwd), "/etc/hosts");
        assert_eq!(rule_path("~/notes.md", cwd), "~/notes.md");
        assert!(is_subcommand("test") && is_subcommand("run-script"));
        assert!(!is_subcommand("-rf") && !is_subcommand("1") && !is_subcommand("a.py"));
    }
}
