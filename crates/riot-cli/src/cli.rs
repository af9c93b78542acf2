//! The command tree of docs/interfaces.md, as clap types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use riot_protocol::PermissionMode;
use riot_protocol::permission::UnknownMode;

/// Riot — a local AI coding agent.
#[derive(Debug, Parser)]
#[command(name = "riot", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub shared: SharedOptions,

    /// Print mode: run PROMPT (or stdin) as `riot exec` does and print the
    /// result — for scripts written for Claude Code's `claude -p`.
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// `riot exec`'s options, for `riot -p`.
    #[command(
        flatten,
        next_help_heading = "Print mode (-p) options, as for `riot exec`"
    )]
    pub print_options: ExecOptions,

    /// With -p, the task; otherwise the prompt to pre-fill in the terminal UI.
    pub prompt: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task without a UI; PROMPT or, if absent, stdin.
    #[command(after_help = EXEC_AFTER_HELP)]
    Exec(ExecArgs),
    /// Agent Client Protocol agent over stdio (for editors).
    Acp(AcpArgs),
    /// Kernel over WebSocket plus the web UI (used by the desktop app).
    Serve(ServeArgs),
    /// List, show and delete sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Inspect and run tools through the full pipeline.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// MCP servers of the user configuration and their status.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Inspect permission decisions.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// What the OS sandbox enforces here (docs/sandbox.md).
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Run the project's checkers and list their diagnostics
    /// (docs/diagnostics.md).
    Diagnostics(DiagnosticsArgs),
    /// Show the effective configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// The git worktrees Riot made for this project's sessions.
    #[command(subcommand)]
    Worktree(WorktreeCommand),
}

/// Options shared by `riot`, `exec`, `acp`, `serve`, `tools call` and
/// `permissions check` (docs/interfaces.md). The `RIOT_*` environment variables
/// are read by the configuration layering, not here, so `riot config show`
/// can tell a flag from a variable.
#[derive(Debug, Clone, Args)]
pub struct SharedOptions {
    /// Project directory (default: the current directory).
    #[arg(long, value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,

    /// Wire format of the model endpoint [env: RIOT_PROVIDER].
    #[arg(long, value_enum, global = true)]
    pub provider: Option<ProviderKind>,

    /// Endpoint root, e.g. http://127.0.0.1:11434/v1 [env: RIOT_BASE_URL].
    #[arg(long, value_name = "URL", global = true)]
    pub base_url: Option<String>,

    /// Model id [env: RIOT_MODEL].
    #[arg(long, value_name = "NAME", global = true)]
    pub model: Option<String>,

    /// Name of the environment variable holding the API key.
    #[arg(long, value_name = "VAR", global = true)]
    pub api_key_env: Option<String>,

    /// Permission mode: default, accept-edits, plan, auto, bypass, dont-ask
    /// (Claude Code's acceptEdits, bypassPermissions and dontAsk are
    /// accepted too) [env: RIOT_PERMISSION_MODE].
    #[arg(long, value_name = "MODE", global = true, value_parser = parse_mode)]
    pub permission_mode: Option<PermissionMode>,

    /// Extra allow rule for this run (repeatable), e.g. 'Bash(cargo test *)'.
    #[arg(long = "allow", value_name = "RULE", global = true)]
    pub allow: Vec<String>,

    /// Extra ask rule for this run (repeatable).
    #[arg(long = "ask", value_name = "RULE", global = true)]
    pub ask: Vec<String>,

    /// Extra deny rule for this run (repeatable).
    #[arg(long = "deny", value_name = "RULE", global = true)]
    pub deny: Vec<String>,

    /// Stop after N iterations (default 100 for exec).
    #[arg(long, value_name = "N", global = true)]
    pub max_turns: Option<u32>,

    /// Trust this project's .riot/ files and .mcp.json (remembered).
    #[arg(long, global = true)]
    pub trust_project: bool,
}

