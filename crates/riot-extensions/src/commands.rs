//! Slash commands (docs/design.md §13): `/name args` typed as a prompt.
//!
//! Built-ins (`/compact [focus]`, `/clear`, `/model [name]`,
//! `/mode [mode]`, `/help`) act on the session; every other command is a
//! Markdown file whose body becomes the prompt:
//!
//! 1. the project's `.riot/commands/` (also `.claude/commands/`), read only
//!    from a trusted project,
//! 2. the user's `<riot home>/commands/`.
//!
//! The first of a name wins; a built-in name cannot be taken. Sub-folders
//! namespace: `git/pr.md` is `/git:pr`. Optional front matter:
//! `description`, `argument-hint`, `model`. In the body, `$ARGUMENTS` is
//! everything after the name and `$1`…`$9` are its words, quotes grouping
//! words (`/fix "two words" x` → `$1` = `two words`); a body that uses
//! neither gets the arguments appended. `@path` mentions in the prompt
//! attach the file's text.

use std::path::{Path, PathBuf};

use riot_protocol::{FileKind, FileSystem, ImageSource, UserBlock};
use riot_tools::tools::read_image;
use serde::Deserialize;

use crate::extension_files::{self, Layout, Origin};
use crate::frontmatter;

/// A built-in command: name, description, argument hint.
pub const BUILTINS: [(&str, &str, Option<&str>); 9] = [
    (
        "compact",
        "Summarise the conversation so far to free context",
        Some("[what to focus on]"),
    ),
    ("clear", "Start over with an empty conversation", None),
    ("model", "Show or switch the model", Some("[model name]")),
    (
        "mode",
        "Show or switch the permission mode",
        Some("[default|accept-edits|plan|auto|bypass|dont-ask]"),
    ),
    (
        "cost",
        "Show what the session has cost and its tokens",
        None,
    ),
    ("help", "List the commands and skills", None),
    (
        "rewind",
        "List the messages to rewind to, or rewind files and conversation to just before message N",
        Some("[N [--files-only|--conversation-only] [--force] | undo]"),
    ),
    (
        "undo",
        "Rewind the last turn: its file changes and its messages",
        None,
    ),
    (
        "thinking",
        "Show or set how hard the model thinks before it answers",
        Some("[off|low|medium|high]"),
    ),
];

/// Deepest command sub-folder read.
const MAX_DEPTH: usize = 3;
/// Characters of one `@file` attachment before it is cut.
pub const MAX_MENTION_CHARS: usize = 100_000;
/// `@file` mentions attached per prompt.
const MAX_MENTIONS: usize = 10;

/// One command a person can type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Without the slash: `review`, `git:pr`.
    pub name: String,
    pub description: String,
    pub argument_hint: Option<String>,
    /// The model this command's turn runs with (front matter `model`).
    pub model: Option<String>,
    pub origin: Origin,
    /// The Markdown file (`None` for built-ins).
    pub file: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
struct CommandFront {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<String>,
    model: Option<String>,
}

/// The commands of a session: built-ins first, then files by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandCatalog {
    commands: Vec<Command>,
}

impl Default for CommandCatalog {
    fn default() -> Self {
        Self {
            commands: BUILTINS
                .iter()
                .map(|(name, description, hint)| Command {
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    argument_hint: hint.map(str::to_owned),
                    model: None,
                    origin: Origin::Builtin,
                    file: None,
                })
                .collect(),
        }
    }
}

impl CommandCatalog {
    /// Finds the command files of `project_root` (only when `trusted`) and
    /// `home`, after the built-ins. Returns notices for the person.
    pub async fn discover(
        fs: &dyn FileSystem,
        home: &Path,
        project_root: &Path,
        trusted: bool,
    ) -> (Self, Vec<String>) {
        let mut catalog = Self::default();
        let mut notices = Vec::new();
        let found = extension_files::find(
            fs,
            home,
            project_root,
            trusted,
            "commands",
            "command",
            Layout::Markdown {
                max_depth: MAX_DEPTH,
            },
        )
        .await;
        notices.extend(found.notice);
        for place in found.places {
            catalog
                .load(fs, &place.root, place.entries, place.origin, &mut notices)
                .await;
        }
        let (builtin, mut rest): (Vec<Command>, Vec<Command>) = catalog
            .commands
            .into_iter()
            .partition(|c| c.origin == Origin::Builtin);
        rest.sort_by(|a, b| a.name.cmp(&b.name));
        (
            Self {
                commands: builtin.into_iter().chain(rest).collect(),
            },
            notices,
        )
    }

