//! # riot-permissions — deciding allow / ask / deny
//!
//! Every tool call passes through one decision chain (docs/design.md §9.2)
//! that answers Allow, Ask or Deny with a [`DecisionReason`] a person can
//! read. This crate holds that chain ([`Policy`]), rule matching
//! ([`rules`]), the mode table ([`PermissionMode`] defaults), shell command
//! analysis on tree-sitter-bash ([`analyze_command`]) and the safety and
//! path-shape checks ([`paths`]).
//!
//! It deliberately does not ask anyone: the scheduler owns the permission
//! gate (waiting, the 60 s timeout, cancellation, `PermissionResolved`) and
//! hands the answer back through [`resolve_answer`], which turns "always"
//! answers into session rules; [`suggested_rule`] says which rule to offer.
//! It does not touch the file system except through an injected
//! [`FileSystem`](riot_protocol::FileSystem) used to resolve symlinks, so
//! every decision is reproducible in tests. `riot permissions check` prints
//! the kernel's decision with [`CheckReport::to_json`]. Settings files are
//! read (with project trust) by the kernel's configuration, not here.
//!
//! Architecture invariant: deny > ask > allow across all rule sources, and
//! nothing — a tool's own Allow, a hook's allow, an allow rule, bypass mode
//! — gets a call past a deny rule, an ask rule or a safety finding (except
//! `unattended`, which waives safety findings only).
//!
//! ```
//! use riot_permissions::{Policy, analyze_command, builtin_query};
//! use riot_protocol::{PermissionMode, PermissionPolicy, PermissionResult, PermissionRule,
//!                     RuleBehavior, RulePattern, RuleSource};
//! use serde_json::json;
//! use std::path::Path;
//!
//! assert!(analyze_command("git log --oneline | head").is_read_only());
//!
//! let deny_push = PermissionRule {
//!     pattern: RulePattern::parse("Bash(git push *)").unwrap(),
//!     behavior: RuleBehavior::Deny,
//!     source: RuleSource::User,
//! };
//! let policy = Policy::new("/work/project", Some("/home/me".into())).with_rules([deny_push]);
//! let query = builtin_query("Bash", &json!({"command": "cd x && git push"}),
//!                           Path::new("/work/project"), PermissionMode::Bypass);
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let result = rt.block_on(policy.decide(&query));
//! assert!(matches!(result, PermissionResult::Deny { .. }));
//! ```
//!
//! [`DecisionReason`]: riot_protocol::DecisionReason
//! [`PermissionMode`]: riot_protocol::PermissionMode

pub mod bash;
mod chain;
mod check;
pub mod paths;
pub mod rules;
mod suggest;

pub use bash::{CommandAnalysis, SimpleCommand, analyze_command};
pub use chain::{
    Classifier, ClassifierRequest, ClassifierUnavailable, ClassifierVerdict, HookDecision,
    MAX_DENIALS_IN_A_ROW, MAX_DENIALS_PER_SESSION, Policy, nobody_can_answer, resolve_answer,
};
pub use check::{CheckReport, builtin_query};
pub use rules::RuleSet;
pub use suggest::suggested_rule;
