//! `riot exec` and `riot -p`: one task without a UI (docs/interfaces.md).
//! Exit codes from the terminal reason; every Ask is a Deny because nobody
//! can answer; SIGINT stops the turn, saves the session with pairing
//! filled, and exits 130.
//!
//! Output formats: `text` is for people — the answer alone on stdout, and
//! on stderr a live status line on a terminal ([`status`]), a line per
//! tool call with diffs and failing commands' output ([`report`]), and a
//! summary of denied calls with the flags that would allow them
//! ([`denials`]). `json` is the result object ([`result`]); `stream-json`
//! is Claude Code's headless event lines ([`claude`]), `events` Riot's own
//! event stream, each followed by the result object. Claude Code's flag
//! names are folded into Riot's by [`options`]; `--input-format
//! stream-json` reads user messages as JSON lines ([`input`]) and answers
//! each in turn in one session.
//!
//! Every turn's events go through one function, [`consume`], whatever
//! produced them.

mod claude;
mod denials;
mod input;
mod options;
mod report;
mod result;
mod status;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt};
use riot_config::FlagLayer;
use riot_kernel::{Kernel, NobodyAnswers, OpenOptions, ResumeFrom, SessionHandle};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, Clock, IdKind, Message, PermissionResult, SessionId,
    SystemLevel, TerminalReason,
};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::cli::{ExecArgs, ExecOptions, InputFormat, OutputFormat, SharedOptions};

use self::claude::{ClaudeLines, InitInfo};
use self::denials::{Probe, Widen};
use self::report::TextReport;
use self::result::{ResultContext, Tally};
use self::status::{FRAME_MS, StatusLine};

/// Exit code for usage and configuration errors (the kernel's, so a
/// refusal means the same from every command).
use riot_kernel::error::EXIT_USAGE;

/// Exit code of a run stopped by SIGINT.
const EXIT_INTERRUPTED: i32 = 130;

/// `--max-turns` when none is given.
const DEFAULT_MAX_TURNS: u32 = 100;

fn usage(message: &str) -> i32 {
    eprintln!("riot exec: {message}");
    EXIT_USAGE
}

/// The hint for a person who ran `riot exec` without a prompt at a
/// terminal, instead of waiting silently.
pub const STDIN_HINT: &str =
    "riot: reading the prompt from stdin; end with Ctrl-D, or pass it as an argument";

/// What `riot exec` learns about its terminal, once, in [`run`]. The
/// drawing code takes these values (and the clock) as arguments, so its
/// tests decide them; the CLI tests run the binary on a pseudo-terminal.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    /// stdin is a terminal: nobody is piping a prompt in.
    pub stdin_is_tty: bool,
    /// stderr is a terminal: the status line is drawn there.
    pub stderr_is_tty: bool,
    /// Columns of stderr's terminal.
    pub width: usize,
}

impl Terminal {
    /// The real process's stdin and stderr.
    pub fn detect() -> Self {
        let stderr = std::io::stderr();
        let width = terminal_size::terminal_size_of(&stderr)
            .map_or(80, |(terminal_size::Width(w), _)| usize::from(w));
        Self {
            stdin_is_tty: std::io::stdin().is_terminal(),
            stderr_is_tty: stderr.is_terminal(),
            width,
        }
    }
}

/// The permission chain as `riot permissions check` runs it, with this
/// run's flags: the summary of denials asks it which flags would allow a
/// call.
struct KernelProbe<'a> {
    kernel: &'a Kernel,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    flags: FlagLayer,
}

#[async_trait::async_trait]
impl Probe for KernelProbe<'_> {
    async fn decide(&self, tool: &str, input: &Value, widen: &Widen) -> Option<PermissionResult> {
        let mut flags = self.flags.clone();
        match widen {
            Widen::Nothing => {}
            Widen::Allow(rules) => flags.allow.extend(rules.iter().cloned()),
            Widen::Mode(mode) => flags.permission_mode = Some(*mode),
        }
        // Trust was recorded when the session opened, if asked for.
        let at = riot_kernel::tools::Inspect {
            cwd: &self.cwd,
            env: &self.env,
            flags: &flags,
            trust_project: false,
        };
        self.kernel
            .check_permission(at, tool, input.clone())
            .await
            .ok()
    }
}

