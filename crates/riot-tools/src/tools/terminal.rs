//! Terminal: long-lived programs in named pseudo-terminals the person sees
//! too (docs/terminals.md). Everything goes through the session's
//! [`riot_protocol::Terminals`]; the tool is declared only when that
//! capability is present ([`crate::declared`]).
//!
//! `open` is judged like Bash (the command, through the same shell
//! analysis); so is `write` — the typed text as command lines — while the
//! terminal runs a shell in its foreground; typed into another program (a
//! Python REPL) it is not shell text, and the mode decides. `read` and
//! `wait` only look. The program runs in the session's OS sandbox when it
//! is enforced; `open` with `dangerouslyDisableSandbox` starts it outside,
//! and, as for Bash, the person is always asked — and asked again for
//! every `write` to such a terminal.

use async_trait::async_trait;
use riot_protocol::{
    DecisionReason, PermissionResult, PermissionTarget, PromptContext, TerminalError, TerminalSize,
    TerminalSpec, TerminalView, Tool, ToolContext, ToolOutcome, Typist, ValidationError, WaitEnd,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::tools::schema_of;

mod keys;
mod shell;

pub use keys::{encode_keys, typed_as_command};
use shell::types_into_a_shell;

/// Default time a `wait` waits: 30 seconds.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// Longest `wait`: 10 minutes, as Bash.
pub const MAX_WAIT_MS: u64 = 600_000;
/// A write waits at most this long for the program to answer before
/// showing the screen.
pub const WRITE_SETTLE_MS: u64 = 2_000;
/// Open terminals per session.
pub const MAX_TERMINALS: usize = 8;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerminalAction {
    /// Start `command` in a new terminal called `name`.
    Open,
    /// Type `input` into it.
    Write,
    /// The screen and the output since the last read.
    Read,
    /// Wait until `pattern` appears in the output (or `timeout_ms` passes).
    Wait,
    /// Stop the program and everything it started.
    Close,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerminalInput {
    pub action: TerminalAction,
    /// The terminal's name: letters, digits, `-`, `_` (e.g. "dev-server").
    pub name: String,
    /// open: the command line, run by `bash -c` in the project directory.
    #[serde(default)]
    pub command: Option<String>,
    /// write: the text to type. Keys: `<Enter>`, `<Tab>`, `<Esc>`,
    /// `<Backspace>`, `<Up>`, `<Down>`, `<Left>`, `<Right>`, `<C-c>` (Ctrl + a
    /// letter), `<lt>` for a literal "<"; raw control characters such as
    /// "\u0003" work too.
    #[serde(default)]
    pub input: Option<String>,
    /// wait: a regular expression matched against the output not yet read
    /// (the screen, for a full-screen program); `^` and `$` match at lines.
    #[serde(default)]
    pub pattern: Option<String>,
    /// wait: milliseconds (default 30000, at most 600000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// open: run the program outside the OS sandbox. Only when it cannot
    /// work inside (it needs the network or to write outside the project);
    /// the person is always asked.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

impl TerminalInput {
    /// Whether the call asks to start its program outside the OS sandbox.
    pub fn leaves_sandbox(&self) -> bool {
        self.action == TerminalAction::Open && self.dangerously_disable_sandbox.unwrap_or(false)
    }
}

/// The Terminal tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Terminal;

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What the model reads of a terminal.
pub fn view_text(view: &TerminalView, heading: &str) -> String {
    let mut out = format!("{heading}\n");
    if !view.person_typed.is_empty() {
        out.push_str(&format!(
            "The person typed into this terminal: {}\n",
            // A face writes key by key: the writes together are what was typed.
            view.person_typed.concat()
        ));
    }
    if view.full_screen {
        out.push_str("A full-screen program is showing; its screen:\n");
    } else if !view.output.trim().is_empty() {
        if view.omitted_bytes > 0 {
            out.push_str(&format!(
                "New output ({} earlier bytes not kept):\n",
                view.omitted_bytes
            ));
        } else {
            out.push_str("New output:\n");
        }
        out.push_str(view.output.trim_end_matches(['\n', '\r']));
        out.push_str("\n\nScreen now:\n");
    } else {
        out.push_str("No new output. Screen now:\n");
    }
    out.push_str("```\n");
    out.push_str(&view.screen);
    out.push_str("\n```\n");
    out.push_str(&format!(
        "Cursor at row {}, column {}.",
        view.cursor.0 + 1,
        view.cursor.1 + 1
    ));
    if let Some(exit) = view.exit {
        match (exit.code, exit.signal) {
            (Some(code), _) => {
                out.push_str(&format!(" The program has ended with exit code {code}."))
            }
            (None, Some(signal)) => {
                out.push_str(&format!(" The program was ended by signal {signal}."));
            }
            (None, None) => out.push_str(" The program has ended."),
        }
    }
    out
}

fn error_outcome(e: &TerminalError) -> ToolOutcome {
    let hint = match e {
        TerminalError::Unknown { .. } => " Open it first with action \"open\".",
        _ => "",
    };
    ToolOutcome::failed(format!("{e}.{hint}").replace("..", "."))
}

#[async_trait]
impl Tool for Terminal {
    type Input = TerminalInput;

    fn name(&self) -> &str {
        "Terminal"
    }

    fn input_schema(&self) -> Value {
        schema_of::<TerminalInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        let mut p = String::from(
            "Runs long-lived and interactive programs — a dev server, a watcher, a REPL, a full-screen tool — in named terminals that the person sees live and can type into.\n\n\
             - action \"open\" with `name` and `command` starts the command with `bash -c` in the project directory and shows its first screen. The name addresses the terminal from then on.\n\
             - action \"write\" types `input`; end a line with <Enter>. Keys: <Enter> <Tab> <Esc> <Backspace> <Up> <Down> <Left> <Right> <Home> <End> <PageUp> <PageDown> <Delete> <Space>, Ctrl+letter as <C-c>, <lt> for a literal \"<\". The screen after the program answered is returned.\n\
             - action \"read\" returns the rendered screen (what a person sees, without escape codes) and the output printed since the last read.\n\
             - action \"wait\" waits until the regular expression `pattern` matches the output not yet read (for a full-screen program, the screen), the program ends, or `timeout_ms` passes (default 30000, at most 600000). Use it for a server's \"ready\" line instead of reading in a loop.\n\
             - action \"close\" stops the program and everything it started. Terminals also end with the session.\n\
             - When the person typed into a terminal, you are told what they typed: by the next read, or with their next message.\n\
             - Programs may run in an OS sandbox, as Bash's commands do: they can write only inside the project and a private temporary directory ($TMPDIR), and have no network unless the person enabled it. When a program fails because of the sandbox and really needs more, open it again with `dangerouslyDisableSandbox: true`; the person is asked.\n",
        );
        if cx.has_tool("Bash") {
            p.push_str("- Use Bash for commands that finish on their own; use a terminal for programs that keep running or need input.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - open a terminal for a command that simply runs and ends (a build, a test run); use Bash.\n\
             - type passwords or secrets into a terminal.\n\
             - leave terminals you no longer need open; close them.\n\
             - close or type into a terminal the person is using for something else without asking.\n",
        );
        p
    }

    fn describe(&self, input: &TerminalInput) -> String {
        let name = &input.name;
        match input.action {
            TerminalAction::Open => format!(
                "Open terminal {name}: {}",
                input.command.as_deref().unwrap_or("")
            ),
            TerminalAction::Write => {
                format!("Type into {name}: {}", input.input.as_deref().unwrap_or(""))
            }
            TerminalAction::Read => format!("Read terminal {name}"),
            TerminalAction::Wait => format!(
                "Wait in {name} for /{}/",
                input.pattern.as_deref().unwrap_or("")
            ),
            TerminalAction::Close => format!("Close terminal {name}"),
        }
    }

    fn cascades_on_failure(&self) -> bool {
        true
    }

    /// `read` and `wait` only look; `open`, `write` and `close` act.
    fn is_read_only(&self, input: &TerminalInput) -> bool {
        matches!(input.action, TerminalAction::Read | TerminalAction::Wait)
    }

    fn classifier_input(&self, input: &TerminalInput) -> Option<String> {
        Some(match input.action {
            TerminalAction::Open => format!(
                "Terminal open `{}`: {}",
                input.name,
                input.command.as_deref().unwrap_or("")
            ),
            TerminalAction::Write => format!(
                "Terminal type into `{}`: {}",
                input.name,
                input.input.as_deref().unwrap_or("")
            ),
            _ => self.describe(input),
        })
    }

    /// Leaving the OS sandbox is always a question, whatever the mode, as
    /// for Bash: opening a terminal outside it, and typing into one that
    /// runs outside it (what is typed runs there too, so judging it as a
    /// command line is not enough).
    async fn check_permissions(
        &self,
        input: &TerminalInput,
        ctx: &ToolContext,
    ) -> PermissionResult {
        if input.action == TerminalAction::Write {
            let outside = ctx
                .env
                .terminals
                .list()
                .iter()
                .any(|t| t.name == input.name && t.outside_sandbox);
            if !outside {
                return PermissionResult::Passthrough;
            }
            let typed = input.input.as_deref().unwrap_or("");
            return PermissionResult::Ask {
                reason: DecisionReason::Sandbox {
                    detail: format!(
                        "types into terminal `{}`, which runs outside the OS sandbox",
                        input.name
                    ),
                },
                message: format!(
                    "Riot wants to type `{typed}` into terminal `{}`, which runs OUTSIDE the OS sandbox: what is typed there runs with full access to your files and the network.",
                    input.name
                ),
            };
        }
        if !input.leaves_sandbox() {
            return PermissionResult::Passthrough;
        }
        let command = input.command.as_deref().unwrap_or("").trim();
        PermissionResult::Ask {
            reason: DecisionReason::Sandbox {
                detail: format!(
                    "asks to run terminal `{}` outside the OS sandbox",
                    input.name
                ),
            },
            message: format!(
                "Riot wants to open terminal `{}` running `{command}` OUTSIDE the OS sandbox (dangerouslyDisableSandbox), with full access to your files and the network. Everything typed into it later runs outside the sandbox too (each write is asked about like this open).",
                input.name
            ),
        }
    }

    /// `open` is judged as its command, with the same rules and shell
    /// analysis as Bash. `write` is judged as the typed text read as
    /// command lines while the terminal runs a shell in its foreground (or
    /// it cannot be told which program that is); typed into another
    /// program — a Python REPL, a database prompt — it is not shell text,
    /// and the mode decides (default mode asks, bypass allows), after the
    /// rules on the Terminal tool as a whole.
    fn permission_target(&self, input: &TerminalInput, ctx: &ToolContext) -> PermissionTarget {
        match input.action {
            TerminalAction::Open => PermissionTarget::Command {
                command: input.command.clone().unwrap_or_default(),
            },
            TerminalAction::Write
                if types_into_a_shell(ctx.env.terminals.as_ref(), &input.name) =>
            {
                PermissionTarget::Command {
                    command: typed_as_command(input.input.as_deref().unwrap_or("")),
                }
            }
            _ => PermissionTarget::Opaque,
        }
    }

    async fn validate_input(
        &self,
        input: &TerminalInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if !valid_name(&input.name) {
            return Err(ValidationError::rejected(
                "`name` must be 1 to 40 letters, digits, `-` or `_`, e.g. \"dev-server\".",
            ));
        }
        let only = |field: &str, given: bool, actions: &str| {
            if given {
                Err(ValidationError::rejected(format!(
                    "`{field}` is only for action {actions}; leave it out."
                )))
            } else {
                Ok(())
            }
        };
        let action = input.action;
        only(
            "command",
            input.command.is_some() && action != TerminalAction::Open,
            "\"open\"",
        )?;
        only(
            "input",
            input.input.is_some() && action != TerminalAction::Write,
            "\"write\"",
        )?;
        only(
            "pattern",
            input.pattern.is_some() && action != TerminalAction::Wait,
            "\"wait\"",
        )?;
        only(
            "timeout_ms",
            input.timeout_ms.is_some() && action != TerminalAction::Wait,
            "\"wait\"",
        )?;
        only(
            "dangerouslyDisableSandbox",
            input.dangerously_disable_sandbox.is_some() && action != TerminalAction::Open,
            "\"open\"",
        )?;
        match action {
            TerminalAction::Open => {
                if input.command.as_deref().is_none_or(|c| c.trim().is_empty()) {
                    return Err(ValidationError::rejected(
                        "action \"open\" needs `command`: the command line to run, e.g. \"npm run dev\".",
                    ));
                }
                let open = ctx.env.terminals.list();
                if open.iter().any(|t| t.name == input.name) {
                    return Err(ValidationError::rejected(format!(
                        "A terminal named `{}` is already open. Use it, close it first, or pick another name.",
                        input.name
                    )));
                }
                if open.len() >= MAX_TERMINALS {
                    return Err(ValidationError::rejected(format!(
                        "{MAX_TERMINALS} terminals are open, the most a session may have. Close one you no longer need."
                    )));
                }
            }
            TerminalAction::Write => {
                if input.input.as_deref().is_none_or(str::is_empty) {
                    return Err(ValidationError::rejected(
                        "action \"write\" needs `input`: the text to type, e.g. \"ls<Enter>\".",
                    ));
                }
            }
            TerminalAction::Wait => {
                let Some(pattern) = input.pattern.as_deref().filter(|p| !p.is_empty()) else {
                    return Err(ValidationError::rejected(
                        "action \"wait\" needs `pattern`: a regular expression to wait for, e.g. \"ready|listening\".",
                    ));
                };
                if let Err(e) = regex::Regex::new(pattern) {
                    return Err(ValidationError::rejected(format!(
                        "`pattern` is not a valid regular expression: {e}"
                    )));
                }
                match input.timeout_ms {
                    Some(0) => {
                        return Err(ValidationError::rejected(
                            "`timeout_ms` must be at least 1; omit it for the default of 30000.",
                        ));
                    }
                    Some(t) if t > MAX_WAIT_MS => {
                        return Err(ValidationError::rejected(format!(
                            "`timeout_ms` {t} is over the maximum of {MAX_WAIT_MS} (10 minutes)."
                        )));
                    }
                    _ => {}
                }
            }
            TerminalAction::Read | TerminalAction::Close => {}
        }
        Ok(())
    }

    async fn call(&self, input: TerminalInput, ctx: &ToolContext) -> ToolOutcome {
        let terms = &ctx.env.terminals;
        let name = input.name.as_str();
        match input.action {
            TerminalAction::Open => {
                let command = input.command.clone().unwrap_or_default();
                let spec = TerminalSpec {
                    name: name.to_owned(),
                    command: command.clone(),
                    cwd: ctx.env.cwd.clone(),
                    env_set: Vec::new(),
                    env_remove: ctx.env.scrubbed_env.clone(),
                    size: TerminalSize::default(),
                    outside_sandbox: input.leaves_sandbox(),
                };
                match terms.open(spec).await {
                    Ok(view) => ToolOutcome::text(
                        view_text(
                            &view,
                            &format!("Opened terminal `{name}` running `{command}`."),
                        ),
                        None,
                    ),
                    Err(e) => error_outcome(&e),
                }
            }
            TerminalAction::Write => {
                let typed = input.input.as_deref().unwrap_or("");
                if let Err(e) = terms.write(name, &encode_keys(typed), Typist::Agent).await {
                    return error_outcome(&e);
                }
                if let Err(e) = terms.settle(name, WRITE_SETTLE_MS).await {
                    return error_outcome(&e);
                }
                match terms.read(name).await {
                    Ok(view) => {
                        ToolOutcome::text(view_text(&view, &format!("Typed into `{name}`.")), None)
                    }
                    Err(e) => error_outcome(&e),
                }
            }
            TerminalAction::Read => match terms.read(name).await {
                Ok(view) => {
                    ToolOutcome::text(view_text(&view, &format!("Terminal `{name}`.")), None)
                }
                Err(e) => error_outcome(&e),
            },
            TerminalAction::Wait => {
                let pattern = input.pattern.as_deref().unwrap_or("");
                let timeout = input.timeout_ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS);
                match terms.wait(name, pattern, timeout, ctx.cancel.clone()).await {
                    Ok((WaitEnd::Cancelled, _)) => ToolOutcome::Cancelled,
                    Ok((end, view)) => {
                        let heading = match end {
                            WaitEnd::Matched(text) => {
                                format!("`{pattern}` matched in `{name}`: {text}")
                            }
                            WaitEnd::TimedOut => format!(
                                "`{pattern}` did not appear in `{name}` within {timeout} ms; the program is still running."
                            ),
                            WaitEnd::Exited | WaitEnd::Cancelled => format!(
                                "The program in `{name}` ended before `{pattern}` appeared."
                            ),
                        };
                        ToolOutcome::text(view_text(&view, &heading), None)
                    }
                    Err(e) => error_outcome(&e),
                }
            }
            TerminalAction::Close => match terms.close(name).await {
                Ok(view) => ToolOutcome::text(
                    view_text(
                        &view,
                        &format!(
                            "Closed terminal `{name}`: its program and everything it started were stopped."
                        ),
                    ),
                    None,
                ),
                Err(e) => error_outcome(&e),
            },
        }
    }
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;