impl Cli {
    /// [`Cli::parse`], then `--worktree` given words (with spaces) and no
    /// prompt (`riot -p -w "add tests"`: the flag's optional value took
    /// the prompt) is a worktree with a picked name and that prompt.
    pub fn parse_args() -> Self {
        let mut cli = <Self as Parser>::parse();
        cli.settle();
        cli
    }

    fn settle(&mut self) {
        prompt_not_name(&mut self.print_options.worktree, &mut self.prompt);
        if let Some(Command::Exec(exec)) = &mut self.command {
            prompt_not_name(&mut exec.options.worktree, &mut exec.prompt);
        }
    }
}

/// Moves a `--worktree` value that is words, not a name (it has spaces),
/// to the missing prompt, leaving a bare `--worktree` (a picked name). A
/// mistyped name (`feat/login`) stays a name and is refused as one.
fn prompt_not_name(worktree: &mut Option<String>, prompt: &mut Option<String>) {
    if prompt.is_none()
        && let Some(value) = worktree.as_deref()
        && value.contains(char::is_whitespace)
        && riot_worktree::check_name(value).is_err()
    {
        *prompt = worktree.replace(String::new());
    }
}

/// A `--permission-mode` value: Riot's names, or Claude Code's for the
/// same modes.
fn parse_mode(value: &str) -> Result<PermissionMode, UnknownMode> {
    let riot = match value {
        "acceptEdits" => "accept-edits",
        "bypassPermissions" => "bypass",
        "dontAsk" => "dont-ask",
        other => other,
    };
    riot.parse().map_err(|_| UnknownMode(value.to_owned()))
}

/// The wire formats of docs/interfaces.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderKind {
    Anthropic,
    Openai,
    OpenaiResponses,
}

impl ProviderKind {
    /// The name used in settings and `RIOT_PROVIDER`.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
            ProviderKind::OpenaiResponses => "openai-responses",
        }
    }
}

/// What `riot exec --help` says after the options.
const EXEC_AFTER_HELP: &str = "\
Nobody can answer permission questions in exec: a call that would be asked
about is denied, and the model is told so. The text output ends with a
summary on stderr naming each denied call and the flags that would allow it
(--allow RULE, --permission-mode accept-edits, ...). Denials alone do not
change the exit code: 0 done, 1 failed, 2 usage or configuration error,
3 --max-turns reached, 130 interrupted.

On a terminal, a status line on stderr shows what is running; stdout holds
only the final answer.";

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The task; read from stdin when absent.
    pub prompt: Option<String>,

    #[command(flatten)]
    pub options: ExecOptions,
}

/// The options of `riot exec`, which `riot -p` takes too. Claude Code's
/// headless flag names are accepted as aliases of Riot's own, so a script
/// written for `claude -p` runs unchanged (docs/interfaces.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub struct ExecOptions {
    /// text (default), json, stream-json (Claude Code's event lines), or
    /// events (Riot's own event stream).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub output_format: OutputFormat,

    /// text (default: the prompt is the argument or all of stdin), or
    /// stream-json: user messages as JSON lines on stdin, each answered in
    /// turn in one session (needs --output-format stream-json or events).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub input_format: InputFormat,

    /// With --output-format stream-json: also the streamed pieces of each
    /// reply, as `stream_event` lines.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// Continue the session with this id; bare `riot --resume` with no id
    /// lists this directory's sessions to choose from.
    #[arg(
        short = 'r',
        long,
        value_name = "ID",
        conflicts_with = "continue",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub resume: Option<String>,

    /// Continue the most recent session in this directory.
    #[arg(short = 'c', long = "continue")]
    pub r#continue: bool,

    /// Work in a git worktree of the project on a new branch `riot/NAME`
    /// (made under Riot's home; a name is picked when none is given). It
    /// is removed at the end if nothing changed in it, else kept.
    #[arg(
        short = 'w',
        long,
        value_name = "NAME",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub worktree: Option<String>,

    /// Text output: show the changed lines of every edit, not only the
    /// `+added −removed` counts. Other formats: the text output's progress
    /// lines on stderr.
    #[arg(short, long)]
    pub verbose: bool,

    /// Allow rules (Claude Code's name for --allow): a list separated by
    /// commas or spaces, e.g. "Bash(git log:*),Read"; repeatable.
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        value_name = "RULES"
    )]
    pub allowed_tools: Vec<String>,

    /// Deny rules (Claude Code's name for --deny), listed as for
    /// --allowedTools; repeatable.
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,

    /// Replace Riot's own instructions at the head of the system prompt
    /// (the environment and memory files still follow). New sessions only.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,

    /// Add TEXT at the end of the system prompt. New sessions only.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// The same as --permission-mode bypass.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
}

