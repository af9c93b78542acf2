//! The terminal UI's state machine, pure: no terminal, no session, no
//! clock. Keys ([`App::key`]), pastes, the session's events
//! ([`App::event`]), questions ([`App::permission`], [`App::questions`])
//! and the time ([`App::tick`]) go in; what the loop must do comes out as
//! [`Effect`]s ([`App::take_effects`]) and finished rows for the
//! scrollback ([`App::take_scrollback`]). [`crate::view::draw`] renders the
//! rest, the live area.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::text::{Line, Span};
use riot_kernel::background::{TaskState, TaskSummary};
use riot_kernel::config::notifications::NotificationSettings;
use riot_protocol::{
    AgentEvent, AssistantBlock, Message, MessageOrigin, PermissionMode, PermissionOutcome,
    PermissionRequestDetail, ProgressPayload, Question, QuestionOption, QuestionOutcome,
    QuestionRequest, RequestId, StreamDelta, SystemLevel, TerminalExit, TerminalReason,
    TerminalUpdate, ToolResultContent, ToolUseId, Usage, UserBlock,
};
use serde_json::Value;

use crate::attach::{self, PastedImage};
use crate::composer::Composer;
use crate::markdown;
use crate::menu::{self, Entry, Kind, Menu};
use crate::preview;
use crate::theme::Theme;
use crate::tools;
use crate::wrap::wrap;

/// What the loop around the app must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Start a turn with this prompt (or `/command`).
    Prompt(String),
    /// Start a turn with this prompt and these images after its text.
    PromptWithImages {
        text: String,
        images: Vec<riot_protocol::ImageSource>,
    },
    /// Read the image files a paste named (a dragged file arrives as its
    /// path) and answer with [`App::images_read`] for `pasted`.
    ReadImages { pasted: String, paths: Vec<String> },
    /// Queue this message for the running turn.
    Queue(String),
    /// Send what is still queued as the next prompt (the turn ended
    /// before the loop delivered it).
    SendQueued,
    /// Stop the running turn.
    Cancel,
    /// Switch the permission mode.
    SetMode(PermissionMode),
    /// The answer to permission question `key`.
    Permission {
        key: u64,
        outcome: PermissionOutcome,
    },
    /// The answers to question set `key`.
    Questions { key: u64, outcome: QuestionOutcome },
    /// Look up the project's files matching this query (for `@`).
    FindFiles(String),
    /// Type these bytes into terminal `name`, as the person (the agent's
    /// next read of it says what was typed).
    TerminalWrite { name: String, input: Vec<u8> },
    /// Stop the background agent with this id.
    StopTask(String),
    /// Fetch the messages `/rewind` can go back to, for its picker
    /// ([`App::rewind_points`]).
    RewindPoints,
    /// Resize terminal `name` to fill the pane (Ctrl+F in it).
    TerminalFit(String),
    /// Fetch the models the endpoint lists, for `/model`'s picker
    /// ([`App::model_choices`]).
    ModelChoices,
    /// Ring the terminal's bell (a turn ended, a question waits).
    Bell,
    /// Set the terminal's title to this.
    Title(String),
    /// Leave the UI.
    Exit,
}

/// How the app starts.
#[derive(Debug, Clone)]
pub struct Config {
    pub theme: Theme,
    /// Columns of the terminal.
    pub width: u16,
    pub model: String,
    pub mode: PermissionMode,
    /// The `/` menu: commands, then skills.
    pub commands: Vec<Entry>,
    /// Earlier prompts, oldest first (Up goes back through them).
    pub history: Vec<String>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// The session's OS sandbox as faces show it ("sandboxed
    /// (bubblewrap)", "not sandboxed: …"); `None`: not shown.
    pub sandbox: Option<String>,
    /// The `notifications` setting: `bell` and `title` are the UI's.
    pub notifications: NotificationSettings,
}

/// The `/` entry that lists the background agents (the UI's own).
pub const TASKS_COMMAND: &str = "tasks";

/// The key of `/rewind`'s picker, a question the UI asks itself.
const REWIND_KEY: u64 = u64::MAX;
/// The key of `/model`'s picker, another.
const MODEL_KEY: u64 = u64::MAX - 1;

/// A message `/rewind` can go back to, as its picker shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindChoice {
    /// 1-based, as `/rewind N` takes it.
    pub number: u32,
    pub text: String,
    /// Files its turn changed.
    pub files: Vec<String>,
    /// Still in the conversation (else only its files can be restored).
    pub in_history: bool,
}

/// One of the session's terminals as the pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TermView {
    pub name: String,
    pub command: String,
    /// Every row of the screen, trailing spaces removed.
    pub rows: Vec<String>,
    /// Row and column of the cursor.
    pub cursor: (u16, u16),
    pub exit: Option<TerminalExit>,
}

impl TermView {
    /// `running`, `exited 0`, `killed by signal 9`.
    pub(crate) fn state(&self) -> String {
        match &self.exit {
            None => "running".to_owned(),
            Some(TerminalExit {
                code: Some(code), ..
            }) => format!("exited {code}"),
            Some(TerminalExit {
                signal: Some(signal),
                ..
            }) => format!("killed by signal {signal}"),
            Some(_) => "exited".to_owned(),
        }
    }
}

/// A session title for the terminal's title: the words of `text` on one
/// line, at most 60 characters.
fn short_title(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let words: String = words.chars().filter(|c| !c.is_control()).collect();
    if words.chars().count() <= 60 {
        return words;
    }
    let mut cut: String = words.chars().take(59).collect();
    cut.push('…');
    cut
}

/// The bytes a terminal sends for `key`; `None` for keys it sends nothing
/// for.
pub fn key_bytes(key: KeyEvent) -> Option<Vec<u8>> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let mut out = Vec::new();
    if alt {
        out.push(0x1b);
    }
    match key.code {
        KeyCode::Char(c) if ctrl => {
            let lower = c.to_ascii_lowercase();
            match lower {
                'a'..='z' => out.push(lower as u8 - b'a' + 1),
                ' ' | '@' | '2' => out.push(0),
                '[' | '3' => out.push(0x1b),
                '\\' | '4' => out.push(0x1c),
                ']' | '5' => out.push(0x1d),
                '^' | '6' => out.push(0x1e),
                '_' | '-' | '7' => out.push(0x1f),
                _ => return None,
            }
        }
        KeyCode::Char(c) => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        KeyCode::Enter => out.push(b'\r'),
        KeyCode::Tab => out.push(b'\t'),
        KeyCode::BackTab => out.extend_from_slice(b"\x1b[Z"),
        KeyCode::Backspace => out.push(0x7f),
        KeyCode::Esc => out.push(0x1b),
        KeyCode::Up => out.extend_from_slice(b"\x1b[A"),
        KeyCode::Down => out.extend_from_slice(b"\x1b[B"),
        KeyCode::Right => out.extend_from_slice(b"\x1b[C"),
        KeyCode::Left => out.extend_from_slice(b"\x1b[D"),
        KeyCode::Home => out.extend_from_slice(b"\x1b[H"),
        KeyCode::End => out.extend_from_slice(b"\x1b[F"),
        KeyCode::Insert => out.extend_from_slice(b"\x1b[2~"),
        KeyCode::Delete => out.extend_from_slice(b"\x1b[3~"),
        KeyCode::PageUp => out.extend_from_slice(b"\x1b[5~"),
        KeyCode::PageDown => out.extend_from_slice(b"\x1b[6~"),
        KeyCode::F(n @ 1..=4) => {
            out.extend_from_slice(b"\x1bO");
            out.push(b'P' + n - 1);
        }
        _ => return None,
    }
    Some(out)
}

/// MCP servers by state, for the status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mcp {
    pub starting: usize,
    pub ready: usize,
    pub failed: usize,
}

/// A tool call that started and has not finished.
#[derive(Debug, Clone)]
pub(crate) struct Running {
    pub id: ToolUseId,
    pub describe: String,
    /// The last lines of its live output.
    pub output: VecDeque<String>,
}

