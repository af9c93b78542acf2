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

mod background;
mod claude;
mod denials;
mod input;
mod options;
mod prompts;
mod report;
mod result;
mod session;
mod status;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::{Stream, StreamExt};
use riot_config::FlagLayer;
use riot_kernel::{Kernel, SessionHandle};
use riot_protocol::{
    AgentEvent, CancelReason, Clock, IdGen, IdKind, Message, PermissionResult, SystemLevel,
    TerminalReason,
};
use serde_json::Value;

use crate::cli::{ExecArgs, ExecOptions, OutputFormat, SharedOptions};

use self::background::run_turns;
use self::claude::{ClaudeLines, InitInfo};
use self::denials::{Probe, Widen};
use self::prompts::{Input, Prompts, read_input};
use self::report::TextReport;
use self::result::{ResultContext, Tally};
use self::session::{Opened, open_session};
use self::status::{FRAME_MS, StatusLine};

/// Exit code for usage and configuration errors (the kernel's, so a
/// refusal means the same from every command).
use riot_kernel::error::EXIT_USAGE;

/// Exit code of a run stopped by SIGINT.
const EXIT_INTERRUPTED: i32 = 130;

/// `--max-turns` when none is given.
const DEFAULT_MAX_TURNS: u32 = 100;

/// Says a usage error on stderr; gives its exit code.
fn usage(message: impl std::fmt::Display) -> i32 {
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

/// SIGINT: the first stops the running turn (and the run), the second
/// exits at once.
#[derive(Debug, Default)]
struct Interrupt {
    seen: AtomicBool,
    /// The session while one of its turns runs.
    running: Mutex<Option<SessionHandle>>,
    /// Wakes a run waiting for its next prompt.
    wake: tokio::sync::Notify,
}

impl Interrupt {
    fn set_running(&self, session: Option<SessionHandle>) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = session;
    }

    fn fire(&self) {
        self.seen.store(true, Ordering::SeqCst);
        if let Some(session) = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            session.cancel(CancelReason::User);
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
    let Input {
        flags,
        terminal,
        mut prompts,
        first,
    } = match read_input(shared, args).await {
        Ok(input) => input,
        Err(code) => return code,
    };
    let Opened {
        kernel,
        env,
        cwd,
        worktree,
        session,
        background_wait_ms,
        max_turns,
    } = match open_session(shared, options, &flags).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let clock = Arc::clone(&kernel.capabilities().clock);
    let ids = Arc::clone(&kernel.capabilities().ids);
    let session_id = session.id().to_string();

    let format = options.output_format;
    let mut out = open_outputs(options, terminal, &session, &clock, &ids);
    let live = out.report.as_ref().is_some_and(TextReport::is_live);
    if format == OutputFormat::StreamJson {
        let info = init_info(&kernel, &session, &cwd).await;
        out.line(&claude::init_line(&info, ids.next_id(IdKind::Message)));
    }

    let interrupt = Arc::new(Interrupt::default());
    let signals = watch_interrupts(&interrupt, live);

    let cx = Run {
        session: &session,
        session_id: &session_id,
        clock: &clock,
        ids: &ids,
        interrupt: &interrupt,
        background_wait_ms,
        max_turns,
    };
    let (code, last) = answer_prompts(&cx, first, &mut prompts, &mut out).await;
    signals.abort();
    // Saves what the session read, for a resumed session.
    session.close().await;
    if let Some(w) = &worktree {
        crate::opening::leave(&kernel, w).await;
    }
    if format == OutputFormat::Text {
        print_answer(&mut out, &last, &session_id);
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

/// Where the run's output goes for its `--output-format`: stdout, with
/// Claude Code's lines for `stream-json`, and the progress lines on stderr
/// for `text` or `--verbose`.
fn open_outputs(
    options: &ExecOptions,
    terminal: Terminal,
    session: &SessionHandle,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn IdGen>,
) -> Outputs {
    let format = options.output_format;
    // Text for people; with --verbose, the same progress lines beside the
    // other formats.
    let report = (format == OutputFormat::Text || options.verbose).then(|| {
        let status = StatusLine::new(
            Box::new(std::io::stderr()),
            terminal.stderr_is_tty,
            terminal.width,
            Arc::clone(clock),
        );
        TextReport::new(status, options.verbose)
    });
    let claude = (format == OutputFormat::StreamJson).then(|| {
        ClaudeLines::new(
            session.id().to_string(),
            session.status().model,
            options.include_partial_messages,
            Arc::clone(ids),
        )
    });
    Outputs {
        format,
        stdout: std::io::stdout().lock(),
        claude,
        report,
        clock: Arc::clone(clock),
    }
}

/// Handles SIGINT for the run: the first stops it (and says so, erasing a
/// `live` status line first), the second exits at once. The task ends
/// when aborted.
fn watch_interrupts(interrupt: &Arc<Interrupt>, live: bool) -> tokio::task::JoinHandle<()> {
    let interrupt = Arc::clone(interrupt);
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
}

/// What answering the run's prompts works with, once its session is open.
struct Run<'a> {
    session: &'a SessionHandle,
    session_id: &'a str,
    clock: &'a Arc<dyn Clock>,
    ids: &'a Arc<dyn IdGen>,
    interrupt: &'a Interrupt,
    /// `RIOT_EXEC_BACKGROUND_WAIT_MS`, read by [`background::background_wait`].
    background_wait_ms: Option<u64>,
    max_turns: u32,
}

/// Answers `first` and then each prompt that follows, in turn, with a
/// result line after each unless the format is `text`; stops at an
/// interrupt or an error. Returns the exit code and the last prompt's
/// tally.
async fn answer_prompts(
    run: &Run<'_>,
    first: String,
    prompts: &mut Prompts,
    out: &mut Outputs,
) -> (i32, Tally) {
    let mut next = Some(first);
    let mut code = 0;
    let mut last = Tally::default();
    while let Some(prompt) = next.take() {
        let started = run.clock.now_ms();
        let mut tally = Tally::default();
        let turn = match run.session.prompt(prompt) {
            Ok(turn) => turn,
            Err(e) => {
                eprintln!("riot exec: {e}");
                code = e.exit_code();
                break;
            }
        };
        run_turns(run, turn, out, &mut tally).await;
        let reason = tally.reason();
        code = reason.exit_code();
        if out.format != OutputFormat::Text {
            out.line(&result_line(run, &tally, started).await);
        }
        last = tally;
        if matches!(reason, TerminalReason::Aborted { .. }) || run.interrupt.seen() {
            code = EXIT_INTERRUPTED;
            break;
        }
        // The next message, unless SIGINT comes first.
        let read = tokio::select! {
            read = prompts.next() => read,
            () = run.interrupt.wake.notified() => {
                code = EXIT_INTERRUPTED;
                break;
            }
        };
        match read {
            Ok(p) => next = p,
            Err(e) => {
                code = usage(e);
                break;
            }
        }
    }
    (code, last)
}

/// The result object of one prompt's run, which began at `started`.
async fn result_line(run: &Run<'_>, tally: &Tally, started: u64) -> Value {
    let cx = ResultContext {
        session_id: run.session_id,
        uuid: run.ids.next_id(IdKind::Message),
        duration_ms: run.clock.now_ms().saturating_sub(started),
        cost_usd: run.session.cost().usd,
        side_usage: run.session.side_usage().await.unwrap_or_default(),
        max_turns: run.max_turns,
    };
    tally.result(&cx)
}

/// `--output-format text` at the end of the run: the last answer on
/// stdout, and on stderr why the run stopped early, if it did.
fn print_answer(out: &mut Outputs, last: &Tally, session_id: &str) {
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

/// What the `system`/`init` line says.
async fn init_info(kernel: &Kernel, session: &SessionHandle, cwd: &Path) -> InitInfo {
    let status = session.status();
    InitInfo {
        session_id: session.id().to_string(),
        cwd: cwd.display().to_string(),
        model: status.model,
        mode: status.mode,
        tools: session.tool_names().await.unwrap_or_default(),
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