/// `riot exec --output-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    StreamJson,
    Events,
}

/// `riot exec --input-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    #[default]
    Text,
    StreamJson,
}

#[derive(Debug, Args)]
pub struct AcpArgs {}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to bind. Anything but loopback needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,

    /// Allow a --host that is not loopback. The token then travels in
    /// plain HTTP: anyone on the network who sees it can drive the agent.
    #[arg(long)]
    pub allow_remote: bool,

    /// Port (0 = random).
    #[arg(long, default_value_t = 0)]
    pub port: u16,

    /// Open a browser.
    #[arg(long)]
    pub open: bool,

    /// Serve the built web UI from DIR instead of the embedded copy.
    #[arg(long, value_name = "DIR")]
    pub ui_dir: Option<PathBuf>,

    /// Shut down when stdin closes (the desktop shell passes this).
    #[arg(long)]
    pub exit_on_stdin_eof: bool,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Sessions, newest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// A transcript, human-readable or as records.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a session.
    Delete { id: String },
    /// The session's user messages, numbered for `rewind --to`, with the
    /// files each turn changed (docs/rewind.md).
    Checkpoints {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Rewind files and conversation to just before user message N; only
    /// files the agent changed are touched.
    Rewind {
        id: String,
        /// The user message to rewind to (1-based; see `checkpoints`).
        #[arg(long, value_name = "N", required_unless_present = "undo")]
        to: Option<u32>,
        /// Files only: the conversation goes on.
        #[arg(long, conflicts_with_all = ["conversation_only", "undo"])]
        files_only: bool,
        /// The conversation only: files stay as they are.
        #[arg(long, conflicts_with = "undo")]
        conversation_only: bool,
        /// Also restore files you changed after the agent (your version is
        /// kept as a checkpoint first).
        #[arg(long)]
        force: bool,
        /// Undo the last rewind instead.
        #[arg(long, conflicts_with = "to")]
        undo: bool,
        #[arg(long)]
        json: bool,
    },
}

