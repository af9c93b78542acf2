//! Bash: one fresh non-interactive `bash -c` per call (docs/design.md §6.6).

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::process::OutputCallback;
use riot_protocol::{
    AllowedBy, CaptureLimit, CapturedOutput, DecisionReason, PermissionResult, PermissionTarget,
    ProcessOutput, ProcessSpec, ProgressPayload, PromptContext, Tool, ToolContext, ToolOutcome,
    UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::tools::schema_of;

/// Default timeout: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Longest timeout a call may ask for: 10 minutes.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Output kept per stream: head and tail (errors are at the end). Over the
/// result budget, the scheduler spills it to a file with a preview.
pub const CAPTURE: CaptureLimit = CaptureLimit {
    head_bytes: 512 * 1024,
    tail_bytes: 512 * 1024,
};

/// The non-interactive environment every command gets (docs/design.md §6.6).
/// Deliberately not `CI=1`: that changes what many tools do.
pub const NON_INTERACTIVE_ENV: [(&str, &str); 7] = [
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("NO_COLOR", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command line, run by `bash -c` in the project directory.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Five to ten words saying what the command does, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Start the command in the background and return at once.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// Run this command outside the OS sandbox. Only when it cannot work
    /// inside (it needs the network or to write outside the project); say
    /// why in `description`. The person is always asked.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

impl BashInput {
    /// Whether the call asks to leave the OS sandbox.
    pub fn leaves_sandbox(&self) -> bool {
        self.dangerously_disable_sandbox.unwrap_or(false)
    }
}

/// The runner for `input`: outside the sandbox only for a call that asked
/// to leave it (and was allowed: the permission chain always asks).
pub(crate) fn runner_for<'a>(
    input: &BashInput,
    ctx: &'a ToolContext,
) -> &'a std::sync::Arc<dyn riot_protocol::ProcessRunner> {
    match &ctx.env.unsandboxed_proc {
        Some(outside) if input.leaves_sandbox() => outside,
        _ => &ctx.env.proc,
    }
}

/// The Bash tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Bash;

/// The process to run for `input` in `ctx`.
pub(crate) fn spec_for(
    input: &BashInput,
    ctx: &ToolContext,
    timeout_ms: Option<u64>,
) -> ProcessSpec {
    ProcessSpec {
        // Never -l or -i: rc files make behaviour machine-specific.
        program: "bash".into(),
        args: vec!["-c".into(), input.command.clone()],
        cwd: ctx.env.cwd.clone(),
        env_set: NON_INTERACTIVE_ENV
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        env_remove: ctx.env.scrubbed_env.clone(),
        timeout_ms,
        capture: CAPTURE,
        stdin: None,
        undoable_only: ctx.allowed_by == AllowedBy::Riot,
    }
}

fn stream_text(out: &CapturedOutput) -> String {
    // A beginning cut before Riot saw the output is said in `head`.
    if out.omitted_bytes > 0 {
        format!(
            "{}\n[… {} bytes omitted from the middle: {} bytes in total, the first {} and the last {} are shown …]\n{}",
            out.head,
            out.omitted_bytes,
            out.total_bytes,
            out.head.len(),
            out.tail.len(),
            out.tail
        )
    } else {
        format!("{}{}", out.head, out.tail)
    }
}

/// What the model reads for a finished command.
pub(crate) fn model_text(out: &ProcessOutput, timeout_ms: u64) -> String {
    let mut parts = Vec::new();
    let stdout = stream_text(&out.stdout);
    let stderr = stream_text(&out.stderr);
    if !stdout.is_empty() {
        parts.push(stdout.trim_end_matches('\n').to_owned());
    }
    if !stderr.is_empty() {
        parts.push(format!("[stderr]\n{}", stderr.trim_end_matches('\n')));
    }
    if out.timed_out {
        parts.push(format!(
            "The command timed out after {timeout_ms} ms and was stopped (with everything it started); the output above is what it produced until then. Run long commands with a larger `timeout` (at most {MAX_TIMEOUT_MS}) or with run_in_background."
        ));
    } else if let Some(code) = out.exit_code.filter(|c| *c != 0) {
        // Neutral: grep's 1 means "no match", not a failure.
        parts.push(format!("Exit code {code}"));
    } else if let Some(signal) = out.signal {
        parts.push(format!("The command was ended by signal {signal}."));
    }
    parts.join("\n")
}

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Runs `command` with bash -c in the project directory; returns output and exit code. Each call is a fresh non-interactive shell (cd does not carry over; chain with &&), stdin is empty. `timeout` in ms (default 120000, at most 600000). `run_in_background: true` starts a server or watcher and returns its id. In the sandbox a command can write only in the project and $TMPDIR, without network; if it truly needs more, retry with `dangerouslyDisableSandbox: true` and say why in `description`.\nNEVER run interactive programs or destructive commands (rm -rf, git reset --hard, git push --force) the person did not ask for; NEVER read, search or edit files with cat, grep or sed: use the file tools.";

#[async_trait]
impl Tool for Bash {
    type Input = BashInput;

    fn name(&self) -> &str {
        "Bash"
    }

    fn input_schema(&self) -> Value {
        schema_of::<BashInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Runs a shell command with `bash -c` in the project directory and returns its output and exit code.\n\n\
             - Every call is a fresh, non-interactive shell: `cd`, variables and aliases do NOT carry over to the next call. Chain dependent steps in one command with `&&`, or use absolute paths.\n\
             - stdin is empty; editors and pagers are disabled (EDITOR=true, PAGER=cat, GIT_TERMINAL_PROMPT=0), so commands that wait for input fail instead of hanging.\n\
             - Timeout: `timeout` in ms, default 120000 (2 minutes), at most 600000 (10 minutes). On timeout the command and everything it started are stopped and the output so far is returned.\n\
             - Long output keeps its beginning and its end (errors are usually at the end) and says how much was cut; very long results are saved to a file whose path you get.\n\
             - A non-zero exit code is reported as `Exit code N`; it is not always a failure (grep exits 1 when nothing matched).\n\
             - `run_in_background: true` starts a long-running command (a server, a watcher) and returns its id at once",
        );
        if cx.has_tool("BashOutput") {
            p.push_str("; read its output with BashOutput");
        }
        if cx.has_tool("KillShell") {
            p.push_str(" and stop it with KillShell");
        }
        p.push_str(".\n- Commands may run in an OS sandbox: they can write only inside the project and a private temporary directory ($TMPDIR), and have no network unless the person enabled it. When a command fails because of the sandbox (\"Read-only file system\", \"Operation not permitted\", a refused connection) and it really needs more, run it again with `dangerouslyDisableSandbox: true` and the reason in `description`; the person is asked.");
        p.push_str("\n- Quote paths with spaces (\"my dir/file\"). Give a short `description` of what the command does.\n");
        let mut never = String::from(
            "\nNEVER:\n- run interactive programs (vim, less, git rebase -i, a REPL); they cannot get input.\n- use `sleep` loops to wait for a background job; read its output instead.\n",
        );
        if cx.has_tool("Read") {
            never.push_str("- use cat, head or tail to read files; use Read.\n");
        }
        if cx.has_tool("Edit") {
            never.push_str(
                "- edit files with sed -i, awk or echo redirection; use Edit or Write.\n",
            );
        }
        if cx.has_tool("Grep") {
            never.push_str("- search with grep, rg or find; use Grep and Glob.\n");
        }
        never.push_str("- run destructive commands (rm -rf, git push --force, git reset --hard) unless the person asked for exactly that.\n");
        p.push_str(&never);
        p
    }

    fn describe(&self, input: &BashInput) -> String {
        match &input.description {
            Some(d) if !d.trim().is_empty() => {
                format!("{} ({})", d.trim(), first_line(&input.command))
            }
            _ => first_line(&input.command),
        }
    }

    // is_read_only stays false until the permissions issue's command
    // analysis lands: fail closed (and so never concurrency-safe).

    fn cascades_on_failure(&self) -> bool {
        true
    }

    /// Read-only exactly when the permission layer's command analysis says
    /// so (docs/design.md §6.6, §9.3): the same judgement in both places.
    fn is_read_only(&self, input: &BashInput) -> bool {
        riot_permissions::analyze_command(&input.command).is_read_only()
    }

    /// Concurrency-safe exactly when read-only.
    fn is_concurrency_safe(&self, input: &BashInput) -> bool {
        self.is_read_only(input)
    }

    /// Leaving the OS sandbox is always a question, whatever the mode
    /// (the reason `sandbox` does not yield to bypass), and the person
    /// sees why.
    async fn check_permissions(&self, input: &BashInput, _ctx: &ToolContext) -> PermissionResult {
        if !input.leaves_sandbox() {
            return PermissionResult::Passthrough;
        }
        let why = input
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .unwrap_or("no reason given");
        PermissionResult::Ask {
            reason: DecisionReason::Sandbox {
                detail: format!("asks to run outside the OS sandbox: {why}"),
            },
            message: format!(
                "Riot wants to run `{}` OUTSIDE the OS sandbox (dangerouslyDisableSandbox), with full access to your files and the network. Its reason: {why}",
                input.command.trim()
            ),
        }
    }

    fn classifier_input(&self, input: &BashInput) -> Option<String> {
        Some(format!("Bash: {}", input.command))
    }

    fn permission_target(&self, input: &BashInput, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Command {
            command: input.command.clone(),
        }
    }

    async fn validate_input(
        &self,
        input: &BashInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.command.trim().is_empty() {
            return Err(ValidationError::rejected(
                "`command` must not be empty. Give the shell command to run.",
            ));
        }
        match input.timeout {
            Some(0) => Err(ValidationError::rejected(format!(
                "`timeout` must be at least 1 ms; omit it for the default of {DEFAULT_TIMEOUT_MS} ms."
            ))),
            Some(t) if t > MAX_TIMEOUT_MS => Err(ValidationError::rejected(format!(
                "`timeout` {t} ms is over the maximum of {MAX_TIMEOUT_MS} ms (10 minutes). Use at most {MAX_TIMEOUT_MS}, or run_in_background for longer jobs."
            ))),
            _ => Ok(()),
        }
    }

    async fn call(&self, input: BashInput, ctx: &ToolContext) -> ToolOutcome {
        if input.run_in_background.unwrap_or(false) {
            return start_background(&input, ctx).await;
        }
        let timeout_ms = input
            .timeout
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .min(MAX_TIMEOUT_MS);
        let spec = spec_for(&input, ctx, Some(timeout_ms));
        let progress_ctx = ctx.clone();
        let on_output: OutputCallback = Arc::new(move |stream, bytes| {
            progress_ctx.report(ProgressPayload::Output {
                stream,
                text: String::from_utf8_lossy(bytes).into_owned(),
            });
        });
        let runner = runner_for(&input, ctx);
        // In the editor's terminal when it offers one: the command as the
        // runner would start it (inside the sandbox), the result the same.
        let ran = match &ctx.env.command_host {
            Some(host) => {
                host.run(
                    ctx.tool_use_id.as_str(),
                    runner.prepare(spec),
                    ctx.cancel.clone(),
                )
                .await
            }
            None => runner.run(spec, ctx.cancel.clone(), Some(on_output)).await,
        };
        let out = match ran {
            Ok(out) => out,
            Err(e @ riot_protocol::ProcessError::ResultLost(_)) => {
                // It started: saying it could not start would invite a
                // second run of something that may have run.
                return ToolOutcome::failed(format!(
                    "The command was started in the editor's terminal, but its result could not be read ({e}); it may have run. Check its effects before running it again."
                ));
            }
            Err(e) => {
                return ToolOutcome::failed(format!("The command could not be started: {e}."));
            }
        };
        if out.cancelled {
            return ToolOutcome::Cancelled;
        }
        let mut text = model_text(&out, timeout_ms);
        if let Some(note) = read_only_git_note(&out, ctx, &input) {
            text.push_str(note);
        }
        let ui = UiPayload::Command {
            command: input.command.clone(),
            exit_code: out.exit_code,
            stdout: stream_text(&out.stdout),
            stderr: stream_text(&out.stderr),
            truncated: out.stdout.truncated() || out.stderr.truncated(),
            timed_out: out.timed_out,
            background_id: None,
        };
        // A non-zero exit is reported neutrally but is still an error result,
        // so a failing command cascades to its batch (docs/design.md §7).
        if out.exit_code == Some(0) && !out.timed_out {
            ToolOutcome::text(text, Some(ui))
        } else {
            ToolOutcome::Failed {
                error_for_model: text,
                ui_payload: Some(ui),
            }
        }
    }
}

