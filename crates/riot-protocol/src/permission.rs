//! Permission types shared by the decision chain (`riot-permissions`), the
//! tools (their `check_permissions`), the loop and every face
//! (docs/design.md §9).
//!
//! This module holds data and the one predicate every layer must agree on,
//! [`DecisionReason::yields_to_bypass`]; the chain itself lives in
//! `riot-permissions`.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{RequestId, ToolUseId};

/// The session's permission mode (docs/design.md §9.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Ask for writes and commands that are not read-only.
    #[default]
    Default,
    /// File edits inside the project are allowed.
    AcceptEdits,
    /// Read-only until a plan is approved.
    Plan,
    /// A classifier model answers what rules did not.
    Auto,
    /// Allow what rules and safety checks do not stop.
    Bypass,
    /// Every would-be question is a denial (CI).
    DontAsk,
    /// Safety findings pass too; only from settings, with confirmation.
    Unattended,
}

impl PermissionMode {
    /// Every mode, in documentation order.
    pub const ALL: [PermissionMode; 7] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Auto,
        PermissionMode::Bypass,
        PermissionMode::DontAsk,
        PermissionMode::Unattended,
    ];

    /// The name used on the command line and in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Auto => "auto",
            PermissionMode::Bypass => "bypass",
            PermissionMode::DontAsk => "dont-ask",
            PermissionMode::Unattended => "unattended",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown permission mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}`; use one of default, accept-edits, plan, auto, bypass, dont-ask, unattended"
)]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleBehavior {
    Allow,
    Ask,
    Deny,
}

/// Where a rule came from. Source priority only picks which rule is quoted
/// as the reason; it never decides between deny, ask and allow (§9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    /// `<riot home>/settings.json`.
    User,
    /// `<project>/.riot/settings.json`.
    Project,
    /// `<project>/.riot/settings.local.json`.
    Local,
    /// `--allow` / `--ask` / `--deny` on the command line.
    CliFlag,
    /// Added during the session ("allow always").
    Session,
}

/// A parsed rule pattern: `Tool` or `Tool(content)`, e.g. `Bash(npm run
/// test *)`, `Read(./secrets/**)`, `WebFetch(domain:docs.rs)`,
/// `mcp__github__*`. How `content` matches is the tool family's business
/// (`riot-permissions`); an empty content `Tool()` matches only the empty
/// string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct RulePattern {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// A rule that cannot be parsed, with what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleParseError {
    #[error("empty permission rule; write a tool name such as `Read` or `Bash(git status)`")]
    Empty,
    #[error("permission rule `{0}` has no closing `)`; write `Tool(content)`")]
    Unclosed(String),
    #[error(
        "permission rule `{0}` has an invalid tool name; tool names are letters, digits, `_`, `-` and `*`"
    )]
    BadToolName(String),
}

impl RulePattern {
    /// Parses `Tool` or `Tool(content)`. The content runs to the last `)`,
    /// so it may itself contain parentheses.
    pub fn parse(text: &str) -> Result<Self, RuleParseError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleParseError::Empty);
        }
        let (tool, content) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(RuleParseError::Unclosed(text.to_owned()));
                };
                (&text[..open], Some(inner.to_owned()))
            }
        };
        let valid = !tool.is_empty()
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'));
        if !valid {
            return Err(RuleParseError::BadToolName(text.to_owned()));
        }
        Ok(RulePattern {
            tool: tool.to_owned(),
            content,
        })
    }
}

