//! The live status line of `riot exec` on a terminal: a spinner, what is
//! happening ("thinking", "running `cargo test`") and for how long, redrawn
//! in place on stderr and erased before any other line is written there.
//!
//! Nothing of it is written when stderr is not a terminal (CI logs, pipes):
//! [`StatusLine::line`] then just writes the line. Time comes from the
//! injected [`Clock`] and "is a terminal" is a constructor argument, so the
//! drawing is tested with a `FixedClock` and a byte buffer.

use std::io::Write;
use std::sync::Arc;

use riot_protocol::Clock;

/// The spinner's frames, one per [`FRAME_MS`].
pub const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// How long one spinner frame shows; also how often the line is redrawn.
pub const FRAME_MS: u64 = 100;

/// Carriage return, then erase to the end of the line (ECMA-48 `EL`).
pub const ERASE: &str = "\r\x1b[K";

/// Where the status line and the lines above it are written.
pub struct StatusLine {
    out: Box<dyn Write + Send>,
    /// stderr is a terminal: draw the line. Otherwise only plain lines.
    live: bool,
    /// Columns of the terminal; the line is cut to fit one row.
    width: usize,
    clock: Arc<dyn Clock>,
    /// What is happening and since when (clock milliseconds).
    activity: Option<(String, u64)>,
    /// The line is on the screen and must be erased before other output.
    drawn: bool,
}

impl std::fmt::Debug for StatusLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusLine")
            .field("live", &self.live)
            .field("width", &self.width)
            .field("activity", &self.activity)
            .field("drawn", &self.drawn)
            .finish_non_exhaustive()
    }
}

impl StatusLine {
    /// `live`: whether `out` is a terminal; `width`: its columns.
    pub fn new(
        out: Box<dyn Write + Send>,
        live: bool,
        width: usize,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            out,
            live,
            width: width.max(20),
            clock,
            activity: None,
            drawn: false,
        }
    }

    /// Whether the status line is drawn at all.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Says what is happening now. The elapsed time starts over only when
    /// the activity changes.
    pub fn set_activity(&mut self, label: &str) {
        if self.activity.as_ref().is_some_and(|(l, _)| l == label) {
            return;
        }
        self.activity = Some((label.to_owned(), self.clock.now_ms()));
        self.draw();
    }

    /// Nothing is happening any more: the line is erased and stays so.
    pub fn finish(&mut self) {
        self.activity = None;
        self.erase();
        let _ = self.out.flush();
    }

    /// Redraws the line (the spinner moves, the time goes up).
    pub fn tick(&mut self) {
        self.draw();
    }

    /// Writes one line of normal output above the status line.
    pub fn line(&mut self, text: &str) {
        let mut bytes = String::new();
        if self.drawn {
            bytes.push_str(ERASE);
            self.drawn = false;
        }
        bytes.push_str(text);
        bytes.push('\n');
        let _ = self.out.write_all(bytes.as_bytes());
        self.draw();
        let _ = self.out.flush();
    }

    /// The status text for now, without control characters; `None` when
    /// nothing is happening.
    pub fn render(&self) -> Option<String> {
        let (label, since) = self.activity.as_ref()?;
        let elapsed = self.clock.now_ms().saturating_sub(*since);
        let frame = FRAMES[usize::try_from(elapsed / FRAME_MS).unwrap_or(0) % FRAMES.len()];
        let time = format_elapsed(elapsed);
        // One row at most: a wrapped line could not be erased with `\r`.
        let room = self.width - 1;
        let fixed = 2 + 3 + time.chars().count();
        let label = cut(label, room.saturating_sub(fixed));
        Some(format!("{frame} {label} · {time}"))
    }

    fn draw(&mut self) {
        if !self.live {
            return;
        }
        let Some(text) = self.render() else {
            self.erase();
            return;
        };
        let _ = self.out.write_all(format!("{ERASE}{text}").as_bytes());
        let _ = self.out.flush();
        self.drawn = true;
    }

    fn erase(&mut self) {
        if self.drawn {
            let _ = self.out.write_all(ERASE.as_bytes());
            self.drawn = false;
        }
    }
}

/// `7s`, `1m 05s`, `1h 02m`.
pub fn format_elapsed(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `text` cut to `max` characters, ending in `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use riot_protocol::FixedClock;

    use super::*;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn take(&self) -> String {
            String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
        }
    }

    fn status(live: bool, width: usize) -> (StatusLine, Shared, FixedClock) {
        let out = Shared::default();
        let clock = FixedClock::new();
        let line = StatusLine::new(Box::new(out.clone()), live, width, Arc::new(clock.clone()));
        (line, out, clock)
    }

    #[test]
    fn the_line_shows_a_spinner_frame_the_activity_and_its_time() {
        let (mut s, out, clock) = status(true, 80);
        s.set_activity("thinking");
        assert_eq!(out.take(), "\r\x1b[K⠋ thinking · 0s");
        clock.advance(1_250);
        s.tick();
        // 1250 ms is the 13th frame: 12 % 10 = 2.
        assert_eq!(out.take(), "\r\x1b[K⠹ thinking · 1s");
        // The same activity again keeps its start time.
        s.set_activity("thinking");
        assert_eq!(out.take(), "");
        s.set_activity("running `sleep 1`");
        assert_eq!(out.take(), "\r\x1b[K⠋ running `sleep 1` · 0s");
        clock.advance(65_000);
        s.tick();
        assert_eq!(out.take(), "\r\x1b[K⠋ running `sleep 1` · 1m 05s");
    }

    #[test]
    fn a_normal_line_erases_the_status_first_and_redraws_it_below() {
        let (mut s, out, _clock) = status(true, 80);
        s.set_activity("thinking");
        out.take();
        s.line("• Read notes.txt");
        assert_eq!(
            out.take(),
            "\r\x1b[K• Read notes.txt\n\r\x1b[K⠋ thinking · 0s"
        );
        s.finish();
        assert_eq!(out.take(), "\r\x1b[K");
        // Once finished, lines are plain and nothing is redrawn.
        s.line("done");
        s.tick();
        assert_eq!(out.take(), "done\n");
    }

    #[test]
    fn nothing_but_the_lines_when_stderr_is_not_a_terminal() {
        let (mut s, out, clock) = status(false, 80);
        s.set_activity("thinking");
        clock.advance(500);
        s.tick();
        s.line("• Read notes.txt");
        s.set_activity("running `cargo test`");
        s.finish();
        assert_eq!(out.take(), "• Read notes.txt\n");
    }

    #[test]
    fn the_line_fits_one_row() {
        let (mut s, out, _clock) = status(true, 30);
        s.set_activity("running `cargo test --workspace --all-features`");
        let shown = out.take();
        let text = shown.strip_prefix(ERASE).unwrap();
        assert_eq!(text, "⠋ running `cargo test -… · 0s");
        assert_eq!(text.chars().count(), 29);
    }

    #[test]
    fn elapsed_times_read_naturally() {
        assert_eq!(format_elapsed(999), "0s");
        assert_eq!(format_elapsed(59_999), "59s");
        assert_eq!(format_elapsed(60_000), "1m 00s");
        assert_eq!(format_elapsed(3_725_000), "1h 02m");
    }
}
