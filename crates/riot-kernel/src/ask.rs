//! AskUser (docs/interfaces.md; docs/design.md §6.7): the model asks the person
//! structured questions instead of guessing. The face's gate shows them
//! (ACP: a question the editor renders as choices); where nobody can answer
//! (`riot exec`), the model is told to proceed on its own judgement.

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{
    PermissionGate, PromptContext, Question, QuestionOption, QuestionOutcome, QuestionRequest,
    Tool, ToolContext, ToolOutcome, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Questions per call.
pub const MAX_QUESTIONS: usize = 4;
/// Choices per question.
pub const MAX_OPTIONS: usize = 6;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserInput {
    /// One to four questions, asked together.
    pub questions: Vec<QuestionInput>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionInput {
    /// The full question, ending with a question mark.
    pub question: String,
    /// A very short label (at most 12 characters), e.g. "Database".
    #[serde(default)]
    pub header: Option<String>,
    /// Two to six choices; leave out for a free-text answer.
    #[serde(default)]
    pub options: Option<Vec<OptionInput>>,
    /// Whether several choices may be picked.
    #[serde(default, rename = "multiSelect")]
    pub multi_select: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionInput {
    /// The choice as the person reads it (one to five words).
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// The AskUser tool, asking through the session's gate.
#[derive(Debug, Clone)]
pub struct AskUser {
    pub gate: Arc<dyn PermissionGate>,
}

/// What the model is told when nobody can answer.
pub const NO_ONE_TO_ASK: &str = "No one can answer questions in this session: it runs without a person watching. Do not ask again. Proceed on your own judgement, choosing the safest reasonable option, and state the assumptions you made in your answer.";

#[async_trait]
impl Tool for AskUser {
    type Input = AskUserInput;

    fn name(&self) -> &str {
        "AskUser"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(AskUserInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Asks the person one to four questions and waits for the answers. Use it when a decision is theirs to make and you cannot find the answer yourself: ambiguous requirements, a choice between designs with real trade-offs, a preference about naming or scope.\n\n\
Give each question two to six short `options` when the likely answers are known (the person can still refuse to answer); leave `options` out for a free-text answer. Put the option you recommend first and say why in its description.\n\n\
How it differs from the other tools: it reaches the person, not the project. The answer may be that nobody can answer; then continue on your own judgement.\n\n\
NEVER:\n- ask what you can find out by reading the code, running a command or searching;\n- ask for permission to use a tool — permission is asked for you when needed;\n- ask the same question twice, or ask again after being told nobody can answer.".to_owned()
    }

    fn describe(&self, input: &AskUserInput) -> String {
        match input.questions.as_slice() {
            [one] => format!("Ask: {}", one.question),
            many => format!("Ask {} questions", many.len()),
        }
    }

    /// Nothing in the project changes; only the person is asked.
    fn is_read_only(&self, _input: &AskUserInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &AskUserInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        let n = input.questions.len();
        if n == 0 || n > MAX_QUESTIONS {
            return Err(ValidationError::rejected(format!(
                "Ask one to {MAX_QUESTIONS} questions per call (got {n})."
            )));
        }
        for (i, q) in input.questions.iter().enumerate() {
            if q.question.trim().is_empty() {
                return Err(ValidationError::rejected(format!(
                    "Question {} is empty; write the full question.",
                    i + 1
                )));
            }
            if let Some(options) = &q.options {
                if options.len() < 2 || options.len() > MAX_OPTIONS {
                    return Err(ValidationError::rejected(format!(
                        "Question {} has {} options; give two to {MAX_OPTIONS}, or none for a free-text answer.",
                        i + 1,
                        options.len()
                    )));
                }
                let mut labels: Vec<&str> = options.iter().map(|o| o.label.trim()).collect();
                if labels.iter().any(|l| l.is_empty()) {
                    return Err(ValidationError::rejected(format!(
                        "Question {} has an option with an empty label.",
                        i + 1
                    )));
                }
                labels.sort_unstable();
                labels.dedup();
                if labels.len() != options.len() {
                    return Err(ValidationError::rejected(format!(
                        "Question {} has two options with the same label; make each label distinct.",
                        i + 1
                    )));
                }
            } else if q.multi_select {
                return Err(ValidationError::rejected(format!(
                    "Question {} sets `multiSelect` without options.",
                    i + 1
                )));
            }
        }
        Ok(())
    }

    async fn call(&self, input: AskUserInput, ctx: &ToolContext) -> ToolOutcome {
        let request = QuestionRequest {
            tool_use_id: ctx.tool_use_id.clone(),
            tool_name: "AskUser".into(),
            context: None,
            questions: input
                .questions
                .iter()
                .map(|q| Question {
                    question: q.question.trim().to_owned(),
                    header: q.header.clone().filter(|h| !h.trim().is_empty()),
                    options: q
                        .options
                        .iter()
                        .flatten()
                        .map(|o| QuestionOption {
                            label: o.label.trim().to_owned(),
                            description: o.description.clone(),
                        })
                        .collect(),
                    multi_select: q.multi_select,
                })
                .collect(),
        };
        let Some(outcome) = ask_or_cancel(self.gate.as_ref(), request, ctx).await else {
            return ToolOutcome::Cancelled;
        };
        match outcome {
            QuestionOutcome::NoOneToAsk => ToolOutcome::text(NO_ONE_TO_ASK, None),
            QuestionOutcome::Declined => ToolOutcome::text(
                "The person chose not to answer. Do not ask again; continue with what you know, or end your turn and say what you need.",
                None,
            ),
            QuestionOutcome::Answered(answers) if answers.iter().all(Vec::is_empty) => {
                ToolOutcome::text(
                    "None of the questions was answered: the person's editor shows only multiple-choice questions. Ask again with `options`, or go on with what you know.",
                    None,
                )
            }
            QuestionOutcome::Answered(answers) => {
                let mut text = String::from("The person answered:\n");
                for (q, answer) in input
                    .questions
                    .iter()
                    .zip(answers.iter().chain(std::iter::repeat(&Vec::new())))
                {
                    let said = if answer.is_empty() {
                        "(no answer)".to_owned()
                    } else {
                        answer.join(", ")
                    };
                    text.push_str(&format!("- {} → {said}\n", q.question.trim()));
                }
                ToolOutcome::text(text.trim_end(), None)
            }
        }
    }
}

/// Asks through `gate` unless the call is cancelled first (`None`).
pub(crate) async fn ask_or_cancel(
    gate: &dyn PermissionGate,
    request: QuestionRequest,
    ctx: &ToolContext,
) -> Option<QuestionOutcome> {
    let asked = std::pin::pin!(gate.ask_user(request));
    let cancelled = std::pin::pin!(ctx.cancel.cancelled());
    match futures::future::select(asked, cancelled).await {
        futures::future::Either::Left((outcome, _)) => Some(outcome),
        futures::future::Either::Right(_) => None,
    }
}