/// Where the prompts come from: the argument or all of stdin, or JSON
/// lines on stdin.
enum Prompts {
    One(Option<String>),
    Lines(tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
}

impl Prompts {
    /// The next prompt; `Ok(None)` at the end. The error is a usage
    /// error's line.
    async fn next(&mut self) -> Result<Option<String>, String> {
        match self {
            Prompts::One(prompt) => Ok(prompt.take()),
            Prompts::Lines(lines) => loop {
                let line = lines
                    .next_line()
                    .await
                    .map_err(|e| format!("cannot read stdin: {e}"))?;
                let Some(line) = line else { return Ok(None) };
                if let Some(prompt) = input::user_message(&line)? {
                    return Ok(Some(prompt));
                }
            },
        }
    }
}

/// The prompt of `--input-format text`: the argument, or all of stdin.
fn text_prompt(prompt: Option<&str>, terminal: Terminal) -> Result<String, String> {
    let prompt = match prompt {
        Some(p) => p.to_owned(),
        None => {
            if terminal.stdin_is_tty {
                eprintln!("{STDIN_HINT}");
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err("no prompt: pass it as an argument or on stdin".to_owned());
    }
    Ok(prompt)
}

/// SIGINT: the first stops the running turn (and the run), the second
/// exits at once.
#[derive(Debug, Default)]
struct Interrupt {
    seen: AtomicBool,
    /// The running turn's scope.
    running: Mutex<Option<CancelScope>>,
    /// Wakes a run waiting for its next prompt.
    wake: tokio::sync::Notify,
}

impl Interrupt {
    fn set_running(&self, scope: Option<CancelScope>) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = scope;
    }

    fn fire(&self) {
        self.seen.store(true, Ordering::SeqCst);
        if let Some(scope) = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            scope.cancel(CancelReason::User);
        }
        self.wake.notify_one();
    }

    fn seen(&self) -> bool {
        self.seen.load(Ordering::SeqCst)
    }
}

/// Where one run's output goes.
struct Outputs {
    format: OutputFormat,
    stdout: std::io::StdoutLock<'static>,
    /// `stream-json`: Claude Code's lines.
    claude: Option<ClaudeLines>,
    /// `text`, or `--verbose`: the progress lines on stderr.
    report: Option<TextReport>,
    clock: Arc<dyn Clock>,
}

impl Outputs {
    fn line(&mut self, value: &Value) {
        let _ = writeln!(self.stdout, "{value}");
        let _ = self.stdout.flush();
    }
}

/// Takes one turn's events, whatever produced them, to the run's outputs
/// and the tally of its result.
async fn consume(events: impl Stream<Item = AgentEvent>, out: &mut Outputs, tally: &mut Tally) {
    let mut events = std::pin::pin!(events);
    let live = out.report.as_ref().is_some_and(TextReport::is_live);
    let clock = Arc::clone(&out.clock);
    // The status line's timer; only a terminal has one.
    let mut tick = clock.sleep_ms(FRAME_MS);
    loop {
        let event = if live {
            match futures::future::select(events.next(), &mut tick).await {
                futures::future::Either::Left((event, _)) => event,
                futures::future::Either::Right(((), _)) => {
                    tick = clock.sleep_ms(FRAME_MS);
                    if let Some(r) = out.report.as_mut() {
                        r.tick();
                    }
                    continue;
                }
            }
        } else {
            events.next().await
        };
        let Some(event) = event else { break };
        tally.event(&event, clock.now_ms());
        match out.format {
            OutputFormat::Events => {
                let line = serde_json::to_value(&event).unwrap_or_default();
                out.line(&line);
            }
            OutputFormat::StreamJson => {
                let lines = out
                    .claude
                    .as_mut()
                    .map(|c| c.event(&event))
                    .unwrap_or_default();
                for line in &lines {
                    out.line(line);
                }
            }
            OutputFormat::Text | OutputFormat::Json => {}
        }
        match out.report.as_mut() {
            Some(r) => r.event(&event),
            None => {
                if let AgentEvent::Message {
                    message: Message::System(s),
                } = &event
                    && s.level == SystemLevel::Error
                {
                    eprintln!("riot: {}", s.text);
                }
            }
        }
    }
}

/// Runs `riot exec` (or `riot -p`); returns the exit code.
pub async fn run(shared: &SharedOptions, args: &ExecArgs) -> i32 {
    let options = &args.options;
    if let Err(m) = options::check(options, args.prompt.as_deref()) {
        return usage(&m);
    }
    let flags = match options::flag_layer(shared, options) {
        Ok(f) => f,
        Err(m) => return usage(&m),
    };
    let terminal = Terminal::detect();
    let mut prompts = match options.input_format {
        InputFormat::Text => match text_prompt(args.prompt.as_deref(), terminal) {
            Ok(p) => Prompts::One(Some(p)),
            Err(m) => return usage(&m),
        },
        InputFormat::StreamJson => {
            Prompts::Lines(tokio::io::BufReader::new(tokio::io::stdin()).lines())
        }
    };
    // The first prompt before anything else, so a bad first line is a
    // usage error before any session exists.
    let first = match prompts.next().await {
        Ok(Some(p)) => p,
        Ok(None) => {
            return usage(
                "no user message on stdin: send one JSON line per message, as {\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": \"…\"}}",
            );
        }
        Err(m) => return usage(&m),
    };
    let project = match crate::opening::project(shared) {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    // How long a prompt's run waits for background agents after its turn.
    let background_wait_ms = match background_wait(&project.env) {
        Ok(ms) => ms,
        Err(m) => return usage(&m),
    };
    let clock = Arc::clone(&project.kernel.capabilities().clock);
    let ids = Arc::clone(&project.kernel.capabilities().ids);
    let resume = match (&options.resume, options.r#continue) {
        (Some(id), _) if id.is_empty() => {
            return usage(
                "--resume needs a session id here (`riot sessions list` shows them); only the terminal UI, bare `riot --resume`, lets you choose one",
            );
        }
        (Some(id), _) => Some(ResumeFrom::Id(SessionId::new(id.clone()))),
        (None, true) => Some(ResumeFrom::Latest),
        (None, false) => None,
    };
    // `--worktree`, or a resumed session's own: a checkout of its own.
    let (cwd, worktree) =
        match crate::opening::workplace(&project, options.worktree.as_deref(), resume.as_ref())
            .await
        {
            Ok(w) => w,
            Err(code) => return code,
        };
    let crate::opening::Project { env, kernel, .. } = project;
    let max_turns = shared.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
    let open = OpenOptions {
        cwd: cwd.clone(),
        env: env.clone(),
        flags: flags.clone(),
        trust_project: shared.trust_project,
        max_turns: Some(max_turns),
        resume,
        gate: Arc::new(NobodyAnswers),
        mcp_servers: Vec::new(),
    };
    let session = match crate::opening::start(&kernel, open, worktree.as_ref(), "riot exec").await {
        Ok(s) => s,
        Err(code) => return code,
    };
    for notice in session.notices() {
        eprintln!("riot: {notice}");
    }
    let session_id = session.id().to_string();

    let format = options.output_format;
    // Text for people; with --verbose, the same progress lines beside the
    // other formats.
    let report = (format == OutputFormat::Text || options.verbose).then(|| {
        let status = StatusLine::new(
            Box::new(std::io::stderr()),
            terminal.stderr_is_tty,
            terminal.width,
            Arc::clone(&clock),
        );
        TextReport::new(status, options.verbose)
    });
    let live = report.as_ref().is_some_and(TextReport::is_live);
    let claude = (format == OutputFormat::StreamJson).then(|| {
        ClaudeLines::new(
            session_id.clone(),
            session.status().model,
            options.include_partial_messages,
            Arc::clone(&ids),
        )
    });
    let mut out = Outputs {
        format,
        stdout: std::io::stdout().lock(),
        claude,
        report,
        clock: Arc::clone(&clock),
    };
    if format == OutputFormat::StreamJson {
        let info = init_info(&kernel, &session, &cwd).await;
        out.line(&claude::init_line(&info, ids.next_id(IdKind::Message)));
    }

    let interrupt = Arc::new(Interrupt::default());
    let signals = {
        let interrupt = Arc::clone(&interrupt);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                // On a terminal the status line is on this row: erase it first.
                let erase = if live { status::ERASE } else { "" };
                eprintln!("{erase}riot: stopping (press Ctrl-C again to quit at once)");
                interrupt.fire();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(EXIT_INTERRUPTED);
                }
            }
        })
    };

    let mut next = Some(first);
    let mut code = 0;
    let mut last = Tally::default();
    while let Some(prompt) = next.take() {
        let started = clock.now_ms();
        let mut tally = Tally::default();
        let mut turn = match session.prompt(prompt) {
            Ok(turn) => turn,
            Err(e) => {
                eprintln!("riot exec: {e}");
                code = e.exit_code();
                break;
            }
        };
        // The prompt's turn; then, when asked to wait
        // (RIOT_EXEC_BACKGROUND_WAIT_MS), one more for each batch of
        // background agents' results that arrives after it, until they
        // have all ended or the wait runs out: then the agents still
        // running are stopped and the model hears so in one last turn.
        // One result line covers them all.
        let mut waited_since: Option<u64> = None;
        let mut ceiling_passed = false;
        loop {
            interrupt.set_running(Some(turn.cancel_scope().clone()));
            if interrupt.seen() {
                turn.cancel_scope().cancel(CancelReason::User);
            }
            consume(turn, &mut out, &mut tally).await;
            interrupt.set_running(None);
            if let Some(r) = out.report.as_mut() {
                r.finish();
            }
            if tally.reason() != TerminalReason::Completed || interrupt.seen() || ceiling_passed {
                break;
            }
            let running = session.background().list();
            let running: Vec<_> = running
                .iter()
                .filter(|t| t.state == riot_kernel::background::TaskState::Running)
                .collect();
            let ids: Vec<&str> = running.iter().map(|t| t.id.as_str()).collect();
            let plural = if running.len() == 1 { "" } else { "s" };
            let them = if running.len() == 1 { "it" } else { "them" };
            let Some(ceiling_ms) = background_wait_ms else {
                // Not asked to wait: the agents stop with the run's
                // session, and the person is told how to wait for them.
                if out.report.is_some() && !running.is_empty() {
                    eprintln!(
                        "riot: stopping background agent{plural} {} as the run ends; set RIOT_EXEC_BACKGROUND_WAIT_MS to wait for {them}",
                        ids.join(", "),
                    );
                }
                break;
            };
            if out.report.is_some() && !running.is_empty() {
                eprintln!(
                    "riot: waiting for {} background agent{plural} ({}) to finish; Ctrl-C stops {them}",
                    running.len(),
                    ids.join(", "),
                );
            }
            let since = *waited_since.get_or_insert_with(|| clock.now_ms());
            let left = ceiling_ms.saturating_sub(clock.now_ms().saturating_sub(since));
            let ceiling = clock.sleep_ms(left);
            let arrived = tokio::select! {
                arrived = session.background_result() => arrived,
                () = interrupt.wake.notified() => {
                    // Stopped while waiting: the result says so, not success.
                    tally.reason = Some(TerminalReason::Aborted {
                        by: riot_protocol::AbortSource::User,
                    });
                    false
                }
                () = ceiling => {
                    ceiling_passed = true;
                    let stopped: Vec<String> = session
                        .background()
                        .list()
                        .into_iter()
                        .filter(|t| t.state == riot_kernel::background::TaskState::Running)
                        .map(|t| t.id)
                        .collect();
                    for id in &stopped {
                        session.background().stop_for_riot(id);
                    }
                    let waited = ceiling_ms;
                    let waited = if waited % 1000 == 0 {
                        format!("{} s", waited / 1000)
                    } else {
                        format!("{waited} ms")
                    };
                    // (All may have ended just before: nothing to say then.)
                    if !stopped.is_empty() {
                        eprintln!(
                            "riot: stopped background agent{} {} after waiting {waited} for {} (RIOT_EXEC_BACKGROUND_WAIT_MS)",
                            if stopped.len() == 1 { "" } else { "s" },
                            stopped.join(", "),
                            if stopped.len() == 1 { "it" } else { "them" },
                        );
                    }
                    // Their results (`stopped`) arrive at once.
                    session.background_result().await
                }
            };
            if !arrived {
                break;
            }
            turn = match session.deliver() {
                Ok(Some(turn)) => turn,
                Ok(None) => break,
                Err(e) => {
                    eprintln!("riot exec: {e}");
                    break;
                }
            };
        }
        let reason = tally.reason();
        code = reason.exit_code();
        if format != OutputFormat::Text {
            let cx = ResultContext {
                session_id: &session_id,
                uuid: ids.next_id(IdKind::Message),
                duration_ms: clock.now_ms().saturating_sub(started),
                cost_usd: session.cost().usd,
                side_usage: session.side_usage().await.unwrap_or_default(),
                max_turns,
            };
            out.line(&tally.result(&cx));
        }
        last = tally;
        if matches!(reason, TerminalReason::Aborted { .. }) || interrupt.seen() {
            code = EXIT_INTERRUPTED;
            break;
        }
        // The next message, unless SIGINT comes first.
        let read = tokio::select! {
            read = prompts.next() => read,
            () = interrupt.wake.notified() => {
                code = EXIT_INTERRUPTED;
                break;
            }
        };
        match read {
            Ok(p) => next = p,
            Err(m) => {
                code = usage(&m);
                break;
            }
        }
    }
    signals.abort();
    // Saves what the session read, for a resumed session.
    session.close().await;
    if let Some(w) = &worktree {
        crate::opening::leave(&kernel, w).await;
    }
    if format == OutputFormat::Text {
        let reason = last.reason();
        if !last.final_text.is_empty() {
            let _ = writeln!(out.stdout, "{}", last.final_text.trim_end());
        }
        let _ = out.stdout.flush();
        match &reason {
            TerminalReason::MaxTurns => {
                eprintln!("riot: stopped after the maximum number of turns (--max-turns)");
            }
            TerminalReason::Aborted { .. } => {
                eprintln!("riot: interrupted; session {session_id} saved");
            }
            _ => {}
        }
    }
    // Last, so a person sees it: what was denied and how to allow it. The
    // exit code stays that of the turn (see `denials`).
    if let Some(r) = out.report.as_ref() {
        let probe = KernelProbe {
            kernel: &kernel,
            cwd: cwd.clone(),
            env,
            flags,
        };
        for line in denials::summary(r.denials(), &cwd, &probe).await {
            eprintln!("{line}");
        }
    }
    let _ = out.stdout.flush();
    code
}