    async fn load(
        &mut self,
        fs: &dyn FileSystem,
        root: &Path,
        files: Vec<PathBuf>,
        origin: Origin,
        notices: &mut Vec<String>,
    ) {
        for file in files {
            let Some(name) = command_name(root, &file) else {
                notices.push(format!(
                    "command {} skipped: use letters, digits, `-`, `_` or `.` in file and folder names",
                    file.display()
                ));
                continue;
            };
            if let Some(existing) = self.get(&name) {
                if existing.origin == Origin::Builtin {
                    notices.push(format!(
                        "command {} skipped: /{name} is built in",
                        file.display()
                    ));
                }
                continue;
            }
            let Some(text) = extension_files::read_text(fs, &file, "command", notices).await else {
                continue;
            };
            let (front, body) = match frontmatter::parse::<CommandFront>(&text) {
                Ok(parsed) => parsed,
                Err(e) => {
                    notices.push(format!("command {}: {e}; skipped", file.display()));
                    continue;
                }
            };
            let description = front
                .description
                .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| first_line(body));
            self.commands.push(Command {
                name,
                description,
                argument_hint: front.argument_hint.filter(|h| !h.trim().is_empty()),
                model: front.model.filter(|m| !m.trim().is_empty()),
                origin,
                file: Some(file),
            });
        }
    }

    /// Every command: built-ins, then the files by name.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// The command called `name` (without the slash).
    pub fn get(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// `/help`'s text.
    pub fn help(&self, skills: &crate::skills::SkillCatalog) -> String {
        let mut out = String::from("Commands:\n");
        for c in &self.commands {
            let hint = c
                .argument_hint
                .as_deref()
                .map(|h| format!(" {h}"))
                .unwrap_or_default();
            out.push_str(&format!("  /{}{hint} — {}\n", c.name, c.description));
        }
        out.push_str("Skills (the model loads them when a task matches):\n");
        for s in skills.skills() {
            let first = s
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push_str(&format!("  {} — {first}\n", s.name));
        }
        out.trim_end().to_owned()
    }
}

/// The text a command's body starts with, as a fallback description.
fn first_line(body: &str) -> String {
    body.lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(100).collect())
        .unwrap_or_default()
}

/// `git/pr.md` under `root` → `git:pr`; `None` for names a person could
/// not type.
fn command_name(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?.with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let ok = !parts.is_empty()
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
    ok.then(|| parts.join(":"))
}

/// A typed `/name args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation<'a> {
    pub name: &'a str,
    /// Everything after the name, trimmed.
    pub args: &'a str,
}

/// Reads `text` as a command invocation. `None` when it is an ordinary
/// prompt — also one that merely starts with a path like `/usr/bin/env`.
pub fn parse_invocation(text: &str) -> Option<Invocation<'_>> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    valid.then(|| Invocation {
        name,
        args: rest[end..].trim(),
    })
}

/// Splits arguments into words; double or single quotes group words.
pub fn split_args(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// The prompt a command body becomes for `args`.
pub fn expand(body: &str, args: &str) -> String {
    let words = split_args(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$' {
            let rest = &body[i + 1..];
            if rest.starts_with("ARGUMENTS") {
                out.push_str(args);
                used = true;
                for _ in 0.."ARGUMENTS".len() {
                    chars.next();
                }
                continue;
            }
            if let Some(d) = rest.chars().next().and_then(|d| d.to_digit(10))
                && d >= 1
            {
                if let Some(word) = words.get(d as usize - 1) {
                    out.push_str(word);
                }
                used = true;
                chars.next();
                continue;
            }
        }
        out.push(c);
    }
    let out = out.trim().to_owned();
    if !used && !args.is_empty() {
        return format!("{out}\n\nARGUMENTS: {args}");
    }
    out
}

/// The `@path` mentions in `text`, in order, without duplicates: a word
/// starting with `@`, trailing punctuation removed.
pub fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
        if !path.is_empty() && !out.iter().any(|p| p == path) {
            out.push(path.to_owned());
        }
    }
    out
}

/// An `@mentioned` image as Read sends one (downscaled to the model's
/// limit, an animated GIF's first frame): a note, then the image. A file
/// that does not decode is attached as a note saying why.
async fn attach_image(mention: &str, bytes: Vec<u8>, media_type: &'static str) -> Vec<UserBlock> {
    let limits = read_image::ImageLimits::default();
    let prepared =
        tokio::task::spawn_blocking(move || read_image::prepare(&bytes, media_type, limits)).await;
    image_blocks(mention, prepared, limits)
}

