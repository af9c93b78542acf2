//! A terminal's screen as the faces and the model see it: the rows that
//! scroll off, the screen updates, and the view that takes the new output.

use riot_protocol::{TerminalUpdate, TerminalView};

use super::{Core, State, lock};

/// Collects the rows that scroll off the top of the main screen, for the
/// faces' scrollback (taken with each screen update).
#[derive(Debug, Default)]
pub(super) struct Scrolled {
    rows: Vec<String>,
}

/// Rows kept between two screen updates at most (a flood of output keeps
/// its latest rows).
const SCROLLED_KEEP: usize = 2_000;

impl vt100::Callbacks for Scrolled {
    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        let mut formatted = String::new();
        let mut state = vt100::capture::BasicFormattedCaptureState::new();
        if contents
            .write_formatted_basic(&mut formatted, &mut state)
            .is_err()
        {
            return;
        }
        let row: String = vt100::capture::basic_formatted_to_plain(&formatted).collect();
        self.rows.push(row.trim_end().to_owned());
        if self.rows.len() > SCROLLED_KEEP {
            let extra = self.rows.len() - SCROLLED_KEEP;
            self.rows.drain(..extra);
        }
    }
}

pub(super) fn screen_rows(screen: &vt100::Screen) -> Vec<String> {
    let (_, cols) = screen.size();
    screen
        .rows(0, cols.get())
        .map(|r| r.trim_end().to_owned())
        .collect()
}

/// The screen now, with the rows that scrolled off since the last one
/// (which it takes: every face hears of them once).
pub(super) fn screen_update(name: &str, state: &mut State) -> TerminalUpdate {
    let scrolled = std::mem::take(&mut state.screen.callbacks_mut().rows);
    screen_with(name, state, scrolled)
}

/// The screen now, for a face that starts watching.
pub(super) fn screen_now(name: &str, state: &State) -> TerminalUpdate {
    screen_with(name, state, Vec::new())
}

fn screen_with(name: &str, state: &State, scrolled: Vec<String>) -> TerminalUpdate {
    let screen = state.screen.screen();
    let (cursor_row, cursor_col) = screen.cursor_position();
    TerminalUpdate::Screen {
        name: name.to_owned(),
        rows: screen_rows(screen),
        cursor_row,
        cursor_col,
        full_screen: screen.alternate_screen(),
        scrolled,
    }
}

/// The view, consuming the new output and what the person typed.
pub(super) fn take_view(core: &Core, command: &str) -> TerminalView {
    let mut state = lock(&core.state);
    let screen = state.screen.screen();
    let mut rows = screen_rows(screen);
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    let full_screen = screen.alternate_screen();
    let cursor = screen.cursor_position();
    let text = std::mem::take(&mut state.text);
    TerminalView {
        name: core.name.clone(),
        command: command.to_owned(),
        screen: rows.join("\n"),
        cursor,
        full_screen,
        output: if full_screen {
            String::new()
        } else {
            text.text
        },
        omitted_bytes: text.omitted,
        person_typed: std::mem::take(&mut state.typed),
        exit: state.exit,
    }
}
