//! KillShell: stop a background command and everything it started.

use async_trait::async_trait;
use riot_protocol::{ProcessError, PromptContext, Tool, ToolContext, ToolOutcome};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::tools::schema_of;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillShellInput {
    /// The id Bash returned for a `run_in_background` command.
    pub shell_id: String,
}

/// The KillShell tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct KillShell;

#[async_trait]
impl Tool for KillShell {
    type Input = KillShellInput;

    fn name(&self) -> &str {
        "KillShell"
    }

    fn input_schema(&self) -> Value {
        schema_of::<KillShellInput>()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Stops a background command started by Bash with run_in_background, together with every process it started (its whole process group).\n\n\
         - Output produced before it stopped can still be read once with BashOutput.\n\
         - Stopping a command that already ended is harmless.\n\n\
         NEVER:\n\
         - use Bash `kill` or `pkill` on background commands; use KillShell with the id.\n\
         - stop a job the person started or asked you to keep running.\n"
            .to_owned()
    }

    fn describe(&self, input: &KillShellInput) -> String {
        format!("Stop {}", input.shell_id)
    }

    fn classifier_input(&self, input: &KillShellInput) -> Option<String> {
        Some(self.describe(input))
    }

    async fn call(&self, input: KillShellInput, ctx: &ToolContext) -> ToolOutcome {
        match ctx.env.proc.kill_background(&input.shell_id).await {
            Ok(()) => ToolOutcome::text(
                format!("Stopped background command {}.", input.shell_id),
                None,
            ),
            Err(ProcessError::UnknownJob(id)) => ToolOutcome::failed(format!(
                "There is no background command with id `{id}`. Use the id Bash returned when it started the command."
            )),
            Err(e) => ToolOutcome::failed(format!("Could not stop {}: {e}.", input.shell_id)),
        }
    }
}
