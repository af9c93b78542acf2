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
use riot_config::notifications::NotificationSettings;
use riot_kernel::background::{TaskState, TaskSummary};
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

mod asking;
mod keys;
mod reply;

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