/// The most rows the live area keeps for the streaming reply's unsettled
/// part when it takes fewer.
const FLOOR: usize = 4;

/// Lines of a running command's output shown live.
const LIVE_OUTPUT: usize = 3;

/// A question on screen.
#[derive(Debug, Clone)]
pub(crate) enum Asking {
    Permission {
        key: u64,
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
        selected: usize,
        /// What the question shows of the call, made once.
        preview: Arc<preview::Preview>,
        /// The whole preview is shown (`v`), from this row.
        view: Option<usize>,
    },
    Questions {
        key: u64,
        request: QuestionRequest,
        /// The question being answered.
        index: usize,
        answers: Vec<Vec<String>>,
        selected: usize,
        checked: Vec<bool>,
        /// A free-text answer being typed.
        text: String,
    },
}

/// One choice of a permission question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    Once,
    Always(String),
    Reject,
}

impl Choice {
    pub(crate) fn label(&self) -> String {
        match self {
            Choice::Once => "Yes".to_owned(),
            Choice::Always(rule) => format!("Yes, and always allow {rule}"),
            Choice::Reject => "No".to_owned(),
        }
    }

    pub(crate) fn key(&self) -> char {
        match self {
            Choice::Once => 'y',
            Choice::Always(_) => 'a',
            Choice::Reject => 'n',
        }
    }

    /// The keys that pick it, as shown.
    pub(crate) fn keys(&self) -> &'static str {
        match self {
            Choice::Once => "y",
            Choice::Always(_) => "a",
            Choice::Reject => "n or esc",
        }
    }
}

/// The choices of a permission question: "always" only when the chain
/// offers a rule.
pub(crate) fn choices(detail: &PermissionRequestDetail) -> Vec<Choice> {
    let mut out = vec![Choice::Once];
    if let Some(rule) = &detail.suggested_rule {
        out.push(Choice::Always(rule.clone()));
    }
    out.push(Choice::Reject);
    out
}

/// The rows of the streaming reply not in the scrollback, for the text,
/// the offsets and the width they were made for.
#[derive(Debug)]
struct Live {
    len: usize,
    committed: usize,
    skip: usize,
    width: usize,
    rows: Vec<Line<'static>>,
}

/// The state of the terminal UI. See the module docs.
#[derive(Debug)]
pub struct App {
    pub(crate) theme: Theme,
    pub(crate) width: u16,
    /// Rows of the live area (0 until the loop says).
    height: u16,
    /// When the open question appeared: the time since is the person's,
    /// not the turn's.
    asked_at: Option<u64>,
    /// Rows waiting to go into the scrollback.
    scrollback: Vec<Line<'static>>,
    /// Whether anything went into the scrollback yet (blank rows separate
    /// what follows).
    wrote: bool,
    /// The reply streaming now.
    pub(crate) text: String,
    /// How much of `text` is in the scrollback already, as whole blocks.
    pub(crate) committed: usize,
    /// How much of the block after them (`text[committed..]`) is in the
    /// scrollback already: its rendering resumes there
    /// ([`markdown::render_from`]).
    pub(crate) skip: usize,
    /// The rows of the reply the live area shows, as the last
    /// [`App::settle`] left them.
    live: Option<Live>,
    /// Blocks pushed to the scrollback so far, and the count when the
    /// reply's last rows went there: the reply's next rows follow them
    /// without a blank row only if nothing came in between.
    blocks: u64,
    reply_block: u64,
    /// The most rows the reply's unsettled part took in the live area
    /// during this reply: the live area keeps that many for it, so that
    /// what is below does not move up and down (and get written again) as
    /// rows settle.
    pub(crate) floor: usize,
    /// Thinking streaming now (shown folded).
    pub(crate) thinking: String,
    /// Tool calls of the replies seen: name and input.
    calls: HashMap<ToolUseId, (String, Value)>,
    pub(crate) running: Vec<Running>,
    pub(crate) composer: Composer,
    pub(crate) menu: Option<Menu>,
    /// The menu was closed with Esc for this text.
    menu_dismissed: Option<String>,
    commands: Vec<Entry>,
    files: Vec<String>,
    files_query: Option<String>,
    pub(crate) asking: VecDeque<Asking>,
    pub(crate) queued: Vec<String>,
    pub(crate) busy: bool,
    /// What the model is doing, for the status line.
    pub(crate) activity: String,
    turn_started: u64,
    pub(crate) now: u64,
    pub(crate) model: String,
    pub(crate) mode: PermissionMode,
    /// How hard the model thinks (shown when not off).
    pub(crate) thinking_level: riot_protocol::ThinkingLevel,
    modes: Vec<PermissionMode>,
    pub(crate) usage: Usage,
    /// Tokens in the context at the last request.
    pub(crate) context: u64,
    pub(crate) context_window: Option<u64>,
    pub(crate) sandbox: Option<String>,
    /// The session's cost in US dollars once reported: `Some(None)` is
    /// unknown (a model without a price), shown as `—`.
    pub(crate) cost: Option<Option<f64>>,
    pub(crate) mcp: Mcp,
    /// Ctrl+C was pressed once: a second exits.
    ctrl_c: bool,
    /// A one-line hint above the status line.
    pub(crate) hint: Option<String>,
    /// The session's terminals, in opening order.
    pub(crate) terminals: Vec<TermView>,
    /// The terminal the pane shows and keys go to; `None`: the
    /// conversation has them.
    pub(crate) focus: Option<String>,
    /// The session's background agents, oldest first.
    pub(crate) tasks: Vec<TaskSummary>,
    /// The background agents' list is open, this one selected.
    pub(crate) tasks_open: Option<usize>,
    notify: NotificationSettings,
    /// The session's title (its first prompt), for the terminal's title.
    session_title: Option<String>,
    /// A turn has ended since the last prompt.
    turn_ended: bool,
    /// The terminal title last set.
    shown_title: Option<String>,
    effects: Vec<Effect>,
    exit: bool,
}

impl App {
    pub fn new(config: Config) -> Self {
        // Shift+Tab cycles through the modes a person picks day to day; a
        // session started in another mode keeps it in the cycle.
        let mut modes = vec![
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
        ];
        if !modes.contains(&config.mode) {
            modes.push(config.mode);
        }
        let mut commands = config.commands;
        commands.push(Entry {
            name: TASKS_COMMAND.to_owned(),
            description: "The background agents: status, and x to stop one".to_owned(),
            takes_arguments: false,
        });
        Self {
            theme: config.theme,
            width: config.width,
            height: 0,
            asked_at: None,
            scrollback: Vec::new(),
            wrote: false,
            text: String::new(),
            committed: 0,
            skip: 0,
            live: None,
            blocks: 0,
            reply_block: 0,
            floor: 0,
            thinking: String::new(),
            calls: HashMap::new(),
            running: Vec::new(),
            composer: Composer::with_history(config.history),
            menu: None,
            menu_dismissed: None,
            commands,
            files: Vec::new(),
            files_query: None,
            asking: VecDeque::new(),
            queued: Vec::new(),
            busy: false,
            activity: String::new(),
            turn_started: 0,
            now: 0,
            model: config.model,
            mode: config.mode,
            thinking_level: riot_protocol::ThinkingLevel::Off,
            modes,
            usage: Usage::default(),
            context: 0,
            context_window: config.context_window,
            sandbox: config.sandbox,
            cost: None,
            mcp: Mcp::default(),
            ctrl_c: false,
            hint: None,
            terminals: Vec::new(),
            focus: None,
            tasks: Vec::new(),
            tasks_open: None,
            notify: config.notifications,
            session_title: None,
            turn_ended: false,
            shown_title: None,
            effects: Vec::new(),
            exit: false,
        }
    }

    /// What the loop must do, in order; emptied. Ends with the terminal's
    /// new title when it changed (the `title` notification).
    pub fn take_effects(&mut self) -> Vec<Effect> {
        if self.notify.title {
            let title = self.title();
            if self.shown_title.as_ref() != Some(&title) {
                self.shown_title = Some(title.clone());
                self.effects.push(Effect::Title(title));
            }
        }
        std::mem::take(&mut self.effects)
    }

