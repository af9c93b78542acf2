//! BashOutput: new output of a background command.

use async_trait::async_trait;
use riot_protocol::{ProcessError, PromptContext, Tool, ToolContext, ToolOutcome, UiPayload};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::tools::schema_of;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashOutputInput {
    /// The id Bash returned for a `run_in_background` command.
    pub bash_id: String,
}

/// The BashOutput tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct BashOutput;

#[async_trait]
impl Tool for BashOutput {
    type Input = BashOutputInput;

    fn name(&self) -> &str {
        "BashOutput"
    }

    fn input_schema(&self) -> Value {
        schema_of::<BashOutputInput>()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Reads the output a background command (started by Bash with run_in_background) produced since the last BashOutput call, and whether it is still running or with which exit code it ended.\n\n\
         - Each call returns only NEW output; output already returned is not repeated.\n\
         - Unread output beyond 1 MiB per stream is dropped, oldest first, and the result says how much.\n\
         - This only reads; it never starts or stops anything (KillShell stops a job).\n\n\
         NEVER:\n\
         - poll in a tight loop; do other work between reads.\n\
         - pass an id that Bash did not return.\n"
            .to_owned()
    }

    fn describe(&self, input: &BashOutputInput) -> String {
        format!("Output of {}", input.bash_id)
    }

    fn is_read_only(&self, _input: &BashOutputInput) -> bool {
        // Reads buffered output of a job this session started; runs nothing.
        true
    }

    fn is_concurrency_safe(&self, _input: &BashOutputInput) -> bool {
        true
    }

    fn classifier_input(&self, input: &BashOutputInput) -> Option<String> {
        Some(self.describe(input))
    }

    async fn call(&self, input: BashOutputInput, ctx: &ToolContext) -> ToolOutcome {
        let out = match ctx.env.proc.read_background(&input.bash_id).await {
            Ok(out) => out,
            Err(ProcessError::UnknownJob(id)) => {
                return ToolOutcome::failed(format!(
                    "There is no background command with id `{id}`. Use the id Bash returned when it started the command."
                ));
            }
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "Could not read the background command's output: {e}."
                ));
            }
        };
        let mut parts = Vec::new();
        parts.push(match (out.running, out.exit_code) {
            (true, _) => "Status: running".to_owned(),
            (false, Some(code)) => format!("Status: finished, exit code {code}"),
            (false, None) => "Status: stopped (killed by a signal)".to_owned(),
        });
        if out.dropped_bytes > 0 {
            parts.push(format!(
                "[{} bytes of older output were dropped because they were not read in time]",
                out.dropped_bytes
            ));
        }
        if !out.stdout.is_empty() {
            parts.push(out.stdout.trim_end_matches('\n').to_owned());
        }
        if !out.stderr.is_empty() {
            parts.push(format!("[stderr]\n{}", out.stderr.trim_end_matches('\n')));
        }
        if out.stdout.is_empty() && out.stderr.is_empty() {
            parts.push("(no new output)".to_owned());
        }
        ToolOutcome::text(
            parts.join("\n"),
            Some(UiPayload::Command {
                command: input.bash_id.clone(),
                exit_code: out.exit_code,
                stdout: out.stdout,
                stderr: out.stderr,
                truncated: out.dropped_bytes > 0,
                timed_out: false,
                background_id: Some(input.bash_id),
            }),
        )
    }
}