/// How long a prompt's run waits for its background agents after the
/// turn, from `RIOT_EXEC_BACKGROUND_WAIT_MS`: `None` (unset or `0`) does
/// not wait — they stop with the run's session, as the agents of any
/// session do when it ends.
fn background_wait(env: &BTreeMap<String, String>) -> Result<Option<u64>, String> {
    match env.get("RIOT_EXEC_BACKGROUND_WAIT_MS").map(|v| v.trim()) {
        None | Some("") => Ok(None),
        Some(value) => match value.parse::<u64>() {
            Ok(0) => Ok(None),
            Ok(ms) => Ok(Some(ms)),
            Err(_) => Err(format!(
                "RIOT_EXEC_BACKGROUND_WAIT_MS must be a whole number of milliseconds (0: do not wait), not `{value}`"
            )),
        },
    }
}

/// What the `system`/`init` line says.
async fn init_info(kernel: &Kernel, session: &SessionHandle, cwd: &Path) -> InitInfo {
    let status = session.status();
    InitInfo {
        session_id: session.id().to_string(),
        cwd: cwd.display().to_string(),
        model: status.model,
        mode: status.mode,
        tools: session.read(|s| s.tool_names()).await.unwrap_or_default(),
        mcp_servers: kernel
            .mcp_servers()
            .iter()
            .map(|s| (s.name.clone(), claude::mcp_status(&s.status)))
            .collect(),
        slash_commands: session.commands().iter().map(|c| c.name.clone()).collect(),
    }
}

/// Options that the top level of `riot` took without `-p`: they belong
/// to print mode.
pub fn print_options_without_print(options: &ExecOptions) -> Option<&'static str> {
    (options != &ExecOptions::default()).then_some(
        "these options belong to print mode: add -p (riot -p PROMPT …) or use `riot exec`",
    )
}
