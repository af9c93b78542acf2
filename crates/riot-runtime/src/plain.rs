//! Output as the person saw it on a screen, for the model: escape
//! sequences dropped, carriage returns and erases honoured. The Terminal
//! tool reads its terminals through [`PlainText`]; captured process output
//! (Bash's) goes through [`plain_text`].

/// `raw` as printed text (see [`PlainText`]).
pub(crate) fn plain_text(raw: &str) -> String {
    if !raw.bytes().any(|b| b == 0x1b || b == b'\r' || b == 0x08) {
        return raw.to_owned();
    }
    let mut parser = vte::Parser::new();
    let mut text = PlainText::default();
    parser.advance(&mut text, raw.as_bytes());
    text.text
}

/// The printed text of a terminal's output: characters and line breaks,
/// with every escape sequence dropped. A carriage return without a line
/// feed goes back to the start of the line, and what follows overwrites
/// it as on a screen: a progress bar redrawn a thousand times is one
/// line, not a thousand run together.
#[derive(Debug, Default)]
pub(crate) struct PlainText {
    pub(crate) text: String,
    pub(crate) omitted: u64,
    /// After a carriage return: where in `text` the next character goes,
    /// replacing the one there; `None` appends.
    overwrite: Option<usize>,
}

impl PlainText {
    /// Keeps at most `keep` bytes (at least half of it after a cut), at a
    /// character boundary.
    pub(crate) fn cap(&mut self, keep: usize) {
        if self.text.len() <= keep {
            return;
        }
        let mut cut = self.text.len() - keep / 2;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.omitted += cut as u64;
        self.text.drain(..cut);
        self.overwrite = self.overwrite.map(|at| at.saturating_sub(cut));
    }

    /// Writes `c` at the cursor: over the character there after a
    /// carriage return, else at the end.
    fn put(&mut self, c: char) {
        match self.overwrite {
            Some(at) if at < self.text.len() && !self.text[at..].starts_with('\n') => {
                let old = self.text[at..].chars().next().map_or(0, char::len_utf8);
                let mut buf = [0u8; 4];
                self.text
                    .replace_range(at..at + old, c.encode_utf8(&mut buf));
                let next = at + c.len_utf8();
                self.overwrite = (next < self.text.len()).then_some(next);
            }
            _ => {
                self.overwrite = None;
                self.text.push(c);
            }
        }
    }
}

impl vte::Perform for PlainText {
    fn print(&mut self, c: char) {
        self.put(c);
    }

    /// Erase in line (`ESC [ K`): what a redrawn line clears before it is
    /// written again (cargo's progress bar gives way to `Compiling …`
    /// so): from the cursor to the end (0), or the whole line (2).
    fn csi_dispatch(
        &mut self,
        params: &vte::Params,
        intermediates: &[u8],
        _ignore: bool,
        action: char,
    ) {
        if action != 'K' || !intermediates.is_empty() {
            return;
        }
        let mode = params.iter().next().and_then(|p| p.first()).copied();
        let line = self.text.rfind('\n').map_or(0, |i| i + 1);
        match mode.unwrap_or(0) {
            0 => {
                if let Some(at) = self.overwrite.take() {
                    self.text.truncate(at);
                }
            }
            2 => {
                self.text.truncate(line);
                self.overwrite = None;
            }
            _ => {}
        }
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            b'\n' => {
                self.overwrite = None;
                self.text.push('\n');
            }
            b'\r' => {
                let start = self.text.rfind('\n').map_or(0, |i| i + 1);
                self.overwrite = (start < self.text.len()).then_some(start);
            }
            b'\t' => self.put('\t'),
            // Backspace: over text being overwritten it moves back along
            // the line; at the end it takes the last character back.
            0x08 => match self.overwrite {
                Some(at) => {
                    let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
                    if let Some((back, _)) = self.text[start..at].char_indices().next_back() {
                        self.overwrite = Some(start + back);
                    }
                }
                None if !self.text.ends_with('\n') => {
                    self.text.pop();
                }
                None => {}
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn colours_and_progress_redraws_leave_only_what_was_left_on_screen() {
        assert_eq!(
            plain_text("\x1b[1m\x1b[32m   Compiling\x1b[0m riot v0.1.0\n"),
            "   Compiling riot v0.1.0\n"
        );
        assert_eq!(plain_text(" 10%\r 55%\r100%\nok\r\n"), "100%\nok\n");
        assert_eq!(
            plain_text("plain text\twith a tab\n"),
            "plain text\twith a tab\n"
        );
        assert_eq!(plain_text("naïve ✓\n"), "naïve ✓\n");
    }
}