impl fmt::Display for RulePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.content {
            Some(content) => write!(f, "{}({content})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// A rule with its behaviour and origin.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRule {
    pub pattern: RulePattern,
    pub behavior: RuleBehavior,
    pub source: RuleSource,
}

/// Why a decision was made. Every decision carries one, because faces, logs
/// and the chain itself depend on it (§9.2). Serialized as
/// `{"kind": "...", "detail": "...", ...}` (docs/interfaces.md: `permissions check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionReason {
    /// A configured rule matched.
    Rule {
        detail: String,
        rule: String,
        behavior: RuleBehavior,
        source: RuleSource,
    },
    /// The mode's default for this kind of call.
    Mode {
        detail: String,
        mode: PermissionMode,
    },
    /// A safety finding: a sensitive path, a dangerous shell construct.
    Safety { detail: String },
    /// The call could not be verified as harmless (e.g. a shell command
    /// with variables or command substitution).
    Unverifiable { detail: String },
    /// The tool asks for the person's consent for this kind of call.
    Consent { detail: String },
    /// The auto-mode classifier answered.
    Classifier { detail: String },
    /// A PreToolUse hook answered.
    Hook { detail: String, hook: String },
    /// The OS sandbox made the call safe to run.
    Sandbox { detail: String },
    /// Nobody could answer the question (dont-ask, background agent,
    /// timeout, cancelled), so an Ask became a Deny.
    NoAnswer {
        detail: String,
        asked: Box<DecisionReason>,
    },
    /// The person answered the question.
    User { detail: String },
}

impl DecisionReason {
    /// The one predicate deciding whether an Ask with this reason is waved
    /// through by bypass mode (docs/design.md §9.2 step 4–5). Unverifiable
    /// commands, consent questions and mode defaults yield; safety findings,
    /// the user's own rules and hooks never do.
    pub fn yields_to_bypass(&self) -> bool {
        match self {
            DecisionReason::Unverifiable { .. }
            | DecisionReason::Consent { .. }
            | DecisionReason::Mode { .. } => true,
            DecisionReason::Rule { .. }
            | DecisionReason::Safety { .. }
            | DecisionReason::Classifier { .. }
            | DecisionReason::Hook { .. }
            | DecisionReason::Sandbox { .. }
            | DecisionReason::NoAnswer { .. }
            | DecisionReason::User { .. } => false,
        }
    }

    /// The human-readable detail.
    pub fn detail(&self) -> &str {
        match self {
            DecisionReason::Rule { detail, .. }
            | DecisionReason::Mode { detail, .. }
            | DecisionReason::Safety { detail }
            | DecisionReason::Unverifiable { detail }
            | DecisionReason::Consent { detail }
            | DecisionReason::Classifier { detail }
            | DecisionReason::Hook { detail, .. }
            | DecisionReason::Sandbox { detail }
            | DecisionReason::NoAnswer { detail, .. }
            | DecisionReason::User { detail } => detail,
        }
    }

    /// The `kind` tag as it appears in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            DecisionReason::Rule { .. } => "rule",
            DecisionReason::Mode { .. } => "mode",
            DecisionReason::Safety { .. } => "safety",
            DecisionReason::Unverifiable { .. } => "unverifiable",
            DecisionReason::Consent { .. } => "consent",
            DecisionReason::Classifier { .. } => "classifier",
            DecisionReason::Hook { .. } => "hook",
            DecisionReason::Sandbox { .. } => "sandbox",
            DecisionReason::NoAnswer { .. } => "no_answer",
            DecisionReason::User { .. } => "user",
        }
    }
}

/// The verdict of a tool's own `check_permissions`, and of the chain.
/// `Passthrough` means "no opinion": the chain decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PermissionResult {
    Allow {
        reason: DecisionReason,
        /// The input the call will actually run with, when a hook or the
        /// person changed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        updated_input: Option<Value>,
    },
    Ask {
        reason: DecisionReason,
        /// What a person is shown.
        message: String,
    },
    Deny {
        reason: DecisionReason,
        /// What the model is told.
        message: String,
    },
    Passthrough,
}

