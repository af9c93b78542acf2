//! Plan mode's exit (docs/design.md §9.1; docs/interfaces.md: ExitPlanMode) and the
//! session's mode cell.
//!
//! In plan mode only read-only tools run. When the plan is ready the model
//! calls `ExitPlanMode` with it; the person approves and picks the mode to
//! continue in, or asks for more planning. An approval takes effect in the
//! same turn: the session's tool runner (`crate::runner`) reads the mode
//! from a cell the tool sets, not from the mode the turn started with.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_protocol::{
    PermissionGate, PermissionMode, PromptContext, Question, QuestionOption, QuestionOutcome,
    QuestionRequest, Tool, ToolContext, ToolOutcome, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The session's permission mode, shared by the session, its tool runner
/// and `ExitPlanMode`.
#[derive(Debug, Clone)]
pub struct ModeCell(Arc<Mutex<PermissionMode>>);

impl ModeCell {
    /// A cell holding `mode`.
    pub fn new(mode: PermissionMode) -> Self {
        Self(Arc::new(Mutex::new(mode)))
    }

    /// The mode now.
    pub fn get(&self) -> PermissionMode {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Switches the mode for the next batch of tool calls.
    pub fn set(&self, mode: PermissionMode) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = mode;
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitPlanModeInput {
    /// The plan, in Markdown: the steps, the files they touch, how the
    /// result will be checked.
    pub plan: String,
}

/// The choices offered with a plan, and the mode each continues in.
pub const PLAN_CHOICES: [(&str, Option<PermissionMode>); 3] = [
    ("Yes, and accept edits", Some(PermissionMode::AcceptEdits)),
    ("Yes, and ask before edits", Some(PermissionMode::Default)),
    ("No, keep planning", None),
];

/// The ExitPlanMode tool.
#[derive(Debug, Clone)]
pub struct ExitPlanMode {
    pub gate: Arc<dyn PermissionGate>,
    pub mode: ModeCell,
}

#[async_trait]
impl Tool for ExitPlanMode {
    type Input = ExitPlanModeInput;

    fn name(&self) -> &str {
        "ExitPlanMode"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(ExitPlanModeInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Presents your plan to the person when you are in plan mode and ready to start. The person approves it and chooses how you continue (accepting edits, or asking before each), or asks you to keep planning.\n\n\
Call it once the plan is concrete: the steps in order, the files each touches, and how you will check the result. After an approval, carry out the plan in the same turn.\n\n\
How it differs from the other tools: it changes nothing in the project; it asks for approval to start changing it.\n\n\
NEVER:\n- call it outside plan mode, or for a research task with nothing to change;\n- start editing before the plan is approved;\n- call it again with the same plan after the person asked for changes — revise the plan first.".to_owned()
    }

    fn describe(&self, _input: &ExitPlanModeInput) -> String {
        "Present the plan for approval".to_owned()
    }

    /// Allowed in plan mode: it changes nothing until the person approves.
    fn is_read_only(&self, _input: &ExitPlanModeInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &ExitPlanModeInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.plan.trim().is_empty() {
            return Err(ValidationError::rejected(
                "The plan is empty. Write the steps, the files they touch and how you will check the result.",
            ));
        }
        if ctx.mode != PermissionMode::Plan {
            return Err(ValidationError::rejected(format!(
                "You are not in plan mode (the mode is {}): there is nothing to exit. Go on with the task.",
                ctx.mode
            )));
        }
        Ok(())
    }

    async fn call(&self, input: ExitPlanModeInput, ctx: &ToolContext) -> ToolOutcome {
        let request = QuestionRequest {
            tool_use_id: ctx.tool_use_id.clone(),
            tool_name: "ExitPlanMode".into(),
            context: Some(input.plan.trim().to_owned()),
            questions: vec![Question {
                question: "Start on this plan?".into(),
                header: Some("Plan".into()),
                options: PLAN_CHOICES
                    .iter()
                    .map(|(label, _)| QuestionOption {
                        label: (*label).to_owned(),
                        description: None,
                    })
                    .collect(),
                multi_select: false,
            }],
        };
        let Some(outcome) = crate::ask::ask_or_cancel(self.gate.as_ref(), request, ctx).await
        else {
            return ToolOutcome::Cancelled;
        };
        let chosen = match &outcome {
            QuestionOutcome::Answered(answers) => answers
                .first()
                .and_then(|a| a.first())
                .and_then(|label| PLAN_CHOICES.iter().find(|(l, _)| l == label)),
            _ => None,
        };
        match (outcome, chosen) {
            (_, Some((_, Some(mode)))) => {
                self.mode.set(*mode);
                ToolOutcome::text(
                    format!(
                        "The person approved the plan. The permission mode is now {mode}. Carry out the plan now, step by step."
                    ),
                    None,
                )
            }
            (QuestionOutcome::NoOneToAsk, _) => ToolOutcome::failed(
                "No one can approve a plan in this session. Stay in plan mode: end your turn with the plan as your answer.",
            ),
            _ => ToolOutcome::text(
                "The person wants to keep planning. You are still in plan mode: ask what to change, or refine the plan and present it again.",
                None,
            ),
        }
    }
}
