//! The person's keys outside a question: the composer, its `@`/`/` menu,
//! pastes and images, submitting a prompt or a command, Ctrl+C and the
//! mode cycle.

#[allow(clippy::wildcard_imports)] // one impl of App, split by job
use super::*;

impl App {
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

    pub(super) fn submit(&mut self) {
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

    pub(super) fn handle_key(&mut self, key: KeyEvent) {
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

    pub(super) fn ctrl_c_pressed(&mut self) {
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

    pub(super) fn cycle_mode(&mut self) {
        let at = self.modes.iter().position(|m| *m == self.mode).unwrap_or(0);
        let next = self.modes[(at + 1) % self.modes.len()];
        self.mode = next;
        self.effects.push(Effect::SetMode(next));
    }

    /// Handles a key meant for the open menu; false when it is not.
    pub(super) fn menu_key(&mut self, key: KeyEvent) -> bool {
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

    pub(super) fn accept_menu(&mut self, enter: bool) {
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
    pub(super) fn refresh_menu(&mut self) {
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

    /// The rows the composer's `@`/`/` menu offers, for tests.
    pub fn menu_entries(&self) -> Vec<String> {
        self.menu
            .as_ref()
            .map(|m| m.entries.iter().map(|e| e.name.clone()).collect())
            .unwrap_or_default()
    }
}
