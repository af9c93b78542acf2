//! Building results: rule reasons and messages, the places an Ask turns
//! into a Deny (plan / dont-ask modes, nobody answering), and the person's
//! answer turning into a result and, for "always", a session rule.

use riot_protocol::{
    DecisionReason, PermissionMode, PermissionOutcome, PermissionPolicy, PermissionResult,
    PermissionRule, RuleBehavior, RulePattern, RuleSource,
};

use crate::rules::source_label;

/// Plan and dont-ask cannot ask: an Ask becomes a Deny with the same
/// reason (the §9.1 table's "deny / safety", "deny / mode").
pub(super) fn finish_for_mode(mode: PermissionMode, result: PermissionResult) -> PermissionResult {
    match (mode, result) {
        (
            PermissionMode::DontAsk | PermissionMode::Plan,
            PermissionResult::Ask { reason, message },
        ) => {
            let message = format!(
                "{message}\nDenied: nobody can answer permission questions in {mode} mode. Do not retry; choose another approach."
            );
            PermissionResult::Deny { reason, message }
        }
        (_, PermissionResult::Passthrough) => deny(
            DecisionReason::Unverifiable {
                detail: "the chain reached no decision".into(),
            },
            "Denied: no permission decision could be made.".into(),
        ),
        (_, result) => result,
    }
}

/// When nobody can answer (no gate, a background agent, a timeout, a
/// cancelled prompt) an Ask becomes a Deny — never an Allow (§9.2). The
/// scheduler calls this; Allow and Deny pass through unchanged.
pub fn nobody_can_answer(result: PermissionResult, why: &str) -> PermissionResult {
    match result {
        PermissionResult::Ask { reason, message } => PermissionResult::Deny {
            reason: DecisionReason::NoAnswer {
                detail: format!("nobody could answer: {why}"),
                asked: Box::new(reason),
            },
            message: format!(
                "{message}\nDenied: nobody could answer the permission question ({why}). Do not retry; choose another approach."
            ),
        },
        PermissionResult::Passthrough => PermissionResult::Deny {
            reason: DecisionReason::NoAnswer {
                detail: format!("nobody could answer: {why}"),
                asked: Box::new(DecisionReason::Unverifiable {
                    detail: "no decision".into(),
                }),
            },
            message: format!("Denied: nobody could answer ({why})."),
        },
        other => other,
    }
}

pub(super) fn rule_reason(rule: &PermissionRule) -> DecisionReason {
    let verb = match rule.behavior {
        RuleBehavior::Allow => "allows",
        RuleBehavior::Ask => "asks about",
        RuleBehavior::Deny => "denies",
    };
    DecisionReason::Rule {
        detail: format!(
            "`{}` from {} {verb} this call",
            rule.pattern,
            source_label(rule.source)
        ),
        rule: rule.pattern.to_string(),
        behavior: rule.behavior,
        source: rule.source,
    }
}

pub(super) fn ask_rule(rule: &PermissionRule, describe: &str) -> PermissionResult {
    ask(
        rule_reason(rule),
        format!(
            "Riot wants to {describe}. The rule `{}` from {} asks first.",
            rule.pattern,
            source_label(rule.source)
        ),
    )
}

pub(super) fn allow(reason: DecisionReason) -> PermissionResult {
    PermissionResult::Allow {
        reason,
        updated_input: None,
    }
}

pub(super) fn ask(reason: DecisionReason, message: String) -> PermissionResult {
    PermissionResult::Ask { reason, message }
}

pub(super) fn deny(reason: DecisionReason, message: String) -> PermissionResult {
    PermissionResult::Deny { reason, message }
}

/// Turns the person's answer to an Ask into the final result, remembering
/// "always" answers as session rules so the question is not asked again
/// (a remembered allow still never beats a deny or ask rule). A timeout or
/// a cancelled question is a denial (§9.2). The scheduler calls this after
/// the gate answered; a result that was not an Ask is returned unchanged.
pub fn resolve_answer(
    policy: &dyn PermissionPolicy,
    asked: &PermissionResult,
    outcome: &PermissionOutcome,
) -> PermissionResult {
    if !matches!(asked, PermissionResult::Ask { .. }) {
        return asked.clone();
    }
    let remember = |text: &str, behavior| {
        if let Ok(pattern) = RulePattern::parse(text) {
            policy.remember(PermissionRule {
                pattern,
                behavior,
                source: RuleSource::Session,
            });
        }
    };
    let user = |detail: String| DecisionReason::User { detail };
    match outcome {
        PermissionOutcome::AllowOnce => allow(user("allowed once by the person".into())),
        PermissionOutcome::AllowAlways { rule } => {
            remember(rule, RuleBehavior::Allow);
            allow(user(format!(
                "allowed by the person; `{rule}` added for this session"
            )))
        }
        PermissionOutcome::RejectOnce { feedback } => {
            let said = feedback
                .as_deref()
                .map(|f| format!(" They said: {f}"))
                .unwrap_or_default();
            deny(
                user("rejected by the person".into()),
                format!("The user rejected this call.{said} Do not retry it unchanged."),
            )
        }
        PermissionOutcome::RejectAlways { rule } => {
            remember(rule, RuleBehavior::Deny);
            deny(
                user(format!(
                    "rejected by the person; `{rule}` denied for this session"
                )),
                format!(
                    "The user rejected this call and denied `{rule}` for the session. Do not retry it."
                ),
            )
        }
        PermissionOutcome::TimedOut => nobody_can_answer(asked.clone(), "the question timed out"),
        PermissionOutcome::Cancelled => {
            nobody_can_answer(asked.clone(), "the question was cancelled")
        }
    }
}