    /// What the session is doing, as the terminal's title says it:
    /// `waiting for you` (a question), `working` (a turn runs), `done` (a
    /// turn ended); `None` before the first turn.
    pub fn state(&self) -> Option<&'static str> {
        if !self.asking.is_empty() {
            Some("waiting for you")
        } else if self.busy {
            Some("working")
        } else if self.turn_ended {
            Some("done")
        } else {
            None
        }
    }

    /// The terminal's title: `riot · STATE · SESSION TITLE`.
    pub fn title(&self) -> String {
        let mut parts = vec!["riot"];
        if let Some(state) = self.state() {
            parts.push(state);
        }
        if let Some(title) = self.session_title.as_deref().filter(|t| !t.is_empty()) {
            parts.push(title);
        }
        parts.join(" · ")
    }

    /// Rings the bell, when the setting is on.
    fn ring(&mut self) {
        if self.notify.bell {
            self.effects.push(Effect::Bell);
        }
    }

    /// The session's title as listed (a resumed session's, maybe renamed),
    /// for the terminal's title; otherwise its first prompt is.
    pub fn set_session_title(&mut self, title: &str) {
        let title = short_title(title);
        if !title.is_empty() {
            self.session_title = Some(title);
        }
    }

    /// The terminal the pane shows, if it has the keys.
    pub fn focused_terminal(&self) -> Option<&str> {
        self.focus.as_deref()
    }

    /// Something happened in one of the session's terminals.
    pub fn terminal(&mut self, update: &TerminalUpdate) {
        match update {
            TerminalUpdate::Opened { name, command, .. } => {
                self.terminals.retain(|t| &t.name != name);
                self.terminals.push(TermView {
                    name: name.clone(),
                    command: command.clone(),
                    rows: Vec::new(),
                    cursor: (0, 0),
                    exit: None,
                });
            }
            TerminalUpdate::Screen {
                name,
                rows,
                cursor_row,
                cursor_col,
                ..
            } => {
                if let Some(t) = self.terminals.iter_mut().find(|t| &t.name == name) {
                    t.rows.clone_from(rows);
                    t.cursor = (*cursor_row, *cursor_col);
                }
            }
            // The rows of the next screen show the new size.
            TerminalUpdate::Resized { .. } => {}
            TerminalUpdate::Exited { name, exit } => {
                if let Some(t) = self.terminals.iter_mut().find(|t| &t.name == name) {
                    t.exit = Some(*exit);
                }
            }
            TerminalUpdate::Closed { name } => {
                let at = self.terminals.iter().position(|t| &t.name == name);
                self.terminals.retain(|t| &t.name != name);
                if self.focus.as_ref() == Some(name) {
                    self.focus = at
                        .and_then(|i| self.terminals.get(i).or(self.terminals.last()))
                        .map(|t| t.name.clone());
                    self.hint = Some(format!("The terminal {name} was closed."));
                }
            }
        }
    }

    /// The session's background agents now; whether anything changed.
    pub fn background(&mut self, tasks: Vec<TaskSummary>) -> bool {
        if tasks == self.tasks {
            return false;
        }
        self.tasks = tasks;
        if let Some(selected) = self.tasks_open.as_mut() {
            *selected = (*selected).min(self.tasks.len().saturating_sub(1));
        }
        true
    }

    /// Whether the background agents' list is open.
    pub fn tasks_open(&self) -> bool {
        self.tasks_open.is_some()
    }

    /// Ctrl+T: the conversation, then each terminal in turn, then the
    /// conversation again.
    fn cycle_focus(&mut self) {
        self.menu = None;
        let next = match &self.focus {
            None => self.terminals.first(),
            Some(name) => self
                .terminals
                .iter()
                .position(|t| &t.name == name)
                .and_then(|i| self.terminals.get(i + 1)),
        };
        self.focus = next.map(|t| t.name.clone());
        if self.focus.is_none() && self.terminals.is_empty() {
            self.hint =
                Some("No terminal is open: the agent opens one with its Terminal tool.".to_owned());
        }
    }

    /// A key while the pane has the keys: typed into the terminal, but
    /// Ctrl+T moves on.
    fn terminal_key(&mut self, name: String, key: KeyEvent) {
        self.hint = None;
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('t') {
            self.cycle_focus();
            return;
        }
        // Ctrl+F: the terminal takes the pane's size (its program is told).
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('f') {
            self.effects.push(Effect::TerminalFit(name));
            return;
        }
        if let Some(input) = key_bytes(key) {
            self.type_into(name, input);
        }
    }

    /// Types `input` into terminal `name`, unless its program has ended.
    fn type_into(&mut self, name: String, input: Vec<u8>) {
        if self
            .terminals
            .iter()
            .any(|t| t.name == name && t.exit.is_some())
        {
            self.hint = Some(format!(
                "The program in {name} has ended: nothing can be typed into it."
            ));
            return;
        }
        self.effects.push(Effect::TerminalWrite { name, input });
    }

    /// A line under the pane or the composer until the next key.
    pub fn hint(&mut self, text: String) {
        self.hint = Some(text);
    }

    /// A key while the background agents' list is open.
    fn tasks_key(&mut self, key: KeyEvent) {
        let Some(selected) = self.tasks_open else {
            return;
        };
        let n = self.tasks.len();
        match key.code {
            KeyCode::Up if n > 0 => self.tasks_open = Some((selected + n - 1) % n),
            KeyCode::Down if n > 0 => self.tasks_open = Some((selected + 1) % n),
            KeyCode::Char('x' | 's') | KeyCode::Delete => {
                if let Some(task) = self.tasks.get(selected) {
                    if task.state == TaskState::Running {
                        self.hint = Some(format!("Stopping {}…", task.id));
                        self.effects.push(Effect::StopTask(task.id.clone()));
                    } else {
                        self.hint = Some(format!("{} is not running.", task.id));
                    }
                }
            }
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => self.tasks_open = None,
            _ => {}
        }
    }

    /// Finished rows for the terminal's scrollback, in order; emptied.
    pub fn take_scrollback(&mut self) -> Vec<Line<'static>> {
        std::mem::take(&mut self.scrollback)
    }

    /// Whether the person asked to leave.
    pub fn exiting(&self) -> bool {
        self.exit
    }

    /// Whether a turn runs (as far as the app knows).
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// The composer's text.
    pub fn composer_text(&self) -> &str {
        self.composer.text()
    }

    /// The messages shown as queued.
    pub fn queued(&self) -> &[String] {
        &self.queued
    }

    /// The time, for the spinner and the elapsed time.
    pub fn tick(&mut self, now_ms: u64) {
        self.now = now_ms;
        self.track_wait();
    }

    /// Starts or ends the person's time: from the moment a question is
    /// open to the moment none is, the turn's clock stands still.
    fn track_wait(&mut self) {
        match (self.asking.is_empty(), self.asked_at) {
            (false, None) => self.asked_at = Some(self.now),
            (true, Some(at)) => {
                self.asked_at = None;
                self.turn_started += self.now.saturating_sub(at);
            }
            _ => {}
        }
    }

    /// Seconds the open question has waited for the person.
    pub(crate) fn waited_s(&self) -> u64 {
        self.asked_at
            .map_or(0, |at| self.now.saturating_sub(at) / 1000)
    }

    /// The terminal's new width.
    pub fn resize(&mut self, width: u16) {
        self.width = width;
    }

    /// The live area's height in rows (the view of a whole preview
    /// scrolls by pages of it).
    pub fn set_height(&mut self, rows: u16) {
        self.height = rows;
    }

    /// Rows the view of a whole preview shows at once: the live area but
    /// its title and keys.
    pub(crate) fn page(&self) -> usize {
        usize::from(self.height).saturating_sub(2).max(1)
    }

    /// The session's model and mode changed (its status).
    pub fn status(&mut self, model: &str, mode: PermissionMode) {
        model.clone_into(&mut self.model);
        self.mode = mode;
    }

    /// How hard the model thinks now (`/thinking`, an editor's option).
    pub fn thinking_level(&mut self, level: riot_protocol::ThinkingLevel) {
        self.thinking_level = level;
    }

    /// The session's cost so far in US dollars; `None` when it is
    /// unknown, which the status line shows as `—`, never as `$0`.
    pub fn cost(&mut self, usd: Option<f64>) {
        self.cost = Some(usd);
    }

    /// MCP servers by state.
    pub fn mcp(&mut self, mcp: Mcp) {
        self.mcp = mcp;
    }

    /// Adds rows to the scrollback, after a blank row if something came
    /// before.
    fn push_block(&mut self, rows: Vec<Line<'static>>) {
        if rows.is_empty() {
            return;
        }
        if self.wrote {
            self.scrollback.push(Line::default());
        }
        self.wrote = true;
        self.blocks += 1;
        self.scrollback.extend(rows);
    }

    /// A one-line note in the conversation (system messages, stops).
    pub fn note(&mut self, level: SystemLevel, text: &str) {
        let (mark, style) = match level {
            SystemLevel::Info => ("ℹ ", self.theme.dim()),
            SystemLevel::Warning => ("⚠ ", self.theme.warning()),
            SystemLevel::Error => ("✗ ", self.theme.error()),
        };
        let width = usize::from(self.width);
        let mut rows = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lead = if i == 0 {
                Span::styled(mark, style)
            } else {
                Span::raw("  ")
            };
            rows.extend(wrap(
                &Line::from(Span::styled(line.to_owned(), style)),
                width,
                &[lead],
                &[Span::raw("  ")],
            ));
        }
        self.push_block(rows);
    }

    fn user_rows(&self, text: &str) -> Vec<Line<'static>> {
        let width = usize::from(self.width);
        let style = self.theme.user();
        let mut rows = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lead = if i == 0 { "› " } else { "  " };
            rows.extend(wrap(
                &Line::from(Span::styled(line.to_owned(), style)),
                width,
                &[Span::styled(lead, style)],
                &[Span::raw("  ")],
            ));
        }
        rows
    }

    /// Shows an earlier conversation (a resumed session), as it happened.
    pub fn history(&mut self, messages: &[Message]) {
        for message in messages {
            match message {
                Message::User(u) if u.origin == MessageOrigin::Person => {
                    let text: Vec<&str> = u
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            UserBlock::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect();
                    if let Some(first) = text.first() {
                        if self.session_title.is_none() {
                            self.session_title = Some(short_title(first));
                        }
                        let rows = self.user_rows(first);
                        self.push_block(rows);
                    }
                }
                Message::User(u) => {
                    self.background_results(&u.content);
                    self.results(&u.content);
                }
                Message::Assistant(a) => {
                    if a.content
                        .iter()
                        .any(|b| matches!(b, AssistantBlock::Thinking { .. }))
                    {
                        self.fold_thinking(&thinking_of(a));
                    }
                    self.searches(a);
                    self.markdown_block(&a.text());
                    self.remember_calls(a);
                }
                Message::System(s) => self.note(s.level, &s.text),
            }
        }
    }

    /// The provider's web searches in a reply, drawn like WebSearch calls.
    fn searches(&mut self, a: &riot_protocol::AssistantMessage) {
        for shown in a.content.iter().filter_map(AssistantBlock::search_shown) {
            let rows = tools::finished(
                tools::Finished {
                    name: "WebSearch",
                    describe: &shown.ui.describe,
                    ui: Some(&shown.ui),
                    is_error: shown.failed,
                    text: &shown.text,
                },
                usize::from(self.width),
                self.theme,
            );
            self.push_block(rows);
        }
    }

    fn remember_calls(&mut self, a: &riot_protocol::AssistantMessage) {
        for call in a.tool_uses() {
            self.calls
                .insert(call.id.clone(), (call.name.to_owned(), call.input.clone()));
        }
    }

    fn markdown_block(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let rows = markdown::render(text, usize::from(self.width), self.theme);
        self.push_block(rows);
    }

    fn fold_thinking(&mut self, thinking: &str) {
        let words = thinking.split_whitespace().count();
        if words == 0 {
            return;
        }
        let row = Line::from(Span::styled(
            format!("✻ Thought ({words} words)"),
            self.theme.thinking(),
        ));
        self.push_block(vec![row]);
    }

    /// Moves the finished blocks of the streaming reply to the scrollback.
    fn commit_stable(&mut self) {
        let rest = &self.text[self.committed..];
        let stable = markdown::stable_len(rest);
        if stable > 0 {
            let chunk = rest[..stable].to_owned();
            self.committed += stable;
            self.reply_rest(&chunk);
        }
    }

    /// Moves the rows of the streaming reply that can no longer change to
    /// the scrollback: the wrapped rows of a paragraph but its last, the
    /// lines of a code block but the one being written, the items of a list
    /// but the last ([`markdown::settle`]). The loop calls it before each
    /// frame; the live area then shows only the rest.
    pub fn settle(&mut self) {
        let rest = &self.text[self.committed..];
        if rest.trim().is_empty() {
            self.live = None;
            return;
        }
        let settled = markdown::settle(rest, usize::from(self.width), self.theme, self.skip);
        let mut rows = settled.rows;
        let live = rows.split_off(settled.settled);
        if !rows.is_empty() {
            self.reply_rows(rows);
            self.skip = settled.resume;
        }
        // A few rows at most: a table or a long line held back is not kept
        // room for after it settles.
        self.floor = self.floor.max(live.len().min(FLOOR));
        self.live = Some(Live {
            len: self.text.len(),
            committed: self.committed,
            skip: self.skip,
            width: usize::from(self.width),
            rows: live,
        });
    }

    /// The rows of the streaming reply not in the scrollback yet, at
    /// `width` columns.
    pub(crate) fn live_text(&self, width: usize) -> Vec<Line<'static>> {
        if let Some(live) = &self.live
            && live.len == self.text.len()
            && live.committed == self.committed
            && live.skip == self.skip
            && live.width == width
        {
            return live.rows.clone();
        }
        let rest = &self.text[self.committed..];
        markdown::render_from(rest, width, self.theme, self.skip)
    }

    /// The rows the live area keeps for the streaming reply
    /// ([`App::floor`]).
    pub fn floor(&self) -> usize {
        if self.busy { self.floor } else { 0 }
    }

    /// How many rows of the streaming reply the live area shows at
    /// `width` columns.
    pub fn live_rows(&self, width: usize) -> usize {
        if self.text[self.committed..].trim().is_empty() {
            0
        } else {
            self.live_text(width).len()
        }
    }

    /// Rows of the reply for the scrollback: after a blank row when they
    /// begin a block, or when something else went there since the reply's
    /// rows before them.
    fn reply_rows(&mut self, rows: Vec<Line<'static>>) {
        if rows.is_empty() {
            return;
        }
        if self.skip > 0 && self.reply_block == self.blocks {
            self.scrollback.extend(rows);
        } else {
            self.push_block(rows);
        }
        self.reply_block = self.blocks;
    }

    /// Moves the rest of the reply's open block, `rest`, to the scrollback.
    fn reply_rest(&mut self, rest: &str) {
        if !rest.trim().is_empty() {
            let rows = markdown::render_from(rest, usize::from(self.width), self.theme, self.skip);
            self.reply_rows(rows);
        }
        self.skip = 0;
        self.live = None;
    }

    /// Moves all of the streaming reply to the scrollback.
    fn commit_all(&mut self, final_text: Option<&str>) {
        if !self.thinking.is_empty() {
            let thinking = std::mem::take(&mut self.thinking);
            self.fold_thinking(&thinking);
        }
        let text = final_text.unwrap_or(&self.text).to_owned();
        // Rows of the open block in the scrollback hold it to what
        // streamed.
        let streamed = if self.skip > 0 {
            &self.text[..]
        } else {
            &self.text[..self.committed]
        };
        let rest = if text.starts_with(streamed) {
            text.get(self.committed..).unwrap_or("").to_owned()
        } else {
            // The reply differs from what streamed (a non-streaming
            // fallback): show what was not shown.
            self.text.get(self.committed..).unwrap_or("").to_owned()
        };
        self.reply_rest(&rest);
        self.text.clear();
        self.committed = 0;
        self.floor = 0;
    }

    /// A background agent's result reaching the model: one dim row each
    /// (`⎿ background agent bg_1 (explore) completed`); the model's
    /// answer follows.
    fn background_results(&mut self, content: &[UserBlock]) {
        for block in content {
            let UserBlock::Text { text } = block else {
                continue;
            };
            let Some(tag) = text
                .strip_prefix("<background-task ")
                .and_then(|rest| rest.split_once('>'))
                .map(|(tag, _)| tag)
            else {
                continue;
            };
            let attribute = |name: &str| {
                tag.split_once(&format!("{name}=\""))
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map_or("", |(value, _)| value)
            };
            let row = format!(
                "  ⎿ background agent {} ({}) {}",
                attribute("id"),
                attribute("agent"),
                attribute("status")
            );
            let dim = self.theme.dim();
            self.push_block(vec![Line::from(Span::styled(row, dim))]);
        }
    }

    /// A turn Riot started by itself, to give the model what background
    /// agents returned while no turn ran: the app runs it as a prompt's.
    pub fn delivery_started(&mut self) {
        self.busy = true;
        self.turn_ended = false;
        self.turn_started = self.now;
        "thinking".clone_into(&mut self.activity);
    }

    fn results(&mut self, content: &[UserBlock]) {
        for block in content {
            let UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ui,
            } = block
            else {
                continue;
            };
            let (name, _) = self
                .calls
                .get(tool_use_id)
                .cloned()
                .unwrap_or_else(|| (String::new(), Value::Null));
            let describe = self
                .running
                .iter()
                .find(|r| &r.id == tool_use_id)
                .map(|r| r.describe.clone())
                .unwrap_or_default();
            self.running.retain(|r| &r.id != tool_use_id);
            let text = content
                .iter()
                .find_map(|c| match c {
                    ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                        Some(text.as_str())
                    }
                    ToolResultContent::Image { .. } => None,
                })
                .unwrap_or("");
            let rows = tools::finished(
                tools::Finished {
                    name: &name,
                    describe: &describe,
                    ui: ui.as_ref(),
                    is_error: *is_error,
                    text,
                },
                usize::from(self.width),
                self.theme,
            );
            self.push_block(rows);
        }
    }

    /// Takes one event of the running turn.
    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::RequestStart { .. } => "thinking".clone_into(&mut self.activity),
            AgentEvent::Delta { delta } => match delta {
                StreamDelta::Text { text } => {
                    if !self.thinking.is_empty() {
                        let thinking = std::mem::take(&mut self.thinking);
                        self.fold_thinking(&thinking);
                    }
                    "writing".clone_into(&mut self.activity);
                    self.text.push_str(text);
                    self.commit_stable();
                }
                StreamDelta::Thinking { text } => {
                    "thinking".clone_into(&mut self.activity);
                    self.thinking.push_str(text);
                }
                StreamDelta::ToolInput { name, .. } => {
                    self.activity = format!("preparing {name}");
                }
            },
            AgentEvent::Message { message } => match message {
                Message::Assistant(a) => {
                    if self.thinking.is_empty() && self.text.is_empty() {
                        // Nothing streamed (a non-streaming reply).
                        let thinking = thinking_of(a);
                        self.fold_thinking(&thinking);
                    }
                    self.commit_all(Some(&a.text()));
                    self.searches(a);
                    self.remember_calls(a);
                    if a.interrupted {
                        let dim = self.theme.dim();
                        self.scrollback
                            .push(Line::from(Span::styled("  ⎿ interrupted", dim)));
                    }
                }
                Message::User(u) => match u.origin {
                    MessageOrigin::ToolResults => self.results(&u.content),
                    MessageOrigin::Person => {
                        // A queued message the loop delivered.
                        let text = u.content.iter().find_map(|b| match b {
                            UserBlock::Text { text } => Some(text.clone()),
                            _ => None,
                        });
                        if let Some(text) = text
                            && let Some(at) = self.queued.iter().position(|q| *q == text)
                        {
                            self.queued.remove(at);
                            let rows = self.user_rows(&text);
                            self.push_block(rows);
                        }
                    }
                    _ => {
                        self.background_results(&u.content);
                        self.results(&u.content);
                    }
                },
                Message::System(s) => self.note(s.level, &s.text),
            },
            AgentEvent::ToolStarted {
                tool_use_id,
                describe,
                name,
            } => {
                self.activity = format!("running {name}");
                self.running.push(Running {
                    id: tool_use_id.clone(),
                    describe: describe.clone(),
                    output: VecDeque::new(),
                });
            }
            AgentEvent::Progress {
                tool_use_id,
                payload,
            } => {
                if let Some(r) = self.running.iter_mut().find(|r| &r.id == tool_use_id) {
                    match payload {
                        ProgressPayload::Output { text, .. } => {
                            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                                r.output.push_back(line.to_owned());
                                if r.output.len() > LIVE_OUTPUT {
                                    r.output.pop_front();
                                }
                            }
                        }
                        ProgressPayload::Status { text } => {
                            r.output.clear();
                            r.output.push_back(text.clone());
                        }
                    }
                }
            }
            AgentEvent::PermissionRequest { .. } => {}
            AgentEvent::PermissionResolved { request_id, .. } => {
                // Answered elsewhere, timed out or cancelled: close it.
                self.asking.retain(|a| match a {
                    Asking::Permission { request_id: r, .. } => r != request_id,
                    Asking::Questions { .. } => true,
                });
                self.track_wait();
            }
            AgentEvent::Compacting { .. } => {
                "compacting the conversation".clone_into(&mut self.activity);
            }
            AgentEvent::Compacted { before, after, .. } => {
                self.note(
                    SystemLevel::Info,
                    &format!("Compacted the conversation: {before} → {after} tokens"),
                );
            }
            AgentEvent::PromptWithdrawn { .. } => {
                let dim = self.theme.dim();
                self.scrollback.push(Line::from(Span::styled(
                    "  ⎿ withdrawn: stopped before any reply",
                    dim,
                )));
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.note(
                    SystemLevel::Warning,
                    &format!(
                        "{reason}; retry {attempt} in {:.1} s",
                        *delay_ms as f64 / 1000.0
                    ),
                );
                "waiting to retry".clone_into(&mut self.activity);
            }
            AgentEvent::Usage { usage, .. } => {
                self.usage.add(usage);
                self.context = usage.input_tokens
                    + usage.cache_read_tokens
                    + usage.cache_write_tokens
                    + usage.output_tokens;
            }
            AgentEvent::Done { reason } => self.done(reason),
        }
    }

    fn done(&mut self, reason: &TerminalReason) {
        self.commit_all(None);
        for r in std::mem::take(&mut self.running) {
            let dim = self.theme.dim();
            self.push_block(vec![Line::from(vec![
                Span::styled("● ", dim),
                Span::styled(r.describe, dim),
            ])]);
        }
        match reason {
            TerminalReason::Completed | TerminalReason::StopHookPrevented => {}
            TerminalReason::Aborted { .. } => {
                let dim = self.theme.dim();
                self.scrollback
                    .push(Line::from(Span::styled("  ⎿ stopped", dim)));
            }
            TerminalReason::MaxTurns => self.note(
                SystemLevel::Warning,
                "Stopped after the maximum number of turns (--max-turns).",
            ),
            TerminalReason::Refusal => {
                self.note(SystemLevel::Warning, "The model declined to answer.");
            }
            TerminalReason::Error { error } => self.note(SystemLevel::Error, &error.message),
        }
        self.busy = false;
        self.activity.clear();
        self.turn_ended = true;
        // Questions of the turn are over (their gate calls ended with it).
        self.asking.clear();
        self.asked_at = None;
        if self.queued.is_empty() {
            self.ring();
        } else {
            for text in std::mem::take(&mut self.queued) {
                let rows = self.user_rows(&text);
                self.push_block(rows);
            }
            self.busy = true;
            self.turn_started = self.now;
            self.effects.push(Effect::SendQueued);
        }
    }

    /// A permission question from the gate; `key` identifies the answer.
    pub fn permission(
        &mut self,
        key: u64,
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
    ) {
        let preview = Arc::new(preview::of(&detail, self.theme));
        self.asking.push_back(Asking::Permission {
            key,
            request_id,
            detail,
            selected: 0,
            preview,
            view: None,
        });
        self.asked();
    }

    /// A question arrived: the conversation takes the keys back to show
    /// it, its waiting time starts, and the bell rings.
    fn asked(&mut self) {
        self.focus = None;
        self.tasks_open = None;
        self.track_wait();
        self.ring();
    }

    /// Questions from AskUser or a plan to approve; `key` identifies the
    /// answers. A plan (the request's context) goes into the scrollback.
    pub fn questions(&mut self, key: u64, request: QuestionRequest) {
        if let Some(context) = &request.context {
            self.markdown_block(context);
        }
        let checked = request.questions.first().map_or(0, |q| q.options.len());
        self.asking.push_back(Asking::Questions {
            key,
            answers: Vec::new(),
            index: 0,
            selected: 0,
            checked: vec![false; checked],
            text: String::new(),
            request,
        });
        self.asked();
    }

    /// `/rewind`'s picker over `points` (oldest first, as the kernel lists
    /// them): the newest message first, each with the files its turn
    /// changed. Choosing one sends `/rewind N`; Esc leaves everything as
    /// it is.
    pub fn rewind_points(&mut self, points: Vec<RewindChoice>) {
        if points.is_empty() {
            self.hint =
                Some("Nothing to rewind to yet: no message of yours in this session.".to_owned());
            return;
        }
        let options = points
            .iter()
            .rev()
            .map(|p| {
                let files = match p.files.as_slice() {
                    [] => "no file changed".to_owned(),
                    [one] => format!("changed {one}"),
                    [first, rest @ ..] => format!(
                        "changed {first} and {}",
                        crate::wrap::plural(rest.len() as u64, "other file", "other files")
                    ),
                };
                let history = if p.in_history {
                    ""
                } else {
                    "; before a compaction: files only"
                };
                QuestionOption {
                    label: format!("{} (message {})", short_title(&p.text), p.number),
                    description: Some(format!("{files}{history}")),
                }
            })
            .collect();
        self.questions(
            REWIND_KEY,
            QuestionRequest {
                tool_use_id: ToolUseId::new("rewind"),
                tool_name: "rewind".to_owned(),
                context: None,
                questions: vec![Question {
                    question: "Rewind files and conversation to just before which message?"
                        .to_owned(),
                    header: Some("rewind".to_owned()),
                    options,
                    multi_select: false,
                }],
            },
        );
    }

    /// `/model`'s picker: the current model, then `models` (id and a
    /// name for people) as the endpoint lists them. Choosing one sends
    /// `/model ID`. Without a list, `/model` goes to the kernel, which
    /// names the current model.
    pub fn model_choices(&mut self, models: Vec<(String, Option<String>)>) {
        let others: Vec<(String, Option<String>)> = models
            .into_iter()
            .filter(|(id, _)| *id != self.model)
            .collect();
        if others.is_empty() {
            self.submit_text("/model");
            return;
        }
        let label = |id: &str, name: Option<&str>| match name {
            Some(name) if name != id => format!("{name} [{id}]"),
            _ => format!("[{id}]"),
        };
        let mut options = vec![QuestionOption {
            label: label(&self.model, None),
            description: Some("the current model".to_owned()),
        }];
        options.extend(others.iter().map(|(id, name)| QuestionOption {
            label: label(id, name.as_deref()),
            description: None,
        }));
        self.questions(
            MODEL_KEY,
            QuestionRequest {
                tool_use_id: ToolUseId::new("model"),
                tool_name: "model".to_owned(),
                context: None,
                questions: vec![Question {
                    question: "Which model should the next requests go to?".to_owned(),
                    header: Some("model".to_owned()),
                    options,
                    multi_select: false,
                }],
            },
        );
    }

    /// The model picker's answer: `/model ID` for the chosen model.
    fn model_chosen(&mut self, outcome: &QuestionOutcome) {
        let chosen = match outcome {
            QuestionOutcome::Answered(answers) => answers
                .first()
                .and_then(|a| a.first())
                .and_then(|label| label.rsplit_once('['))
                .map(|(_, id)| id.trim_end_matches(']').to_owned()),
            _ => None,
        };
        match chosen {
            Some(id) if id != self.model => self.submit_text(&format!("/model {id}")),
            _ => self.hint = Some(format!("Still {}.", self.model)),
        }
    }

    /// The picker's answer: `/rewind N` for the chosen message.
    fn rewind_chosen(&mut self, outcome: &QuestionOutcome) {
        let chosen = match outcome {
            QuestionOutcome::Answered(answers) => answers
                .first()
                .and_then(|a| a.first())
                .and_then(|label| label.rsplit_once("(message "))
                .and_then(|(_, n)| n.trim_end_matches(')').parse::<u32>().ok()),
            _ => None,
        };
        match chosen {
            Some(n) => self.submit_text(&format!("/rewind {n}")),
            None => self.hint = Some("Nothing was rewound.".to_owned()),
        }
    }

    /// Files found for the `@` query `query`, best first.
    pub fn files_found(&mut self, query: &str, files: Vec<String>) {
        if self.files_query.as_deref() == Some(query) {
            self.files = files;
            self.refresh_menu();
        }
    }

    /// Submits `text` as if typed (a prompt given on the command line).
    pub fn submit_text(&mut self, text: &str) {
        self.composer.set(text);
        self.submit();
    }

    fn submit(&mut self) {
        if self.composer.text().trim().is_empty() {
            return;
        }
        if self.busy && !self.composer.images().is_empty() {
            // A queued message reaches the model as text only.
            self.hint = Some(
                "Images go with a new prompt: send this when the turn ends (Esc stops it)."
                    .to_owned(),
            );
            return;
        }
        if self.composer.text().trim() == format!("/{TASKS_COMMAND}") {
            self.composer.clear();
            self.menu = None;
            self.tasks_open = Some(0);
            return;
        }
        // `/model` alone: a picker of the endpoint's models (`/model NAME`
        // goes straight to the kernel).
        if self.composer.text().trim() == "/model" && !self.busy {
            self.composer.clear();
            self.menu = None;
            self.effects.push(Effect::ModelChoices);
            return;
        }
        // `/rewind` alone: a picker of the messages (`/rewind N` goes
        // straight to the kernel).
        if self.composer.text().trim() == "/rewind" && !self.busy {
            self.composer.clear();
            self.menu = None;
            self.effects.push(Effect::RewindPoints);
            return;
        }
        let (text, images) = self.composer.take_message();
        self.menu = None;
        if self.session_title.is_none() && !text.starts_with('/') {
            self.session_title = Some(short_title(&text));
        }
        if self.busy {
            self.queued.push(text.clone());
            self.effects.push(Effect::Queue(text));
            return;
        }
        let rows = self.user_rows(&text);
        self.push_block(rows);
        self.busy = true;
        self.turn_ended = false;
        self.turn_started = self.now;
        "thinking".clone_into(&mut self.activity);
        if images.is_empty() {
            self.effects.push(Effect::Prompt(text));
        } else {
            self.effects.push(Effect::PromptWithImages { text, images });
        }
    }

    /// Seconds since the running turn started.
    pub(crate) fn elapsed_s(&self) -> u64 {
        self.now.saturating_sub(self.turn_started) / 1000
    }

    /// A bracketed paste. A paste that is only paths of image files (a
    /// file dragged onto the terminal) asks the loop to read them
    /// ([`Effect::ReadImages`]); anything else is text.
    pub fn paste(&mut self, text: &str) {
        if let Some(name) = self.focus.clone() {
            // As a terminal sends a paste: line ends as Enter.
            let input = text.replace("\r\n", "\r").replace('\n', "\r").into_bytes();
            self.type_into(name, input);
            return;
        }
        if let Some(Asking::Questions { text: typed, .. }) = self.asking.front_mut() {
            typed.push_str(text);
            return;
        }
        if let Some(paths) = attach::image_paths(text) {
            self.effects.push(Effect::ReadImages {
                pasted: text.to_owned(),
                paths,
            });
            return;
        }
        self.composer.paste(text);
        self.refresh_menu();
    }

    /// What the paths of paste `pasted` turned out to be, in order: each
    /// image is attached at the cursor as `[image: NAME]`; when none is,
    /// the paste goes in as text. A file that is not an image is said in
    /// the hint line.
    pub fn images_read(&mut self, pasted: &str, results: Vec<(String, PastedImage)>) {
        let refused: Vec<String> = results
            .iter()
            .filter_map(|(path, r)| match r {
                PastedImage::Refused(why) => Some(format!("{} {why}", attach::file_name(path))),
                _ => None,
            })
            .collect();
        if let Some(first) = refused.first() {
            self.hint = Some(format!("{first}; it was pasted as text."));
        }
        if !results
            .iter()
            .any(|(_, r)| matches!(r, PastedImage::Image(_)))
        {
            self.composer.paste(pasted);
            self.refresh_menu();
            return;
        }
        for (i, (path, result)) in results.into_iter().enumerate() {
            if i > 0 {
                self.composer.insert(' ');
            }
            match result {
                PastedImage::Image(image) => {
                    self.composer.attach_image(attach::file_name(&path), image);
                }
                PastedImage::Refused(_) | PastedImage::NotAFile => self.composer.insert_str(&path),
            }
        }
        self.refresh_menu();
    }

    /// Takes one key.
    pub fn key(&mut self, key: KeyEvent) {
        self.handle_key(key);
        // An answered question stops the person's time now.
        self.track_wait();
    }

    fn handle_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(name) = self.focus.clone() {
            self.terminal_key(name, key);
            return;
        }
        let is_ctrl_c = ctrl && key.code == KeyCode::Char('c');
        if !is_ctrl_c {
            self.ctrl_c = false;
            if self.hint.is_some() {
                self.hint = None;
            }
        }
        if is_ctrl_c {
            self.ctrl_c_pressed();
            return;
        }
        if !self.asking.is_empty() {
            self.answer_key(key);
            return;
        }
        if ctrl && key.code == KeyCode::Char('t') {
            self.tasks_open = None;
            self.cycle_focus();
            return;
        }
        if self.tasks_open.is_some() {
            self.tasks_key(key);
            return;
        }
        if self.menu.is_some() && self.menu_key(key) {
            return;
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if alt || shift || ctrl => self.composer.insert('\n'),
            KeyCode::Char('j') if ctrl => self.composer.insert('\n'),
            KeyCode::Enter => self.submit(),
            KeyCode::Esc if self.busy => {
                self.effects.push(Effect::Cancel);
                "stopping".clone_into(&mut self.activity);
            }
            KeyCode::Char('d') if ctrl => {
                if self.composer.is_empty() {
                    // What streamed so far stays in the scrollback, even
                    // when the person leaves before the reply ends.
                    if !self.text.is_empty() || !self.thinking.is_empty() {
                        self.commit_all(None);
                    }
                    self.exit = true;
                    self.effects.push(Effect::Exit);
                } else {
                    self.composer.delete();
                }
            }
            KeyCode::BackTab => self.cycle_mode(),
            KeyCode::Tab if shift => self.cycle_mode(),
            KeyCode::Char('a') if ctrl => self.composer.home(),
            KeyCode::Char('e') if ctrl => self.composer.end(),
            KeyCode::Char('u') if ctrl => self.composer.kill_to_start(),
            KeyCode::Char('w') if ctrl => self.composer.delete_word(),
            KeyCode::Backspace if alt => self.composer.delete_word(),
            KeyCode::Char(c) if !ctrl => self.composer.insert(c),
            KeyCode::Backspace => self.composer.backspace(),
            KeyCode::Delete => self.composer.delete(),
            KeyCode::Left => self.composer.left(),
            KeyCode::Right => self.composer.right(),
            KeyCode::Home => self.composer.home(),
            KeyCode::End => self.composer.end(),
            KeyCode::Up => self.composer.up(),
            KeyCode::Down => self.composer.down(),
            _ => {}
        }
        self.refresh_menu();
    }

    fn ctrl_c_pressed(&mut self) {
        if let Some(first) = self.asking.front().cloned() {
            // As Esc on the question, and the turn stops.
            self.reject(&first);
            if self.busy {
                self.effects.push(Effect::Cancel);
            }
            return;
        }
        if self.ctrl_c {
            self.exit = true;
            self.effects.push(Effect::Exit);
            return;
        }
        self.ctrl_c = true;
        self.composer.clear();
        self.menu = None;
        if self.busy {
            self.effects.push(Effect::Cancel);
            "stopping".clone_into(&mut self.activity);
        }
        self.hint = Some("Press Ctrl+C again to exit".to_owned());
    }

    fn cycle_mode(&mut self) {
        let at = self.modes.iter().position(|m| *m == self.mode).unwrap_or(0);
        let next = self.modes[(at + 1) % self.modes.len()];
        self.mode = next;
        self.effects.push(Effect::SetMode(next));
    }

    /// Handles a key meant for the open menu; false when it is not.
    fn menu_key(&mut self, key: KeyEvent) -> bool {
        let Some(menu) = self.menu.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => menu.up(),
            KeyCode::Down => menu.down(),
            KeyCode::Esc => {
                self.menu = None;
                self.menu_dismissed = Some(self.composer.text().to_owned());
            }
            KeyCode::Tab => self.accept_menu(false),
            KeyCode::Enter
                if !key.modifiers.intersects(
                    KeyModifiers::ALT | KeyModifiers::SHIFT | KeyModifiers::CONTROL,
                ) =>
            {
                self.accept_menu(true);
            }
            _ => return false,
        }
        true
    }

    fn accept_menu(&mut self, enter: bool) {
        let Some(menu) = self.menu.take() else { return };
        let Some(entry) = menu.chosen().cloned() else {
            return;
        };
        match menu.kind {
            Kind::Commands => {
                let rest = self
                    .composer
                    .text()
                    .split_once(' ')
                    .map(|(_, r)| r.to_owned())
                    .unwrap_or_default();
                let text = format!("/{} {rest}", entry.name);
                self.composer.set(&text);
                if enter && !entry.takes_arguments {
                    self.submit();
                    return;
                }
            }
            Kind::Files => {
                let path = if entry.name.contains(' ') {
                    format!("@\"{}\" ", entry.name)
                } else {
                    format!("@{} ", entry.name)
                };
                self.composer.replace_token(menu.start, &path);
            }
        }
        self.menu_dismissed = Some(self.composer.text().to_owned());
    }

    /// Opens, updates or closes the menu for the text at the cursor.
    fn refresh_menu(&mut self) {
        let text = self.composer.text();
        if self.menu_dismissed.as_deref() == Some(text) {
            self.menu = None;
            return;
        }
        self.menu_dismissed = None;
        let before = &text[..self.composer.cursor()];
        let previous = self.menu.take();
        let keep = |kind: Kind, entries: &[Entry]| {
            previous
                .as_ref()
                .filter(|m| m.kind == kind)
                .and_then(|m| m.chosen())
                .and_then(|chosen| entries.iter().position(|e| e == chosen))
                .unwrap_or(0)
        };
        if let Some(query) = before.strip_prefix('/')
            && !query.contains(char::is_whitespace)
        {
            let entries = menu::filter(&self.commands, query);
            if !entries.is_empty() {
                let selected = keep(Kind::Commands, &entries);
                self.menu = Some(Menu {
                    kind: Kind::Commands,
                    entries,
                    selected,
                    start: 0,
                });
            }
            return;
        }
        if let Some((start, query)) = self.composer.token('@') {
            let query = query.to_owned();
            if self.files_query.as_deref() != Some(query.as_str()) {
                self.files_query = Some(query.clone());
                self.files.clear();
                self.effects.push(Effect::FindFiles(query));
            }
            let entries: Vec<Entry> = self
                .files
                .iter()
                .map(|f| Entry {
                    name: f.clone(),
                    description: String::new(),
                    takes_arguments: false,
                })
                .collect();
            if !entries.is_empty() {
                let selected = keep(Kind::Files, &entries);
                self.menu = Some(Menu {
                    kind: Kind::Files,
                    entries,
                    selected,
                    start,
                });
            }
        }
    }

    fn reject(&mut self, asking: &Asking) {
        self.asking.pop_front();
        match asking {
            Asking::Permission { key, .. } => self.effects.push(Effect::Permission {
                key: *key,
                outcome: PermissionOutcome::RejectOnce { feedback: None },
            }),
            Asking::Questions { key, .. } if *key == REWIND_KEY => {
                self.rewind_chosen(&QuestionOutcome::Declined);
            }
            Asking::Questions { key, .. } if *key == MODEL_KEY => {
                self.model_chosen(&QuestionOutcome::Declined);
            }
            Asking::Questions { key, .. } => self.effects.push(Effect::Questions {
                key: *key,
                outcome: QuestionOutcome::Declined,
            }),
        }
    }

    fn answer_key(&mut self, key: KeyEvent) {
        if self.view_key(key) {
            return;
        }
        let Some(first) = self.asking.front().cloned() else {
            return;
        };
        if key.code == KeyCode::Esc {
            self.reject(&first);
            return;
        }
        match first {
            Asking::Permission {
                key: id,
                detail,
                selected,
                ..
            } => {
                let options = choices(&detail);
                let pick = match key.code {
                    KeyCode::Char(preview::VIEW_KEY) => {
                        if let Some(Asking::Permission { view, preview, .. }) =
                            self.asking.front_mut()
                            && !preview.is_empty()
                        {
                            *view = Some(0);
                        }
                        None
                    }
                    KeyCode::Char(c) => options.iter().position(|o| o.key() == c).or_else(|| {
                        c.to_digit(10)
                            .and_then(|d| usize::try_from(d).ok())
                            .filter(|d| (1..=options.len()).contains(d))
                            .map(|d| d - 1)
                    }),
                    KeyCode::Enter => Some(selected),
                    KeyCode::Up | KeyCode::Down => {
                        let n = options.len();
                        let next = if key.code == KeyCode::Up {
                            (selected + n - 1) % n
                        } else {
                            (selected + 1) % n
                        };
                        if let Some(Asking::Permission { selected, .. }) = self.asking.front_mut() {
                            *selected = next;
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(i) = pick {
                    let outcome = match &options[i] {
                        Choice::Once => PermissionOutcome::AllowOnce,
                        Choice::Always(rule) => {
                            PermissionOutcome::AllowAlways { rule: rule.clone() }
                        }
                        Choice::Reject => PermissionOutcome::RejectOnce { feedback: None },
                    };
                    self.asking.pop_front();
                    self.effects.push(Effect::Permission { key: id, outcome });
                }
            }
            Asking::Questions { .. } => self.question_key(key),
        }
    }

    /// A key while the whole preview is shown: it scrolls, and Esc, `q`
    /// or `v` go back to the question; the answer keys wait for it. False
    /// when no preview is shown whole.
    fn view_key(&mut self, key: KeyEvent) -> bool {
        let rows = match self.asking.front() {
            Some(Asking::Permission {
                preview,
                view: Some(_),
                ..
            }) => preview::view_rows(preview, usize::from(self.width), &[Span::raw("│ ")]).len(),
            _ => return false,
        };
        let page = self.page();
        let last = rows.saturating_sub(page);
        let Some(Asking::Permission {
            view: Some(top), ..
        }) = self.asking.front_mut()
        else {
            return false;
        };
        let at = (*top).min(last);
        let to = match key.code {
            KeyCode::Up | KeyCode::Char('k') => at.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Enter => at + 1,
            KeyCode::PageUp | KeyCode::Char('b') => at.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ' | 'f') => at + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            KeyCode::Esc | KeyCode::Char('q' | preview::VIEW_KEY) => {
                if let Some(Asking::Permission { view, .. }) = self.asking.front_mut() {
                    *view = None;
                }
                return true;
            }
            _ => at,
        };
        *top = to.min(last);
        true
    }

    fn question_key(&mut self, key: KeyEvent) {
        let Some(Asking::Questions {
            key: id,
            request,
            index,
            answers,
            selected,
            checked,
            text,
        }) = self.asking.front_mut()
        else {
            return;
        };
        let Some(question) = request.questions.get(*index) else {
            return;
        };
        let n = question.options.len();
        let mut answer: Option<Vec<String>> = None;
        if n == 0 {
            match key.code {
                KeyCode::Enter => answer = Some(vec![std::mem::take(text)]),
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
        } else {
            match key.code {
                KeyCode::Up => *selected = (*selected + n - 1) % n,
                KeyCode::Down => *selected = (*selected + 1) % n,
                KeyCode::Char(' ') if question.multi_select => {
                    if let Some(c) = checked.get_mut(*selected) {
                        *c = !*c;
                    }
                }
                KeyCode::Char(c) if c.is_ascii_digit() => {
                    let d = c
                        .to_digit(10)
                        .and_then(|d| usize::try_from(d).ok())
                        .unwrap_or(0);
                    if (1..=n).contains(&d) {
                        if question.multi_select {
                            if let Some(c) = checked.get_mut(d - 1) {
                                *c = !*c;
                            }
                        } else {
                            answer = Some(vec![question.options[d - 1].label.clone()]);
                        }
                    }
                }
                KeyCode::Enter => {
                    let chosen: Vec<String> = if question.multi_select && checked.iter().any(|c| *c)
                    {
                        question
                            .options
                            .iter()
                            .zip(checked.iter())
                            .filter(|(_, c)| **c)
                            .map(|(o, _)| o.label.clone())
                            .collect()
                    } else {
                        vec![question.options[*selected].label.clone()]
                    };
                    answer = Some(chosen);
                }
                _ => {}
            }
        }
        let Some(answer) = answer else { return };
        let asked = question.question.clone();
        answers.push(answer.clone());
        *index += 1;
        *selected = 0;
        text.clear();
        let next_options = request.questions.get(*index).map(|q| q.options.len());
        let id = *id;
        let done = next_options.is_none();
        if let Some(n) = next_options {
            *checked = vec![false; n];
        }
        let all = if done {
            Some(std::mem::take(answers))
        } else {
            None
        };
        let dim = self.theme.dim();
        let shown = if answer.iter().all(String::is_empty) {
            "(no answer)".to_owned()
        } else {
            answer.join(", ")
        };
        let rows = wrap(
            &Line::from(vec![
                Span::styled(format!("{asked} "), dim),
                Span::styled(shown, self.theme.user()),
            ]),
            usize::from(self.width),
            &[Span::styled("? ", self.theme.question())],
            &[Span::raw("  ")],
        );
        self.push_block(rows);
        if let Some(all) = all {
            self.asking.pop_front();
            let outcome = QuestionOutcome::Answered(all);
            if id == REWIND_KEY {
                self.rewind_chosen(&outcome);
            } else if id == MODEL_KEY {
                self.model_chosen(&outcome);
            } else {
                self.effects.push(Effect::Questions { key: id, outcome });
            }
        }
    }

    /// The rows the composer's `@`/`/` menu offers, for tests.
    pub fn menu_entries(&self) -> Vec<String> {
        self.menu
            .as_ref()
            .map(|m| m.entries.iter().map(|e| e.name.clone()).collect())
            .unwrap_or_default()
    }
}

fn thinking_of(a: &riot_protocol::AssistantMessage) -> String {
    a.content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
