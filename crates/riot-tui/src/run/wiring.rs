//! What the loop does for the app's effects ([`Wiring`]): turns started
//! or queued, the session's questions shown ([`ask`]) and answered, files and
//! images looked up by the host, terminals written to and fitted, the
//! bell and the terminal's title.

use std::io::Write;
use std::sync::Arc;

use crossterm::terminal;
use riot_kernel::{
    Answer, KernelError, Question, QuestionAsked, QuestionId, SessionHandle, Stopper, Turn,
};
use riot_protocol::{
    AgentError, AgentEvent, CancelReason, ErrorKind, Message, SystemLevel, TerminalReason,
    UserBlock,
};
use tokio::sync::mpsc;

use super::Host;
use super::backend::Term;
use crate::app::{App, Effect};
use crate::attach::PastedImage;

/// Files offered for an `@` query.
const FILES_SHOWN: usize = 20;

/// Images read from the paths a paste named, for the pasted text.
pub(super) type ReadImages = (String, Vec<(String, PastedImage)>);

/// What the app's effects act on: the session, where their results come
/// back to the loop, and the running turn.
pub(super) struct Wiring<'a> {
    pub(super) handle: &'a SessionHandle,
    pub(super) host: &'a Arc<dyn Host>,
    pub(super) images: &'a mpsc::UnboundedSender<ReadImages>,
    pub(super) files: &'a mpsc::UnboundedSender<(String, Vec<String>)>,
    pub(super) writes: &'a mpsc::UnboundedSender<(String, Vec<u8>)>,
    pub(super) turn: &'a mut Option<Turn>,
}

impl Wiring<'_> {
    /// Does what one effect of the app asks.
    pub(super) async fn apply(
        self,
        effect: Effect,
        app: &mut App,
        terminal: &mut Term,
    ) -> std::io::Result<()> {
        match effect {
            Effect::Prompt(text) => *self.turn = start(self.handle, app, &text, Vec::new()),
            Effect::PromptWithImages { text, images } => {
                *self.turn = start(self.handle, app, &text, images);
            }
            Effect::ReadImages { pasted, paths } => {
                let host = Arc::clone(self.host);
                let tx = self.images.clone();
                tokio::spawn(async move {
                    let mut results = Vec::with_capacity(paths.len());
                    for path in paths {
                        let image = host.image(&path).await;
                        results.push((path, image));
                    }
                    let _ = tx.send((pasted, results));
                });
            }
            Effect::Queue(text) => {
                self.handle.queue(&text);
            }
            Effect::SendQueued => {
                let waiting = take_queued(self.handle);
                if waiting.is_empty() {
                    app.event(&AgentEvent::Done {
                        reason: TerminalReason::Completed,
                    });
                } else {
                    *self.turn = start(self.handle, app, &waiting.join("\n\n"), Vec::new());
                }
            }
            Effect::Cancel => {
                self.handle.cancel(CancelReason::User);
            }
            Effect::SetMode(mode) => {
                if let Err(e) = self.handle.set_mode(mode).await {
                    app.note(SystemLevel::Error, &e.to_string());
                }
            }
            Effect::Permission { key, outcome } => {
                answer(self.handle, key, Answer::Permission(outcome));
            }
            Effect::Questions { key, outcome } => {
                answer(self.handle, key, Answer::Questions(outcome));
            }
            Effect::FindFiles(query) => {
                let host = Arc::clone(self.host);
                let tx = self.files.clone();
                tokio::spawn(async move {
                    let files = host.files(&query, FILES_SHOWN).await;
                    let _ = tx.send((query, files));
                });
            }
            Effect::TerminalWrite { name, input } => {
                let _ = self.writes.send((name, input));
            }
            Effect::RewindPoints => match self.handle.rewind_points().await {
                Ok(points) => app.rewind_points(
                    points
                        .into_iter()
                        .map(|p| crate::app::RewindChoice {
                            number: p.number,
                            text: p.text,
                            files: p.files,
                            in_history: p.in_history,
                        })
                        .collect(),
                ),
                Err(e) => app.note(SystemLevel::Warning, &format!("/rewind: {e}")),
            },
            Effect::TerminalFit(name) => fit_terminal(self.handle, app, &name).await?,
            Effect::ModelChoices => {
                let listed = self.handle.listed_models().await;
                app.model_choices(
                    listed
                        .iter()
                        .map(|m| (m.id.clone(), m.display_name.clone()))
                        .collect(),
                );
            }
            Effect::StopTask(id) => {
                self.handle.stop_task(&id, Stopper::Person);
                app.background(self.handle.tasks());
            }
            Effect::Bell => {
                let out = &mut terminal.backend_mut().inner;
                out.write_all(b"\x07")?;
                Write::flush(out)?;
            }
            Effect::Title(title) => {
                let out = &mut terminal.backend_mut().inner;
                // OSC 0 (icon name and window title), ended by ST.
                write!(out, "\x1b]0;{title}\x1b\\")?;
                Write::flush(out)?;
            }
            Effect::Exit => {}
        }
        Ok(())
    }
}

/// Puts one of the session's questions to the app, keyed by its id.
pub(super) fn ask(asked: QuestionAsked, app: &mut App) {
    match asked.question {
        Question::Permission { request_id, detail } => {
            app.permission(asked.id.0, request_id, detail)
        }
        Question::Questions(request) => app.questions(asked.id.0, request),
    }
}

/// Gives the person's answer to the session's question `key`. One the
/// session gave up on meanwhile (timed out, its turn stopped) is left:
/// the turn already said so.
fn answer(handle: &SessionHandle, key: u64, answer: Answer) {
    if let Err(e) = handle.answer(QuestionId(key), answer) {
        tracing::debug!(error = %e, "an answer came too late");
    }
}

/// The text of each message queued while a turn ran, taken from the
/// session.
fn take_queued(handle: &SessionHandle) -> Vec<String> {
    handle
        .take_queued()
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => u.content.iter().find_map(|b| match b {
                UserBlock::Text { text } => Some(text.clone()),
                _ => None,
            }),
            _ => None,
        })
        .collect()
}

/// Resizes the terminal `name` to the screen's width and the pane's
/// height; the app hints how it went.
async fn fit_terminal(handle: &SessionHandle, app: &mut App, name: &str) -> std::io::Result<()> {
    // The pane's rows but its header and its keys line.
    let (cols, rows) = terminal::size()?;
    let size = riot_protocol::TerminalSize {
        rows: rows.saturating_sub(2),
        cols,
    };
    match handle.resize_terminal(name, size).await {
        Ok(set) => app.hint(format!(
            "{name} is now {}×{}: its program was told.",
            set.cols, set.rows
        )),
        Err(e) => app.hint(format!("{name} could not be resized: {e}")),
    }
    Ok(())
}

/// Starts a turn for `text` with `images` after it; a turn that is
/// already running gets the text queued instead (and the images are
/// said to be left out).
fn start(
    handle: &SessionHandle,
    app: &mut App,
    text: &str,
    images: Vec<riot_protocol::ImageSource>,
) -> Option<Turn> {
    let attached = images.len();
    match handle.prompt_with_images(text, images) {
        Ok(turn) => Some(turn),
        Err(KernelError::Busy) => {
            handle.queue(text);
            if attached > 0 {
                app.note(
                    SystemLevel::Warning,
                    "A turn was still running: the message was queued without its images; paste them again.",
                );
            }
            None
        }
        Err(e) => {
            app.event(&AgentEvent::Done {
                reason: TerminalReason::Error {
                    error: AgentError {
                        kind: ErrorKind::Other,
                        message: e.to_string(),
                    },
                },
            });
            None
        }
    }
}
