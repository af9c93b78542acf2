//! Claude Code's settings files (`.claude/settings.json`,
//! `.claude/settings.local.json`) read as Riot's: its permission rules and
//! mode names carried over to Riot's, so a rule means in Riot what it means
//! in Claude Code (docs/permissions.md "Claude Code's settings").
//!
//! Most rules read the same in both: `Bash(npm run test:*)`, `Bash(git
//! diff *)`, `WebFetch(domain:docs.rs)`, `mcp__github__*`. What differs is
//! the path rules of the file tools, which Claude Code matches like
//! `.gitignore` lines:
//!
//! - `/src/**` is relative to the project there (Riot: `./src/**`); `//x` is
//!   absolute in both, `~/x` in the home directory in both;
//! - a name without a `/` (`.env`, `*.pem`) matches at any depth *under the
//!   project* (Riot's bare name matches anywhere): `./**/.env`;
//! - a pattern that matches a directory covers everything in it, so each
//!   path rule also gets a `…/**` twin (`Read(./secrets)` and
//!   `Read(./secrets/**)`).
//!
//! A few tools have other names in Claude Code (`Agent`, `AskUserQuestion`,
//! `KillBash`, `MultiEdit`, `LS`, `NotebookRead`). A rule Riot cannot read
//! the same way is left out with a warning rather than guessed at.

use riot_protocol::{PermissionMode, RulePattern};

/// How Riot reads one rule from a Claude Code settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleReading {
    /// Riot's rules with the same meaning (one or two). Equal to the
    /// written rule when nothing needed changing.
    Rules(Vec<String>),
    /// It cannot be carried over; the reason, for a warning.
    NotUnderstood(String),
}

/// Claude Code's tool names that Riot spells differently, and Riot's name.
const TOOL_ALIASES: &[(&str, &str)] = &[
    ("Agent", "Task"),
    ("AskUserQuestion", "AskUser"),
    ("KillBash", "KillShell"),
    // Claude Code's Edit rules cover MultiEdit; Riot's Edit does both jobs.
    ("MultiEdit", "Edit"),
    // Listing a directory is Glob's job in Riot; Claude Code's Read rules
    // cover LS the way Riot's cover Glob.
    ("LS", "Glob"),
    ("NotebookRead", "Read"),
];

/// Tools whose rules take a path pattern.
const PATH_TOOLS: &[&str] = &["Read", "Edit", "Write", "Glob", "Grep", "NotebookEdit"];

/// Tools whose rules take a content pattern Riot can match: the path tools,
/// Bash's command and WebFetch's URL.
fn takes_content(tool: &str) -> bool {
    PATH_TOOLS.contains(&tool) || tool == "Bash" || tool == "WebFetch"
}

/// Reads a rule written for Claude Code.
pub fn read_rule(text: &str) -> RuleReading {
    let pattern = match RulePattern::parse(text) {
        Ok(p) => p,
        Err(e) => return RuleReading::NotUnderstood(e.to_string()),
    };
    let tool = TOOL_ALIASES
        .iter()
        .find(|(claude, _)| *claude == pattern.tool)
        .map_or(pattern.tool.as_str(), |(_, riot)| riot);
    let Some(content) = pattern.content.as_deref() else {
        return RuleReading::Rules(vec![tool.to_owned()]);
    };
    if !takes_content(tool) {
        return RuleReading::NotUnderstood(format!(
            "Riot matches the part in parentheses only for Bash, WebFetch and the file tools, so `{tool}(…)` would match nothing; write `{tool}` for the whole tool"
        ));
    }
    if !PATH_TOOLS.contains(&tool) {
        return RuleReading::Rules(vec![format!("{tool}({content})")]);
    }
    match path_patterns(content) {
        Ok(paths) => {
            RuleReading::Rules(paths.into_iter().map(|p| format!("{tool}({p})")).collect())
        }
        Err(why) => RuleReading::NotUnderstood(why.to_string()),
    }
}

/// Why a Claude Code path pattern has no Riot equivalent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum PathPatternError {
    /// Nothing but blanks in the parentheses.
    #[error("the path pattern is empty")]
    Empty,
    /// `!`, `[…]` or a backslash, which Riot's patterns lack.
    #[error("it uses `.gitignore` syntax Riot's path patterns do not have (`!`, `[…]` or `\\`)")]
    GitignoreSyntax,
}

/// A `.gitignore`-style path pattern as Riot path patterns.
fn path_patterns(pattern: &str) -> Result<Vec<String>, PathPatternError> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err(PathPatternError::Empty);
    }
    if pattern.starts_with('!') || pattern.contains(['[', ']', '\\']) {
        return Err(PathPatternError::GitignoreSyntax);
    }
    // A trailing `/` names a directory: its contents are covered below.
    let trimmed = pattern.trim_end_matches('/');
    let base = if trimmed.is_empty() || trimmed == "/" {
        // `/` alone: the whole project.
        ".".to_owned()
    } else if trimmed == "~" {
        return Ok(vec!["~/**".into()]);
    } else if trimmed.starts_with("//") || trimmed.starts_with("~/") {
        trimmed.to_owned()
    } else if let Some(rest) = trimmed.strip_prefix('/') {
        format!("./{rest}")
    } else if trimmed.starts_with("./") {
        trimmed.to_owned()
    } else if trimmed.contains('/') {
        // Anchored at the project, as Riot reads it too.
        trimmed.to_owned()
    } else if trimmed == "**" {
        "./**".to_owned()
    } else {
        // A bare name: at any depth under the project.
        format!("./**/{trimmed}")
    };
    if base.ends_with("/**") {
        return Ok(vec![base]);
    }
    let contents = if base == "." {
        "./**".to_owned()
    } else {
        format!("{base}/**")
    };
    if base == "." {
        return Ok(vec![contents]);
    }
    Ok(vec![base, contents])
}

