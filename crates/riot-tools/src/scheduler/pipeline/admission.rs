//! Steps 4–6 of the pipeline: semantic validation, PreToolUse hooks and
//! permission (and the person), which decide whether a prepared call may
//! run and with what input.

use std::sync::Arc;

use futures::future::Either;
use riot_protocol::{
    AllowedBy, DecisionReason, HookDecisionKind, HookPermission, HookVerdict, PermissionQuery,
    PermissionResult, PreparedCall, ToolContext, ToolRunEvent,
};
use serde_json::Value;

use super::{Ending, OneCall, Ready, Run, send};
use crate::scheduler::permission::{Asker, denied_text};
use crate::scheduler::schema_hint::schema_hint;

/// A refusal before the call runs, cascading when its tool does.
fn refused(message: String, cascades: bool) -> Ending {
    Ending::Refused { message, cascades }
}

/// Prepares and validates a replaced input again; `Err` is the refusal.
async fn reprepare(
    one: &OneCall<'_>,
    input: Value,
    ctx: &ToolContext,
    cascades: bool,
) -> Result<Box<dyn PreparedCall>, Ending> {
    let re = Arc::clone(one.tool)
        .prepare(input)
        .map_err(|e| refused(schema_hint(&one.call.name, &e), cascades))?;
    re.validate_input(ctx)
        .await
        .map_err(|e| refused(e.message, cascades))?;
    Ok(re)
}

/// The refusal a PreToolUse hook's deny gives, if a hook denied the call.
fn hook_denial(one: &OneCall<'_>, hook: Option<&HookPermission>) -> Option<Ending> {
    let h = hook.filter(|h| h.decision == HookDecisionKind::Deny)?;
    // A hook's deny is final whatever the policy (§9.2).
    let reason = DecisionReason::Hook {
        detail: h.reason.clone(),
        hook: h.hook.clone(),
    };
    Some(Ending::Refused {
        message: denied_text(
            &one.call.name,
            one.describe,
            &format!("a PreToolUse hook blocked it: {}", h.reason),
            &reason,
        ),
        cascades: false,
    })
}

