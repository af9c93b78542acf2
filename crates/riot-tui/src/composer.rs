//! The composer: the text being typed, its cursor, the history of sent
//! messages, large pastes shown collapsed (`[Pasted text #1 +40
//! lines]`) and sent whole, and attached images shown as `[image:
//! name.png]` and sent with the message.

use riot_protocol::ImageSource;
use unicode_width::UnicodeWidthChar;

/// A paste longer than this many lines is shown collapsed.
pub const PASTE_LINES: usize = 5;
/// …or longer than this many characters.
pub const PASTE_CHARS: usize = 800;

/// The text being typed.
#[derive(Debug, Clone, Default)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor in `text`, on a character boundary.
    cursor: usize,
    /// Sent messages, oldest first.
    history: Vec<String>,
    /// Which history entry is shown (`None`: the draft).
    browsing: Option<usize>,
    draft: String,
    /// Collapsed pastes: the placeholder and what it stands for.
    pastes: Vec<(String, String)>,
    /// Attached images: the placeholder and the image.
    images: Vec<(String, ImageSource)>,
}

impl Composer {
    /// An empty composer with earlier messages to go back to with Up.
    pub fn with_history(history: Vec<String>) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    /// The text as shown (pastes collapsed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Empties the composer (pastes and images too).
    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.browsing = None;
        self.pastes.clear();
        self.images.clear();
    }

    /// Inserts `[image: NAME]` at the cursor for an attached image (`NAME
    /// #2` for a second image of the same name); it is sent with the
    /// message while its placeholder stays in the text.
    pub fn attach_image(&mut self, name: &str, image: ImageSource) {
        let same = self
            .images
            .iter()
            .filter(|(p, _)| {
                p == &format!("[image: {name}]") || p.starts_with(&format!("[image: {name} #"))
            })
            .count();
        let placeholder = if same == 0 {
            format!("[image: {name}]")
        } else {
            format!("[image: {name} #{}]", same + 1)
        };
        self.insert_str(&placeholder);
        self.images.push((placeholder, image));
    }

    /// The images whose placeholders are in the text, in the text's order.
    pub fn images(&self) -> Vec<&ImageSource> {
        let mut found: Vec<(usize, &ImageSource)> = self
            .images
            .iter()
            .filter_map(|(p, image)| self.text.find(p.as_str()).map(|at| (at, image)))
            .collect();
        found.sort_by_key(|(at, _)| *at);
        found.into_iter().map(|(_, image)| image).collect()
    }

    /// The text to send (pastes expanded, image placeholders kept) and the
    /// images still in it; empties the composer and adds the text to the
    /// history.
    pub fn take_message(&mut self) -> (String, Vec<ImageSource>) {
        let images = self.images().into_iter().cloned().collect();
        (self.take(), images)
    }

    /// The text to send, pastes expanded; empties the composer and adds it
    /// to the history.
    pub fn take(&mut self) -> String {
        let shown = std::mem::take(&mut self.text);
        let mut full = shown.clone();
        for (placeholder, content) in &self.pastes {
            full = full.replacen(placeholder, content, 1);
        }
        if !shown.trim().is_empty() && self.history.last() != Some(&shown) {
            self.history.push(shown);
        }
        self.clear();
        full
    }

    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// A bracketed paste: inserted as is when short, else as a placeholder.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines > PASTE_LINES || text.chars().count() > PASTE_CHARS {
            let placeholder = format!("[Pasted text #{} +{lines} lines]", self.pastes.len() + 1);
            self.insert_str(&placeholder);
            self.pastes.push((placeholder, text));
        } else {
            self.insert_str(&text);
        }
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            // A collapsed paste or an image goes as a whole.
            if c == ']'
                && let Some(p) = self
                    .pastes
                    .iter()
                    .map(|(p, _)| p)
                    .chain(self.images.iter().map(|(p, _)| p))
                    .find(|p| self.text[..self.cursor].ends_with(p.as_str()))
            {
                let len = p.len();
                self.text.replace_range(self.cursor - len..self.cursor, "");
                self.cursor -= len;
                return;
            }
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Ctrl+U: deletes from the start of the line to the cursor.
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl+W: deletes the word before the cursor.
    pub fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let start = trimmed.rfind([' ', '\t', '\n']).map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Whether the cursor is on the first line (Up goes to history).
    pub fn on_first_line(&self) -> bool {
        !self.text[..self.cursor].contains('\n')
    }

    /// Whether the cursor is on the last line (Down goes to history).
    pub fn on_last_line(&self) -> bool {
        !self.text[self.cursor..].contains('\n')
    }

    /// Up: the line above, or the previous history entry.
    pub fn up(&mut self) {
        if !self.on_first_line() {
            let col = self.text[self.line_start()..self.cursor].chars().count();
            let prev_end = self.line_start() - 1;
            let prev_start = self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
            self.cursor = column(&self.text, prev_start, prev_end, col);
            return;
        }
        let next = match self.browsing {
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text.clone();
                self.history.len() - 1
            }
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.browsing = Some(next);
        self.text = self.history[next].clone();
        self.cursor = self.text.len();
    }

    /// Down: the line below, or the next history entry (then the draft).
    pub fn down(&mut self) {
        if !self.on_last_line() {
            let col = self.text[self.line_start()..self.cursor].chars().count();
            let next_start = self.line_end() + 1;
            let next_end = self.text[next_start..]
                .find('\n')
                .map_or(self.text.len(), |i| next_start + i);
            self.cursor = column(&self.text, next_start, next_end, col);
            return;
        }
        match self.browsing {
            None => {}
            Some(i) if i + 1 < self.history.len() => {
                self.browsing = Some(i + 1);
                self.text = self.history[i + 1].clone();
                self.cursor = self.text.len();
            }
            Some(_) => {
                self.browsing = None;
                self.text = std::mem::take(&mut self.draft);
                self.cursor = self.text.len();
            }
        }
    }

    /// The word being typed at the cursor when it starts with `sigil`
    /// (`@src/ma`): its byte offset and text without the sigil.
    pub fn token(&self, sigil: char) -> Option<(usize, &str)> {
        let before = &self.text[..self.cursor];
        let start = before.rfind([' ', '\n', '\t']).map_or(0, |i| i + 1);
        let word = &before[start..];
        word.strip_prefix(sigil).map(|rest| (start, rest))
    }

    /// Replaces the word at the cursor that starts at `start` with `with`.
    pub fn replace_token(&mut self, start: usize, with: &str) {
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }

    /// The rows of the composer at `width` columns (cut character by
    /// character) and the cursor's row and column in them.
    pub fn layout(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(2);
        let mut rows = vec![String::new()];
        let mut col = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.text.char_indices() {
            if i == self.cursor {
                cursor = (rows.len() - 1, col);
            }
            if c == '\n' {
                rows.push(String::new());
                col = 0;
                continue;
            }
            let w = c.width().unwrap_or(0);
            if col + w > width {
                rows.push(String::new());
                col = 0;
            }
            if let Some(row) = rows.last_mut() {
                row.push(c);
            }
            col += w;
        }
        if self.cursor >= self.text.len() {
            if col >= width {
                rows.push(String::new());
                col = 0;
            }
            cursor = (rows.len() - 1, col);
        }
        (rows, cursor)
    }
}