/// Claude Code's permission mode names.
pub const MODE_NAMES: &[(&str, PermissionMode)] = &[
    ("default", PermissionMode::Default),
    ("acceptEdits", PermissionMode::AcceptEdits),
    ("plan", PermissionMode::Plan),
    ("bypassPermissions", PermissionMode::Bypass),
    ("dontAsk", PermissionMode::DontAsk),
];

/// Riot's mode for a Claude Code `defaultMode`.
pub fn mode(name: &str) -> Option<PermissionMode> {
    MODE_NAMES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// The settings keys of a Claude Code file Riot reads; others are Claude
/// Code's own and listed by `riot config show` as not used.
pub const KNOWN_KEYS: &[&str] = &["permissions", "hooks", "env", "$schema"];

/// The `permissions` keys Riot reads from a Claude Code file.
pub const KNOWN_PERMISSION_KEYS: &[&str] = &[
    "allow",
    "ask",
    "deny",
    "defaultMode",
    "additionalDirectories",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<String> {
        match read_rule(text) {
            RuleReading::Rules(r) => r,
            RuleReading::NotUnderstood(why) => panic!("{text}: {why}"),
        }
    }

    fn refused(text: &str) -> String {
        match read_rule(text) {
            RuleReading::Rules(r) => panic!("{text} was read as {r:?}"),
            RuleReading::NotUnderstood(why) => why,
        }
    }

    #[test]
    fn rules_riot_reads_the_same_way_are_kept_as_written() {
        for rule in [
            "Bash",
            "Bash(npm run test:*)",
            "Bash(git diff *)",
            "Bash(npm run build)",
            "WebFetch(domain:docs.rs)",
            "WebFetch",
            "WebSearch",
            "mcp__github",
            "mcp__github__*",
            "mcp__github__create_issue",
            "Read",
            "Edit",
            "TodoWrite",
        ] {
            assert_eq!(rules(rule), vec![rule.to_owned()], "{rule}");
        }
    }

    #[test]
    fn path_rules_mean_what_they_mean_in_claude_code() {
        let cases: &[(&str, &[&str])] = &[
            ("Read(./src/**)", &["Read(./src/**)"]),
            (
                "Edit(/src/**/*.ts)",
                &["Edit(./src/**/*.ts)", "Edit(./src/**/*.ts/**)"],
            ),
            (
                "Read(//etc/passwd)",
                &["Read(//etc/passwd)", "Read(//etc/passwd/**)"],
            ),
            ("Read(~/.ssh/**)", &["Read(~/.ssh/**)"]),
            ("Read(.env)", &["Read(./**/.env)", "Read(./**/.env/**)"]),
            ("Read(*.pem)", &["Read(./**/*.pem)", "Read(./**/*.pem/**)"]),
            (
                "Read(secrets/)",
                &["Read(./**/secrets)", "Read(./**/secrets/**)"],
            ),
            (
                "Read(config/secrets)",
                &["Read(config/secrets)", "Read(config/secrets/**)"],
            ),
            ("Write(docs/**)", &["Write(docs/**)"]),
            ("Read(/)", &["Read(./**)"]),
            ("Read(**)", &["Read(./**)"]),
            ("Read(**/*.key)", &["Read(**/*.key)", "Read(**/*.key/**)"]),
            ("Read(~)", &["Read(~/**)"]),
        ];
        for (written, riot) in cases {
            assert_eq!(rules(written), *riot, "{written}");
        }
    }

    #[test]
    fn claude_code_tool_names_become_riots() {
        assert_eq!(rules("MultiEdit"), ["Edit"]);
        assert_eq!(rules("MultiEdit(/src/**)"), ["Edit(./src/**)"]);
        assert_eq!(rules("Agent"), ["Task"]);
        assert_eq!(rules("AskUserQuestion"), ["AskUser"]);
        assert_eq!(rules("KillBash"), ["KillShell"]);
        assert_eq!(rules("LS(./build/**)"), ["Glob(./build/**)"]);
        assert_eq!(
            rules("NotebookRead(data.ipynb)"),
            ["Read(./**/data.ipynb)", "Read(./**/data.ipynb/**)"]
        );
    }

    #[test]
    fn what_riot_cannot_match_is_refused_with_the_reason() {
        assert_eq!(
            refused("Agent(Explore)"),
            "Riot matches the part in parentheses only for Bash, WebFetch and the file tools, so `Task(…)` would match nothing; write `Task` for the whole tool"
        );
        assert!(refused("Read(!keep.txt)").contains("`.gitignore` syntax"));
        assert!(refused("Read(src/[ab].rs)").contains("`.gitignore` syntax"));
        assert_eq!(refused("Read()"), "the path pattern is empty");
        assert_eq!(
            refused("Bash(ls"),
            RulePattern::parse("Bash(ls").unwrap_err().to_string()
        );
        assert!(refused("Web Fetch").contains("invalid tool name"));
    }

    #[test]
    fn every_rule_read_is_one_riot_parses() {
        for rule in [
            "Edit(/src/**/*.ts)",
            "Read(.env)",
            "LS(./build/**)",
            "Read(/)",
            "Bash(npm run test:*)",
        ] {
            for r in rules(rule) {
                RulePattern::parse(&r).unwrap();
            }
        }
    }

    #[test]
    fn mode_names() {
        assert_eq!(mode("acceptEdits"), Some(PermissionMode::AcceptEdits));
        assert_eq!(mode("bypassPermissions"), Some(PermissionMode::Bypass));
        assert_eq!(mode("dontAsk"), Some(PermissionMode::DontAsk));
        assert_eq!(
            mode("accept-edits"),
            None,
            "Riot's spelling is not Claude Code's"
        );
    }
}
