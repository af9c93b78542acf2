//! Step 7: the mode table of docs/design.md §9.1 for calls nothing else
//! decided, and the auto-mode classifier's turn.

use std::sync::atomic::Ordering;

use riot_protocol::{
    DecisionReason, PathAccess, PermissionMode, PermissionQuery, PermissionResult,
};

use super::verdicts::{allow, ask, deny};
use super::{ClassifierRequest, ClassifierUnavailable, ClassifierVerdict, Facts, Policy, Step};

/// Classifier denials in a row after which auto mode asks a person.
pub const MAX_DENIALS_IN_A_ROW: u32 = 3;
/// Classifier denials in one session after which auto mode asks a person.
pub const MAX_DENIALS_PER_SESSION: u32 = 20;

/// Read-only by the tool's word **and** by what the chain sees: a Bash
/// command must pass `analyze_command`, a path must only be read.
pub(super) fn is_read_only(q: &PermissionQuery, facts: &Facts) -> bool {
    q.is_read_only
        && match facts {
            Facts::Bash(analysis) => analysis.is_read_only(),
            Facts::Path { access, .. } => *access == PathAccess::Read,
            _ => true,
        }
}

impl Policy {
    /// The person took over (answered a question): the classifier gets a
    /// fresh streak. The session total stays.
    pub fn reset_classifier_streak(&self) {
        self.denials_in_a_row.store(0, Ordering::SeqCst);
    }

    /// Step 7's mode default for a call nothing else decided (§9.1 table).
    pub(super) fn mode_default(
        &self,
        q: &PermissionQuery,
        facts: &Facts,
        describe: String,
    ) -> Step {
        let mode = q.mode;
        if is_read_only(q, facts) {
            return Step::Final(allow(DecisionReason::Mode {
                detail: "read-only calls are allowed in every mode".into(),
                mode,
            }));
        }
        let mode_reason = |detail: String| DecisionReason::Mode { detail, mode };
        if mode == PermissionMode::Plan {
            return Step::Final(deny(
                mode_reason("plan mode allows only read-only calls".into()),
                format!(
                    "Plan mode: cannot {describe} until the plan is approved. Finish the plan and call ExitPlanMode."
                ),
            ));
        }
        match facts {
            Facts::Path {
                resolved,
                inside_project: true,
                ..
            } => match mode {
                PermissionMode::AcceptEdits | PermissionMode::Auto => Step::Final(allow(
                    mode_reason(format!("{mode} mode allows edits inside the project")),
                )),
                _ => Step::Final(ask(
                    mode_reason(format!("{mode} mode asks before changing files")),
                    format!("Riot wants to write {}", resolved.display()),
                )),
            },
            Facts::Path {
                resolved,
                inside_project: false,
                ..
            } => match mode {
                PermissionMode::Auto => Step::Classify { describe },
                _ => Step::Final(ask(
                    mode_reason(format!(
                        "{} is outside the project; writes there are always asked about",
                        resolved.display()
                    )),
                    format!(
                        "Riot wants to write {}, outside the project {}",
                        resolved.display(),
                        self.project.display()
                    ),
                )),
            },
            // A git command that changes the repository is not the
            // sandbox's to allow: `.git` is read-only to what Riot allows
            // on its own, because a rewind cannot undo a lost commit,
            // branch or stash. It is asked, as without a sandbox.
            Facts::Bash(analysis)
                if self.sandbox.is_some()
                    && matches!(mode, PermissionMode::Default | PermissionMode::AcceptEdits)
                    && let Some(sub) = analysis.subcommands.iter().find(|s| s.changes_git()) =>
            {
                let why = format!(
                    "`{}` changes the git repository, which a rewind cannot undo",
                    sub.text
                );
                Step::Final(ask(
                    DecisionReason::Unverifiable {
                        detail: why.clone(),
                    },
                    format!("Riot wants to {describe}: {why}"),
                ))
            }
            Facts::Bash(analysis)
                if self.sandbox.is_some()
                    && mode == PermissionMode::Auto
                    && analysis.subcommands.iter().any(|s| s.changes_git()) =>
            {
                Step::Classify { describe }
            }
            // Only Bash's commands are allowed unasked: a terminal's
            // program runs in the sandbox too, but a write may type into
            // a terminal opened outside it, which is not known here.
            Facts::Bash(_)
                if self.sandbox.is_some()
                    && q.tool_name == "Bash"
                    && matches!(
                        mode,
                        PermissionMode::Default
                            | PermissionMode::AcceptEdits
                            | PermissionMode::Auto
                    ) =>
            {
                Step::Final(allow(DecisionReason::Sandbox {
                    detail: format!(
                        "the command runs in the OS sandbox ({}): it can write only inside the project and the sandbox's writable paths",
                        self.sandbox.as_deref().unwrap_or_default()
                    ),
                }))
            }
            Facts::Bash(analysis) => match mode {
                PermissionMode::Auto => Step::Classify { describe },
                _ => Step::Final(ask(
                    DecisionReason::Unverifiable {
                        detail: analysis.not_read_only_reason(),
                    },
                    format!(
                        "Riot wants to {describe}: {}",
                        analysis.not_read_only_reason()
                    ),
                )),
            },
            Facts::Url(_) | Facts::Opaque => match mode {
                PermissionMode::Auto => Step::Classify { describe },
                _ => Step::Final(ask(
                    mode_reason(format!("{mode} mode asks before {} runs", q.tool_name)),
                    format!("Riot wants to {describe}"),
                )),
            },
        }
    }

    pub(super) async fn classify(&self, q: &PermissionQuery, describe: String) -> PermissionResult {
        let unavailable = |why: String| {
            ask(
                DecisionReason::Classifier {
                    detail: why.clone(),
                },
                format!("Riot wants to {describe}. {why}"),
            )
        };
        let Some(classifier) = &self.classifier else {
            return unavailable(
                "No auto-mode classifier is available, so a person must answer.".into(),
            );
        };
        let Some(input) = &q.classifier_input else {
            return unavailable(format!(
                "{} gives the classifier nothing to judge, so a person must answer.",
                q.tool_name
            ));
        };
        let in_a_row = self.denials_in_a_row.load(Ordering::SeqCst);
        let total = self.denials_total.load(Ordering::SeqCst);
        if in_a_row >= MAX_DENIALS_IN_A_ROW || total >= MAX_DENIALS_PER_SESSION {
            return unavailable(format!(
                "Auto mode is paused after {in_a_row} classifier denials in a row ({total} this session), so a person must answer."
            ));
        }
        let request = ClassifierRequest {
            tool_name: q.tool_name.clone(),
            input: input.clone(),
        };
        match classifier.classify(&request).await {
            Ok(ClassifierVerdict::Allow { reason }) => {
                self.denials_in_a_row.store(0, Ordering::SeqCst);
                allow(DecisionReason::Classifier { detail: reason })
            }
            Ok(ClassifierVerdict::Deny { reason }) => {
                self.denials_in_a_row.fetch_add(1, Ordering::SeqCst);
                self.denials_total.fetch_add(1, Ordering::SeqCst);
                deny(
                    DecisionReason::Classifier {
                        detail: reason.clone(),
                    },
                    format!("The auto-mode classifier denied this call: {reason}"),
                )
            }
            Err(ClassifierUnavailable(why)) => unavailable(format!(
                "The classifier could not answer ({why}), so a person must."
            )),
        }
    }
}