/// What the model reads after a command Riot allowed unasked failed on
/// the sandbox's read-only `.git`: why, and how to get the change made.
const READ_ONLY_GIT: &str = "\n\nNote: the project's .git is read-only to commands Riot runs without asking the person (so that a rewind can undo everything they do). To change the repository, run the git command (git commit, git reset, …) on its own, so the person is asked to approve it.";

/// [`READ_ONLY_GIT`] when `out` is a failure of an unasked sandboxed
/// command that met a read-only file system, and git is in the picture
/// (the output names `.git`, or the command names git).
fn read_only_git_note(
    out: &ProcessOutput,
    ctx: &ToolContext,
    input: &BashInput,
) -> Option<&'static str> {
    let sandboxed = ctx.env.unsandboxed_proc.is_some() && !input.leaves_sandbox();
    let failed = out.exit_code != Some(0);
    let text = format!("{}{}", stream_text(&out.stderr), stream_text(&out.stdout));
    (sandboxed
        && failed
        && ctx.allowed_by == AllowedBy::Riot
        && text.contains("Read-only file system")
        && (text.contains(".git") || input.command.contains("git")))
    .then_some(READ_ONLY_GIT)
}

async fn start_background(input: &BashInput, ctx: &ToolContext) -> ToolOutcome {
    // A background job runs until it ends or is killed; `timeout` still
    // bounds it when given.
    let spec = spec_for(input, ctx, input.timeout);
    match runner_for(input, ctx).spawn_background(spec).await {
        Ok(id) => ToolOutcome::text(
            format!(
                "Started in the background with id {id}. Read its new output with BashOutput (bash_id: \"{id}\"); stop it with KillShell (shell_id: \"{id}\")."
            ),
            Some(UiPayload::Command {
                command: input.command.clone(),
                exit_code: None,
                stdout: String::new(),
                stderr: String::new(),
                truncated: false,
                timed_out: false,
                background_id: Some(id),
            }),
        ),
        Err(e) => ToolOutcome::failed(format!("The background command could not be started: {e}.")),
    }
}

fn first_line(command: &str) -> String {
    let line = command.lines().next().unwrap_or("");
    let short: String = line.chars().take(80).collect();
    if short.len() < command.trim_end().len() {
        format!("{short}…")
    } else {
        short
    }
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
