//! Exact wrapper stripping for rule matching (docs/design.md §9.3):
//! `timeout 30 npm test` matches `Bash(npm test *)`. Each wrapper is
//! stripped only in its exact argument shape; an unknown shape is left
//! alone (so it matches nothing narrower). `sudo` is never a wrapper: it
//! changes who runs the command, and a rule for `rm` must not cover
//! `sudo rm`.

use super::Word;

/// What stripping left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped<'a> {
    /// The words after the wrappers.
    pub words: &'a [Word],
    /// `env` was one of the wrappers (its assignments are in `env`).
    pub used_env: bool,
    /// Assignments made through `env VAR=x`.
    pub env: Vec<(String, String)>,
}

/// Strips `timeout`, `nice`, `nohup`, `time` and `env VAR=x` wrappers,
/// repeatedly, each only in its exact shape.
pub fn strip_wrappers(words: &[Word]) -> Stripped<'_> {
    let mut rest = words;
    let mut used_env = false;
    let mut env = Vec::new();
    while let Some(first) = rest.first().filter(|w| w.literal) {
        let skip = match first.text.as_str() {
            "timeout" => timeout_shape(rest),
            "nice" => nice_shape(rest),
            "nohup" => Some(1),
            "time" => time_shape(rest),
            "env" => match env_shape(rest) {
                Some((n, vars)) => {
                    used_env = true;
                    env.extend(vars);
                    Some(n)
                }
                None => None,
            },
            _ => None,
        };
        match skip {
            // Something must remain to run, or this was not a wrapper.
            Some(n) if n < rest.len() => rest = &rest[n..],
            _ => break,
        }
    }
    Stripped {
        words: rest,
        used_env,
        env,
    }
}

fn lit(w: &Word) -> Option<&str> {
    w.literal.then_some(w.text.as_str())
}

fn is_duration(s: &str) -> bool {
    let num = s.trim_end_matches(['s', 'm', 'h', 'd']);
    // At most one unit letter.
    if s.len() - num.len() > 1 || num.is_empty() {
        return false;
    }
    let mut dots = 0;
    num.chars().all(|c| {
        if c == '.' {
            dots += 1;
            dots == 1
        } else {
            c.is_ascii_digit()
        }
    })
}

fn is_signal(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// `timeout [--preserve-status] [--foreground] [-v] [-k DUR | --kill-after=DUR]
/// [-s SIG | --signal=SIG] DURATION cmd ...`
fn timeout_shape(words: &[Word]) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = words.get(i).and_then(lit) {
        match w {
            "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
            "-k" | "--kill-after" => {
                if !is_duration(words.get(i + 1).and_then(lit)?) {
                    return None;
                }
                i += 2;
            }
            "-s" | "--signal" => {
                if !is_signal(words.get(i + 1).and_then(lit)?) {
                    return None;
                }
                i += 2;
            }
            _ if w.starts_with("--kill-after=") => {
                if !is_duration(&w["--kill-after=".len()..]) {
                    return None;
                }
                i += 1;
            }
            _ if w.starts_with("--signal=") => {
                if !is_signal(&w["--signal=".len()..]) {
                    return None;
                }
                i += 1;
            }
            _ if is_duration(w) => return Some(i + 1),
            _ => return None,
        }
    }
    None
}

/// `nice [-n N | --adjustment=N | -N] cmd ...`
fn nice_shape(words: &[Word]) -> Option<usize> {
    let is_int = |s: &str| {
        let s = s.strip_prefix(['-', '+']).unwrap_or(s);
        !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
    };
    match words.get(1).and_then(lit) {
        Some("-n" | "--adjustment") => {
            if is_int(words.get(2).and_then(lit)?) {
                Some(3)
            } else {
                None
            }
        }
        Some(w) if w.starts_with("--adjustment=") => {
            is_int(&w["--adjustment=".len()..]).then_some(2)
        }
        Some(w) if w.starts_with('-') => is_int(&w[1..]).then_some(2),
        Some(_) => Some(1),
        None => None,
    }
}

/// `time [-p] cmd ...`
fn time_shape(words: &[Word]) -> Option<usize> {
    match words.get(1).and_then(lit) {
        Some("-p") => Some(2),
        Some(w) if w.starts_with('-') => None,
        Some(_) => Some(1),
        None => None,
    }
}

/// `env VAR=x ... cmd ...` — no options (`env -i`, `env -u X` are other
/// shapes), at least one assignment.
fn env_shape(words: &[Word]) -> Option<(usize, Vec<(String, String)>)> {
    let mut vars = Vec::new();
    let mut i = 1;
    while let Some(w) = words.get(i).and_then(lit) {
        match w.split_once('=') {
            Some((name, value))
                if !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                vars.push((name.to_owned(), value.to_owned()));
                i += 1;
            }
            _ => break,
        }
    }
    if vars.is_empty() || vars.iter().any(|(n, _)| super::is_dangerous_var(n)) {
        return None;
    }
    Some((i, vars))
}

/// Command-running prefixes and their flags that take a value. Used only
/// to make deny and ask rules and the danger scan see through them: here
/// `sudo` *is* looked through, because over-matching a deny only narrows.
const RUNNERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &["-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D"],
    ),
    ("doas", &["-u", "-C"]),
    ("command", &[]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nohup", &[]),
    ("time", &[]),
    ("nice", &["-n"]),
    ("timeout", &["-k", "-s"]),
    ("env", &["-u", "-C", "-S"]),
    ("xargs", &["-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("setsid", &[]),
    ("ionice", &["-c", "-n", "-p"]),
    ("watch", &["-n", "--interval"]),
    ("unbuffer", &[]),
];

/// Whether a program (by name) runs its arguments as a command.
pub(super) fn is_runner(name: &str) -> bool {
    RUNNERS.iter().any(|(n, _)| *n == name)
}

/// Strips every command-running prefix generously: the prefix, its flags,
/// `VAR=x` assignments and a `timeout` duration.
pub fn strip_runners(words: &[Word]) -> &[Word] {
    let mut rest = words;
    while let Some((_, value_flags)) = rest
        .first()
        .and_then(|w| RUNNERS.iter().find(|(name, _)| *name == w.text))
    {
        let is_timeout = rest[0].text == "timeout";
        let mut i = 1;
        while let Some(w) = rest.get(i) {
            if value_flags.contains(&w.text.as_str()) {
                i += 2;
            } else if w.text.starts_with('-') || w.text.contains('=') {
                i += 1;
            } else {
                break;
            }
        }
        if is_timeout && rest.get(i).is_some_and(|w| is_duration(&w.text)) {
            i += 1;
        }
        if i >= rest.len() {
            break;
        }
        rest = &rest[i..];
    }
    rest
}
