//! Working out what the shell will pass: variables set earlier in the
//! same line, the few environment values the policy knows (`$HOME`,
//! `$RIOT_HOME`, `$PWD`), a leading `~`, ANSI-C strings. What cannot be
//! worked out stays unknown, and the checks treat unknown as "could be
//! anything" (fail closed).

use std::collections::HashMap;
use std::path::PathBuf;

use super::{Part, SimpleCommand, Word, strip_runners};

/// Stands for a part of a command only known when it runs, in the texts
/// deny and ask rules are matched against: it may match anything.
pub const HOLE: char = '\u{1}';

/// What the analysis may know about where a command runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The person's home directory (`~`, `$HOME`).
    pub home: Option<PathBuf>,
    /// Riot's configuration directory (`$RIOT_HOME`).
    pub riot_home: Option<PathBuf>,
    /// The directory the command starts in (`$PWD`, relative paths).
    pub cwd: Option<PathBuf>,
}

/// Variable values while walking a line in order. `None` values were
/// assigned something that cannot be worked out.
pub(super) struct Scope {
    vars: HashMap<String, Option<String>>,
    /// Every directory the command may be in at this point: `cd` adds
    /// one (a `cd` in a subshell or a failing `cd` leaves the old one
    /// possible). `None`: somewhere unknown.
    pub(super) cwds: Vec<Option<PathBuf>>,
    /// A `cd` went somewhere only known when it runs: relative paths after
    /// it could be anywhere.
    pub(super) lost: bool,
}

impl Scope {
    pub(super) fn new(ctx: &Context) -> Self {
        let mut vars = HashMap::new();
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
        if let Some(home) = path(&ctx.home) {
            vars.insert("HOME".to_owned(), Some(home));
        }
        if let Some(riot) = path(&ctx.riot_home) {
            vars.insert("RIOT_HOME".to_owned(), Some(riot));
        }
        if let Some(cwd) = path(&ctx.cwd) {
            vars.insert("PWD".to_owned(), Some(cwd));
        }
        Scope {
            vars,
            // Without a known start, paths are followed relative to it.
            cwds: vec![Some(ctx.cwd.clone().unwrap_or_default())],
            lost: false,
        }
    }

    pub(super) fn assign(&mut self, name: &str, value: Option<String>) {
        self.vars.insert(name.to_owned(), value);
    }

    /// The word's value, or `None` when any part is unknown.
    pub(super) fn resolve(&self, word: &Word) -> Option<String> {
        let mut out = String::new();
        for part in &word.parts {
            match part {
                Part::Lit(text) => out.push_str(text),
                // `~` is `$HOME` as the line has it (it may reassign it).
                // Without a known home, `~` stays as written: the path
                // checks understand `~/.ssh` by its components.
                Part::Home => match self.vars.get("HOME") {
                    Some(value) => out.push_str(value.as_deref()?),
                    None => out.push('~'),
                },
                Part::Var(name) => out.push_str(self.vars.get(name)?.as_deref()?),
                Part::Unknown => return None,
            }
        }
        Some(out)
    }

    /// `$HOME` as the line has it so far.
    pub(super) fn home(&self) -> Option<Option<String>> {
        self.vars.get("HOME").cloned()
    }

    /// After `cd DIR`: DIR joined to every possible directory. `$PWD` is
    /// unknown from here on.
    pub(super) fn enter(&mut self, dir: Option<&str>) {
        self.vars.insert("PWD".to_owned(), None);
        if self.vars.contains_key("CDPATH") {
            self.lost = true;
            return;
        }
        let next: Vec<Option<PathBuf>> = match dir {
            None | Some("-") => {
                self.lost = true;
                return;
            }
            Some(dir) if dir.starts_with('/') => vec![Some(PathBuf::from(dir))],
            Some(dir) if dir.starts_with('~') || super::pending::has_glob(dir) => {
                self.lost = true;
                return;
            }
            Some(dir) => self
                .cwds
                .iter()
                .map(|cwd| cwd.as_ref().map(|c| crate::paths::normalize(&c.join(dir))))
                .collect(),
        };
        for cwd in next {
            if !self.cwds.contains(&cwd) {
                self.cwds.push(cwd);
            }
        }
    }
}