impl Run {
    /// Step 6: what asking the person needs.
    fn asker(&self) -> Asker<'_> {
        Asker {
            env: &self.env,
            policy: self.policy.as_ref(),
            gate: self.gate.as_ref(),
            timeout_ms: self.config.permission_timeout_ms,
        }
    }

    /// Steps 4–6: semantic validation, PreToolUse hooks and permission.
    /// `Ok` carries the call to run (possibly re-prepared with an input a
    /// hook or the permission layer changed).
    pub(super) async fn before_call(
        &self,
        one: &OneCall<'_>,
        prepared: Box<dyn PreparedCall>,
        ctx: &ToolContext,
    ) -> Result<Ready, Ending> {
        let cascades = one.tool.cascades_on_failure();
        prepared
            .validate_input(ctx)
            .await
            .map_err(|e| refused(e.message, cascades))?;
        // Step 5: PreToolUse hooks. A replaced input is parsed and checked
        // again, and the permission decision judges the new input.
        let verdict = self.pre_tool_use(one).await?;
        let mut input = one.call.input.clone();
        let prepared = match verdict.updated_input {
            Some(updated) if updated != one.call.input => {
                let re = reprepare(one, updated.clone(), ctx, cascades).await?;
                input = updated;
                re
            }
            _ => prepared,
        };
        let hook = verdict.permission;
        if let Some(denied) = hook_denial(one, hook.as_ref()) {
            return Err(denied);
        }
        let (prepared, input, allowed_by) = self
            .permit(one, prepared, input, hook, ctx, cascades)
            .await?;
        // Step 6, end: the question may have taken minutes.
        if one.scope.is_cancelled() {
            return Err(Ending::CancelledBeforeStart);
        }
        Ok(Ready {
            call: prepared,
            input,
            context: verdict.additional_context,
            allowed_by,
        })
    }

    /// Step 5: what the PreToolUse hooks say about the call; `Err` when it
    /// was cancelled first.
    async fn pre_tool_use(&self, one: &OneCall<'_>) -> Result<HookVerdict, Ending> {
        // An interrupt does not wait for a slow hook (dropping it kills it).
        match futures::future::select(
            Box::pin(self.hooks.pre_tool_use(one.call)),
            Box::pin(one.scope.cancelled()),
        )
        .await
        {
            Either::Left((verdict, _)) => Ok(verdict),
            Either::Right(((), _)) => Err(Ending::CancelledBeforeStart),
        }
    }

    /// The permission chain's decision on `query`; a hook's ask turns an
    /// allow into a question.
    async fn decide(&self, query: &PermissionQuery, describe: &str) -> PermissionResult {
        let mut decision = self.policy.decide(query).await;
        if let Some(h) = &query.hook
            && h.decision == HookDecisionKind::Ask
            && matches!(decision, PermissionResult::Allow { .. })
        {
            // A hook's ask is never waved through, whatever the policy.
            decision = PermissionResult::Ask {
                reason: DecisionReason::Hook {
                    detail: h.reason.clone(),
                    hook: h.hook.clone(),
                },
                message: format!("A PreToolUse hook asks before {describe}: {}", h.reason),
            };
        }
        decision
    }

    /// Step 6: the permission decision, asking the person when it says so.
    /// `Ok` is the call to run, the input it runs with and who allowed it.
    async fn permit(
        &self,
        one: &OneCall<'_>,
        prepared: Box<dyn PreparedCall>,
        input: Value,
        hook: Option<HookPermission>,
        ctx: &ToolContext,
        cascades: bool,
    ) -> Result<(Box<dyn PreparedCall>, Value, AllowedBy), Ending> {
        let (call, describe) = (one.call, one.describe);
        let tool_verdict = prepared.check_permissions(ctx).await;
        let target = prepared.permission_target(ctx);
        let query = PermissionQuery {
            tool_name: call.name.clone(),
            input: input.clone(),
            is_read_only: prepared.is_read_only(),
            target: target.clone(),
            tool_verdict,
            classifier_input: prepared.classifier_input(),
            mode: self.mode,
            hook,
        };
        let decision = self.decide(&query, describe).await;
        let emit = |event| send(one.tx, ToolRunEvent::Event(event));
        let allowed_by = match &decision {
            PermissionResult::Allow { reason, .. } => AllowedBy::of(reason),
            _ => AllowedBy::Person,
        };
        match decision {
            PermissionResult::Allow {
                updated_input: None,
                ..
            } => Ok((prepared, input, allowed_by)),
            PermissionResult::Allow {
                updated_input: Some(updated),
                ..
            } => {
                // The person changed the input: parse and check it again.
                let re = reprepare(one, updated.clone(), ctx, cascades).await?;
                Ok((re, updated, allowed_by))
            }
            PermissionResult::Deny { reason, message } => Err(Ending::Refused {
                message: denied_text(&call.name, describe, &message, &reason),
                cascades: false,
            }),
            PermissionResult::Ask { reason, message } => {
                // "Always" is offered only when the chain says a rule
                // would stick.
                let asked = PermissionResult::Ask {
                    reason: reason.clone(),
                    message: message.clone(),
                };
                let rule = self.policy.suggest_rule(&query, &asked);
                let preview = prepared.preview(ctx).await;
                self.asker()
                    .ask(
                        call, &target, reason, message, rule, preview, one.scope, describe, &emit,
                    )
                    .await?;
                Ok((prepared, input, allowed_by))
            }
            PermissionResult::Passthrough => {
                // The chain must not answer Passthrough; fail closed by asking.
                let reason = DecisionReason::Consent {
                    detail: "the permission chain gave no verdict".into(),
                };
                let preview = prepared.preview(ctx).await;
                self.asker()
                    .ask(
                        call,
                        &target,
                        reason,
                        format!("Allow {describe}?"),
                        None,
                        preview,
                        one.scope,
                        describe,
                        &emit,
                    )
                    .await?;
                Ok((prepared, input, allowed_by))
            }
        }
    }
}