fn image_blocks(
    mention: &str,
    prepared: Result<Result<read_image::Prepared, read_image::ImageError>, tokio::task::JoinError>,
    limits: read_image::ImageLimits,
) -> Vec<UserBlock> {
    match prepared {
        Ok(Ok(p)) => vec![
            UserBlock::Attachment {
                title: format!("Image {mention}"),
                text: read_image::note(mention, &p, limits),
            },
            UserBlock::Image { source: p.source() },
        ],
        Ok(Err(reason)) => vec![UserBlock::Attachment {
            title: format!("Image {mention}"),
            text: format!("{mention} {reason}, so it was not attached."),
        }],
        Err(_) => Vec::new(),
    }
}

/// An image that came with a prompt as base64 data (an ACP image block),
/// prepared as an `@mentioned` one; `name` stands for it in the note.
pub async fn attach_image_data(name: &str, image: ImageSource) -> Vec<UserBlock> {
    let limits = read_image::ImageLimits::default();
    let prepared =
        tokio::task::spawn_blocking(move || read_image::prepare_source(&image, limits)).await;
    image_blocks(name, prepared, limits)
}

/// The files `@mentioned` in `text` that exist under `cwd` (or are
/// absolute), as attachments: a text file's contents, an image as an image
/// block. A mention of something that is neither is left as typed.
pub async fn attach_mentions(fs: &dyn FileSystem, cwd: &Path, text: &str) -> Vec<UserBlock> {
    let mut blocks = Vec::new();
    for mention in mentions(text).into_iter().take(MAX_MENTIONS) {
        let path = cwd.join(&mention);
        let Ok(meta) = fs.metadata(&path).await else {
            continue;
        };
        if meta.kind != FileKind::File {
            continue;
        }
        let Ok(bytes) = fs.read(&path).await else {
            continue;
        };
        if let Some(media_type) = read_image::image_type(&mention) {
            if meta.len <= read_image::MAX_FILE_BYTES {
                blocks.extend(attach_image(&mention, bytes, media_type).await);
            }
            continue;
        }
        let Ok(content) = String::from_utf8(bytes) else {
            continue;
        };
        let total = content.chars().count();
        let text = if total > MAX_MENTION_CHARS {
            let cut: String = content.chars().take(MAX_MENTION_CHARS).collect();
            format!(
                "{cut}\n[cut: the first {MAX_MENTION_CHARS} of {total} characters; use Read for the rest]"
            )
        } else {
            content
        };
        blocks.push(UserBlock::Attachment {
            title: format!("Contents of {mention}"),
            text,
        });
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invocations_are_told_apart_from_paths() {
        assert_eq!(
            parse_invocation("  /git:pr  fix the bug "),
            Some(Invocation {
                name: "git:pr",
                args: "fix the bug"
            })
        );
        assert_eq!(
            parse_invocation("/help"),
            Some(Invocation {
                name: "help",
                args: ""
            })
        );
        assert_eq!(parse_invocation("/usr/bin/env is missing"), None);
        assert_eq!(parse_invocation("/ compact"), None);
        assert_eq!(parse_invocation("please /compact"), None);
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(
            split_args(r#"one "two words" 'three four'  five"#),
            ["one", "two words", "three four", "five"]
        );
        assert_eq!(split_args(r#"a"b c"d"#), ["ab cd"]);
        assert_eq!(split_args(r#""" x"#), ["", "x"]);
        assert!(split_args("   ").is_empty());
    }

    #[test]
    fn arguments_and_positions_expand() {
        assert_eq!(
            expand("Fix issue #$1 in $2 ($ARGUMENTS).", r#"42 "src/a b.rs""#),
            r#"Fix issue #42 in src/a b.rs (42 "src/a b.rs")."#
        );
        // Missing positions expand to nothing; `$0` and `$x` stay.
        assert_eq!(expand("[$3] $0 $x", "a"), "[] $0 $x");
        // A body without placeholders gets the arguments appended.
        assert_eq!(
            expand("Review the diff.\n", "carefully"),
            "Review the diff.\n\nARGUMENTS: carefully"
        );
        assert_eq!(expand("Review the diff.\n", ""), "Review the diff.");
    }

    #[test]
    fn names_come_from_paths_with_folders_as_namespaces() {
        let root = Path::new("/c");
        assert_eq!(
            command_name(root, Path::new("/c/git/pr.md")).as_deref(),
            Some("git:pr")
        );
        assert_eq!(
            command_name(root, Path::new("/c/review.md")).as_deref(),
            Some("review")
        );
        assert_eq!(command_name(root, Path::new("/c/bad name.md")), None);
    }

    #[test]
    fn mentions_drop_trailing_punctuation_and_duplicates() {
        assert_eq!(
            mentions("look at @src/main.rs, then @src/main.rs and @a.txt. mail me@x.org"),
            ["src/main.rs", "a.txt"]
        );
    }
}