/// Decodes the body of `$'...'` (the raw text, quotes included). `None`
/// for escapes it does not know, which then stay unknown.
pub(super) fn decode_ansi_c(raw: &str) -> Option<String> {
    let body = raw.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let esc = chars.next()?;
        let simple = match esc {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let (radix, max) = match esc {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            _ => return None,
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(esc);
        }
        while digits.len() < max + usize::from(radix == 8)
            && let Some(&d) = chars.peek()
            && d.is_digit(radix)
        {
            digits.push(d);
            chars.next();
        }
        if digits.is_empty() {
            return None;
        }
        let mut value = u32::from_str_radix(&digits, radix).ok()?;
        if radix == 8 {
            // bash keeps the low eight bits of an octal escape.
            value &= 0xff;
        }
        // A byte above ASCII is not a character on its own: unknown.
        if esc != 'u' && esc != 'U' && value >= 0x80 {
            return None;
        }
        out.push(char::from_u32(value)?);
    }
    Some(out)
}

/// Programs that run their arguments as a command: looked through
/// (`busybox rm` is `rm`).
pub(super) const MULTICALL: &[&str] = &["busybox", "toybox"];

/// A program's name without its directory (`/bin/rm` is `rm`).
pub(super) fn program_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The value a rule sees for one word: resolved, or a hole (a glob keeps
/// its literal start: `src/*.o` can only be something under `src/`).
fn hole_text(word: &Word) -> String {
    match &word.resolved {
        Some(value) if word.unquoted_glob => {
            let cut = value.find(['*', '?', '[', '{']).unwrap_or(value.len());
            format!("{}{HOLE}", &value[..cut])
        }
        Some(value) => value.clone(),
        None => HOLE.to_string(),
    }
}

pub(super) fn deny_match_texts(sub: &SimpleCommand) -> Vec<String> {
    let mut out = Vec::new();
    if !sub.ast_verified {
        return out;
    }
    let mut push = |words: &[Word]| {
        if words.is_empty() {
            return;
        }
        let mut texts: Vec<String> = words.iter().map(hole_text).collect();
        let joined = texts.join(" ");
        if !out.contains(&joined) {
            out.push(joined);
        }
        // `/bin/rm` and `./rm` are `rm` to a rule.
        if let Some((_, base)) = texts[0].rsplit_once('/')
            && !base.is_empty()
        {
            texts[0] = base.to_owned();
            let joined = texts.join(" ");
            if !out.contains(&joined) {
                out.push(joined);
            }
        }
    };
    push(&sub.words);
    // Behind a prefix Riot may not parse exactly (`sudo --user root rm`,
    // `/usr/bin/env rm`), every later word may be where the command starts.
    let first = sub.words.first().and_then(|w| w.resolved.as_deref());
    if first.is_some_and(|n| super::wrappers::is_runner(program_name(n))) {
        for start in 1..sub.words.len() {
            push(&sub.words[start..]);
        }
    }
    let mut rest = strip_runners(&sub.words);
    loop {
        push(rest);
        let name = rest
            .first()
            .and_then(|w| w.resolved.as_deref())
            .map(program_name);
        match name {
            Some(n) if MULTICALL.contains(&n) && rest.len() > 1 => {
                rest = strip_runners(&rest[1..]);
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_strings_decode_hex_octal_and_simple_escapes() {
        assert_eq!(decode_ansi_c(r"$'\x72\x6d'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"$'\162\155'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"$'a\tb\\'").as_deref(), Some("a\tb\\"));
        assert_eq!(decode_ansi_c(r"$'\u0072m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c(r"$'\cA'"), None);
        // bash keeps the low eight bits: \456 is `.`.
        assert_eq!(decode_ansi_c(r"$'\456git'").as_deref(), Some(".git"));
        assert_eq!(decode_ansi_c(r"$'\xff'"), None);
    }
}