/// The byte offset of character column `col` in `text[start..end]`.
fn column(text: &str, start: usize, end: usize, col: usize) -> usize {
    text[start..end]
        .char_indices()
        .nth(col)
        .map_or(end, |(i, _)| start + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_moving_and_deleting() {
        let mut c = Composer::default();
        for ch in "hello wörld".chars() {
            c.insert(ch);
        }
        c.left();
        c.backspace();
        assert_eq!(c.text(), "hello wörd");
        c.delete_word();
        assert_eq!(c.text(), "hello d");
        c.home();
        c.insert('>');
        assert_eq!(c.text(), ">hello d");
        c.end();
        c.kill_to_start();
        assert_eq!(c.text(), "");
    }

    #[test]
    fn a_large_paste_is_collapsed_and_sent_whole() {
        let mut c = Composer::default();
        c.insert_str("see ");
        let big = "l\n".repeat(10);
        c.paste(&big);
        assert_eq!(c.text(), "see [Pasted text #1 +10 lines]");
        assert_eq!(c.take(), format!("see {big}"));
        c.paste(&big);
        c.backspace();
        assert_eq!(c.text(), "", "the placeholder goes as a whole");
    }

    fn image(data: &str) -> ImageSource {
        ImageSource {
            media_type: "image/png".into(),
            data: data.into(),
        }
    }

    #[test]
    fn an_attached_image_is_a_placeholder_sent_with_the_message() {
        let mut c = Composer::default();
        c.insert_str("compare ");
        c.attach_image("a.png", image("A"));
        c.insert_str(" and ");
        c.attach_image("a.png", image("B"));
        assert_eq!(c.text(), "compare [image: a.png] and [image: a.png #2]");
        assert_eq!(c.images(), [&image("A"), &image("B")]);
        // Backspace takes the second image whole; it is no longer sent.
        c.backspace();
        assert_eq!(c.text(), "compare [image: a.png] and ");
        let (text, images) = c.take_message();
        assert_eq!(text, "compare [image: a.png] and ");
        assert_eq!(images, [image("A")]);
        assert!(c.images().is_empty(), "the composer is empty again");
    }

    #[test]
    fn images_go_in_the_order_of_their_placeholders() {
        let mut c = Composer::default();
        c.attach_image("b.png", image("B"));
        c.home();
        c.attach_image("a.png", image("A"));
        assert_eq!(c.text(), "[image: a.png][image: b.png]");
        assert_eq!(c.take_message().1, [image("A"), image("B")]);
        c.attach_image("c.png", image("C"));
        c.clear();
        assert_eq!(c.take_message(), (String::new(), Vec::new()));
    }

    #[test]
    fn history_goes_back_and_returns_to_the_draft() {
        let mut c = Composer::with_history(vec!["one".into(), "two".into()]);
        c.insert_str("dra");
        c.up();
        assert_eq!(c.text(), "two");
        c.up();
        assert_eq!(c.text(), "one");
        c.up();
        assert_eq!(c.text(), "one");
        c.down();
        c.down();
        assert_eq!(c.text(), "dra");
    }

    #[test]
    fn up_and_down_move_between_lines_first() {
        let mut c = Composer::default();
        c.insert_str("abc\nde");
        c.up();
        c.insert('X');
        assert_eq!(c.text(), "abXc\nde");
        c.down();
        assert!(c.on_last_line());
    }

    #[test]
    fn layout_wraps_and_places_the_cursor() {
        let mut c = Composer::default();
        c.insert_str("abcdef\ngh");
        assert_eq!(
            c.layout(4),
            (vec!["abcd".into(), "ef".into(), "gh".into()], (2, 2))
        );
        assert_eq!(c.token('@'), None);
        c.insert_str(" @src/m");
        assert_eq!(c.token('@'), Some((10, "src/m")));
        c.replace_token(10, "@src/main.rs ");
        assert_eq!(c.text(), "abcdef\ngh @src/main.rs ");
    }
}