/// `riot diagnostics [PATH…] [--json]`: the Diagnostics tool through a
/// session's pipeline.
#[derive(Debug, Clone, Args)]
pub struct DiagnosticsArgs {
    /// Files or directories to report on (default: the whole project).
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// One JSON object: checkers, diagnostics, total, truncated.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// Tools in the exact order sent to the model, with schemas.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Run one tool through the full pipeline.
    Call {
        name: String,
        /// The tool input as JSON.
        #[arg(long, value_name = "JSON")]
        input: String,
        /// Answer permission questions "yes" instead of "no".
        #[arg(long)]
        yes: bool,
        /// Run in this session's file state.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Configured servers and their status (each is started to find out).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a server to the user configuration.
    Add {
        /// `stdio` (a command) or `http` (a URL); guessed from the target.
        #[arg(long, value_name = "KIND")]
        transport: Option<String>,
        /// An environment variable for a stdio server (repeatable).
        #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server (repeatable).
        #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
        name: String,
        /// The command (stdio) or URL (streamable HTTP), then its arguments.
        #[arg(
            required = true,
            num_args = 1..,
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        target: Vec<String>,
    },
    /// Remove a server from the user configuration.
    Remove { name: String },
}

#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// Print the decision for a call as JSON; never executes it.
    Check {
        #[arg(long, value_name = "NAME")]
        tool: String,
        #[arg(long, value_name = "JSON")]
        input: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Probe the sandbox for this project: exit 0 when it is enforced,
    /// 1 (with the reason) when not.
    Check {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum WorktreeCommand {
    /// This project's worktrees: branch, path and what changed in each.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a worktree (and its branch, unless it has commits).
    Remove {
        name: String,
        /// Remove it even with uncommitted changes (they are lost).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration and where each value came from.
    Show {
        #[arg(long)]
        json: bool,
    },
}

/// The flags of the configuration layering.
pub fn flag_layer(shared: &SharedOptions) -> riot_config::FlagLayer {
    riot_config::FlagLayer {
        provider: shared.provider.map(|p| p.name().to_owned()),
        base_url: shared.base_url.clone(),
        model: shared.model.clone(),
        api_key_env: shared.api_key_env.clone(),
        permission_mode: shared.permission_mode,
        allow: shared.allow.clone(),
        ask: shared.ask.clone(),
        deny: shared.deny.clone(),
        ..riot_config::FlagLayer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_tree_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn help_lists_every_interfaces_command() {
        let help = Cli::command().render_long_help().to_string();
        for command in [
            "exec",
            "acp",
            "serve",
            "sessions",
            "tools",
            "mcp",
            "permissions",
            "config",
            "worktree",
        ] {
            assert!(
                help.contains(command),
                "`riot --help` lacks {command}:\n{help}"
            );
        }
        let mut cmd = Cli::command();
        let nested: Vec<(&str, Vec<&str>)> = vec![
            ("sessions", vec!["list", "show", "delete"]),
            ("tools", vec!["list", "call"]),
            ("mcp", vec!["list", "add", "remove"]),
            ("permissions", vec!["check"]),
            ("config", vec!["show"]),
            ("worktree", vec!["list", "remove"]),
        ];
        for (parent, children) in nested {
            let sub = cmd.find_subcommand_mut(parent).unwrap();
            let names: Vec<String> = sub
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .collect();
            for child in children {
                assert!(names.iter().any(|n| n == child), "{parent} lacks {child}");
            }
        }
    }

    #[test]
    fn shared_options_parse_after_the_subcommand() {
        let cli = Cli::try_parse_from([
            "riot",
            "exec",
            "--permission-mode",
            "accept-edits",
            "--allow",
            "Bash(cargo test *)",
            "--allow",
            "Read",
            "--output-format",
            "stream-json",
            "fix it",
        ])
        .unwrap();
        assert_eq!(
            cli.shared.permission_mode,
            Some(PermissionMode::AcceptEdits)
        );
        assert_eq!(cli.shared.allow, vec!["Bash(cargo test *)", "Read"]);
        let Some(Command::Exec(exec)) = cli.command else {
            panic!("expected exec");
        };
        assert_eq!(exec.options.output_format, OutputFormat::StreamJson);
        assert_eq!(exec.prompt.as_deref(), Some("fix it"));
    }

    #[test]
    fn print_mode_takes_exec_options_under_claude_codes_names() {
        let cli = Cli::try_parse_from([
            "riot",
            "-p",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash(git log:*),Read",
            "--disallowed-tools",
            "Write",
            "--append-system-prompt",
            "Be brief.",
            "--dangerously-skip-permissions",
            "--include-partial-messages",
            "--input-format",
            "stream-json",
            "--max-turns",
            "3",
            "--model",
            "m",
            "-c",
            "--verbose",
        ])
        .unwrap();
        assert!(cli.print);
        assert!(cli.command.is_none());
        assert_eq!(cli.prompt, None);
        let o = &cli.print_options;
        assert_eq!(o.output_format, OutputFormat::Json);
        assert_eq!(o.input_format, InputFormat::StreamJson);
        assert_eq!(o.allowed_tools, ["Bash(git log:*),Read"]);
        assert_eq!(o.disallowed_tools, ["Write"]);
        assert_eq!(o.append_system_prompt.as_deref(), Some("Be brief."));
        assert!(o.dangerously_skip_permissions && o.include_partial_messages);
        assert!(o.r#continue && o.verbose);
        assert_eq!(cli.shared.max_turns, Some(3));
        assert_eq!(cli.shared.model.as_deref(), Some("m"));

        let cli = Cli::try_parse_from(["riot", "--print", "fix it", "--resume", "ses_1"]).unwrap();
        assert!(cli.print);
        assert_eq!(cli.prompt.as_deref(), Some("fix it"));
        assert_eq!(cli.print_options.resume.as_deref(), Some("ses_1"));
    }

    #[test]
    fn worktree_takes_an_optional_name_at_the_top_and_in_exec() {
        let cli = Cli::try_parse_from(["riot", "--worktree"]).unwrap();
        assert_eq!(cli.print_options.worktree.as_deref(), Some(""));
        let cli = Cli::try_parse_from(["riot", "--worktree", "w1"]).unwrap();
        assert_eq!(cli.print_options.worktree.as_deref(), Some("w1"));
        let cli = Cli::try_parse_from(["riot", "exec", "--worktree", "w1", "do it"]).unwrap();
        let Some(Command::Exec(exec)) = cli.command else {
            panic!("expected exec");
        };
        assert_eq!(exec.options.worktree.as_deref(), Some("w1"));
        assert_eq!(exec.prompt.as_deref(), Some("do it"));
        // What cannot name a worktree, with no prompt after it, is the
        // prompt (a name is picked); a name stays a name.
        for args in [
            &["riot", "-p", "-w", "add tests"][..],
            &["riot", "--worktree", "add tests"],
        ] {
            let mut cli = Cli::try_parse_from(args).unwrap();
            cli.settle();
            assert_eq!(cli.print_options.worktree.as_deref(), Some(""), "{args:?}");
            assert_eq!(cli.prompt.as_deref(), Some("add tests"), "{args:?}");
        }
        let mut cli = Cli::try_parse_from(["riot", "exec", "-w", "add tests"]).unwrap();
        cli.settle();
        let Some(Command::Exec(exec)) = cli.command else {
            panic!("expected exec");
        };
        assert_eq!(exec.options.worktree.as_deref(), Some(""));
        assert_eq!(exec.prompt.as_deref(), Some("add tests"));
        let mut cli = Cli::try_parse_from(["riot", "-p", "-w", "w1"]).unwrap();
        cli.settle();
        assert_eq!(cli.print_options.worktree.as_deref(), Some("w1"));
        assert_eq!(cli.prompt, None);
        let mut cli = Cli::try_parse_from(["riot", "exec", "-w", "feat/login"]).unwrap();
        cli.settle();
        let Some(Command::Exec(exec)) = cli.command else {
            panic!("expected exec");
        };
        assert_eq!(exec.options.worktree.as_deref(), Some("feat/login"));
        assert_eq!(exec.prompt, None);
        let mut cli = Cli::try_parse_from(["riot", "-w", "bad name", "do it"]).unwrap();
        cli.settle();
        assert_eq!(cli.print_options.worktree.as_deref(), Some("bad name"));
        let cli = Cli::try_parse_from(["riot", "worktree", "remove", "w1", "--force"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Command::Worktree(WorktreeCommand::Remove { ref name, force: true })) if name == "w1"
        ));
    }

    #[test]
    fn claude_codes_permission_mode_names_are_accepted() {
        for (name, mode) in [
            ("acceptEdits", PermissionMode::AcceptEdits),
            ("bypassPermissions", PermissionMode::Bypass),
            ("dontAsk", PermissionMode::DontAsk),
            ("plan", PermissionMode::Plan),
            ("accept-edits", PermissionMode::AcceptEdits),
        ] {
            let cli =
                Cli::try_parse_from(["riot", "exec", "--permission-mode", name, "x"]).unwrap();
            assert_eq!(cli.shared.permission_mode, Some(mode), "{name}");
        }
    }

    #[test]
    fn unknown_permission_mode_is_a_usage_error() {
        let err =
            Cli::try_parse_from(["riot", "exec", "--permission-mode", "yolo", "x"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("accept-edits"), "{err}");
    }
}