/// What the permission dialog shows (docs/design.md §9: the tool, the
/// resolved absolute path or the full command, the reason, the choices).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRequestDetail {
    pub tool_use_id: ToolUseId,
    pub tool_name: String,
    /// The tool's one-line `describe`.
    pub describe: String,
    pub input: Value,
    /// Resolved absolute path for file tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The full command for shell tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub reason: DecisionReason,
    pub message: String,
    /// The rule "allow always" would add, when one can be offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_rule: Option<String>,
    /// What the call will do, built by the tool against the files as they
    /// are when it asks (`Tool::preview`): an edit's or a write's diff
    /// (a new file's whole content as added lines), a notebook cell before
    /// and after. Every face shows this one payload; `None` when the
    /// input says it all (a command, a URL, MCP arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<crate::ui::UiPayload>,
}

/// How a permission question ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    AllowOnce,
    /// Allowed, and this rule was added so the question is not asked again.
    AllowAlways {
        rule: String,
    },
    RejectOnce {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
    RejectAlways {
        rule: String,
    },
    /// Nobody answered in time; treated as a denial.
    TimedOut,
    /// The turn was cancelled while asking; treated as a denial.
    Cancelled,
}

impl PermissionOutcome {
    /// Only the person's explicit allow lets the call run.
    pub fn is_allowed(&self) -> bool {
        matches!(
            self,
            PermissionOutcome::AllowOnce | PermissionOutcome::AllowAlways { .. }
        )
    }
}

/// A pending question, as faces answer it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionAnswer {
    pub request_id: RequestId,
    pub outcome: PermissionOutcome,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_patterns_parse_tool_and_content() {
        let rule = RulePattern::parse("Bash(npm run test *)").unwrap();
        assert_eq!(rule.tool, "Bash");
        assert_eq!(rule.content.as_deref(), Some("npm run test *"));
        assert_eq!(rule.to_string(), "Bash(npm run test *)");

        let whole = RulePattern::parse("mcp__github__*").unwrap();
        assert_eq!(whole.tool, "mcp__github__*");
        assert_eq!(whole.content, None);

        let nested = RulePattern::parse("Bash(echo (a))").unwrap();
        assert_eq!(nested.content.as_deref(), Some("echo (a)"));

        let empty = RulePattern::parse("Bash()").unwrap();
        assert_eq!(empty.content.as_deref(), Some(""));
    }

    #[test]
    fn bad_rule_patterns_say_what_to_write() {
        assert_eq!(RulePattern::parse("  "), Err(RuleParseError::Empty));
        assert_eq!(
            RulePattern::parse("Bash(ls"),
            Err(RuleParseError::Unclosed("Bash(ls".into()))
        );
        assert_eq!(
            RulePattern::parse("Ba sh"),
            Err(RuleParseError::BadToolName("Ba sh".into()))
        );
    }

    #[test]
    fn only_unverifiable_consent_and_mode_yield_to_bypass() {
        let yields = |r: DecisionReason| r.yields_to_bypass();
        assert!(yields(DecisionReason::Unverifiable {
            detail: "$(x)".into()
        }));
        assert!(yields(DecisionReason::Consent {
            detail: "write".into()
        }));
        assert!(yields(DecisionReason::Mode {
            detail: "default asks".into(),
            mode: PermissionMode::Default
        }));
        assert!(!yields(DecisionReason::Safety {
            detail: "~/.zshrc".into()
        }));
        assert!(!yields(DecisionReason::Rule {
            detail: "ask rule".into(),
            rule: "Bash(git push *)".into(),
            behavior: RuleBehavior::Ask,
            source: RuleSource::User,
        }));
        assert!(!yields(DecisionReason::Hook {
            detail: "hook asked".into(),
            hook: "guard.sh".into()
        }));
    }

    #[test]
    fn modes_round_trip_their_cli_names() {
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
    }

    #[test]
    fn nobody_answering_is_never_an_allow() {
        assert!(!PermissionOutcome::TimedOut.is_allowed());
        assert!(!PermissionOutcome::Cancelled.is_allowed());
        assert!(!PermissionOutcome::RejectOnce { feedback: None }.is_allowed());
        assert!(PermissionOutcome::AllowOnce.is_allowed());
    }
}
