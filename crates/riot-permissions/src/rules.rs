//! Permission rules: how a `Tool(content)` pattern matches a call, per
//! tool family (docs/design.md §9.3, docs/interfaces.md "rules"), and reading the
//! `permissions` key of settings files.
//!
//! - Bash: `*` is the only wildcard. On a subcommand the AST walk split
//!   out, it matches any character; on raw text it stops at shell
//!   metacharacters (`& ; | $ < > ( )` backtick newline), so
//!   `Bash(ls *)` never covers `ls; rm -rf ~`. A trailing ` *` also matches
//!   the bare prefix (`Bash(git status *)` covers `git status`); the older
//!   `prefix:*` form means the same. An empty pattern matches only the
//!   empty command.
//! - File tools: path globs matched on components. `./x/**` and `x/**`
//!   are relative to the project, `~/x` to the home directory, `/x`
//!   absolute, and a pattern without `/` (`.env`, `*.pem`) matches a file
//!   name at any depth. `Read(...)` rules cover Read, Glob and Grep;
//!   `Edit(...)` and `Write(...)` rules cover Edit and Write.
//! - WebFetch: `domain:docs.rs` (exact host) or `domain:*.rs-lang.org`.
//! - Tool names: `mcp__github__*` and `mcp__github` cover every tool of
//!   that server.
//!
//! Precedence is deny > ask > allow across **all** sources; the source
//! only decides which rule is quoted when several of one kind match.

use std::path::{Component, Path};

use riot_protocol::{PermissionRule, RuleBehavior, RuleSource};

/// The configured rules of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: Vec<PermissionRule>,
}

/// What a content pattern is matched against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    /// One shell subcommand's text; `ast_split` when the AST walk produced it.
    Command { text: &'a str, ast_split: bool },
    /// A path, literal or resolved, absolute.
    Path {
        path: &'a Path,
        project: &'a Path,
        home: Option<&'a Path>,
    },
    /// A URL.
    Url(&'a str),
}

impl RuleSet {
    /// A rule set from rules in any order.
    pub fn new(rules: Vec<PermissionRule>) -> Self {
        Self { rules }
    }

    /// Adds a rule (e.g. "allow always" in this session).
    pub fn push(&mut self, rule: PermissionRule) {
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
    }

    /// All rules.
    pub fn rules(&self) -> &[PermissionRule] {
        &self.rules
    }

    /// The whole-tool rule (`Bash`, `mcp__x__*`) of this behaviour that
    /// matches `tool`, the highest-priority source quoted.
    pub(crate) fn whole_tool(&self, behavior: RuleBehavior, tool: &str) -> Option<&PermissionRule> {
        self.best(behavior, |r| {
            r.pattern.content.is_none() && tool_matches(&r.pattern.tool, tool)
        })
    }

    /// The content rule of this behaviour that matches `subject`.
    pub(crate) fn content(
        &self,
        behavior: RuleBehavior,
        tool: &str,
        subject: Subject<'_>,
    ) -> Option<&PermissionRule> {
        self.best(behavior, |r| {
            r.pattern.content.as_deref().is_some_and(|content| {
                family_matches(&r.pattern.tool, tool) && content_matches(content, subject)
            })
        })
    }

    /// Among the rules of `behavior` that match, the one from the most
    /// specific source. The behaviour is fixed first: source priority only
    /// picks which rule is quoted, never whether a deny or an allow wins.
    fn best(
        &self,
        behavior: RuleBehavior,
        matches: impl Fn(&PermissionRule) -> bool,
    ) -> Option<&PermissionRule> {
        self.rules
            .iter()
            .filter(|r| r.behavior == behavior && matches(r))
            .max_by_key(|r| source_rank(r.source))
    }
}

/// Session choices are quoted first, then the command line, then the
/// personal project file, the shared project file, the user file.
fn source_rank(source: RuleSource) -> u8 {
    match source {
        RuleSource::Session => 4,
        RuleSource::CliFlag => 3,
        RuleSource::Local => 2,
        RuleSource::Project => 1,
        RuleSource::User => 0,
    }
}

/// Where a rule came from, for messages.
pub fn source_label(source: RuleSource) -> &'static str {
    match source {
        RuleSource::User => "user settings",
        RuleSource::Project => "project settings (.riot/settings.json or .claude/settings.json)",
        RuleSource::Local => {
            "local project settings (.riot/settings.local.json or .claude/settings.local.json)"
        }
        RuleSource::CliFlag => "a command-line flag",
        RuleSource::Session => "this session",
    }
}

/// Whether a rule's tool name covers `tool`.
pub fn tool_matches(pattern: &str, tool: &str) -> bool {
    if pattern == tool {
        return true;
    }
    if pattern.contains('*') {
        return wildcard(pattern.as_bytes(), tool.as_bytes(), &|_| true);
    }
    // `mcp__server` covers every tool of that server.
    pattern.starts_with("mcp__")
        && pattern.matches("__").count() == 1
        && tool
            .strip_prefix(pattern)
            .is_some_and(|rest| rest.starts_with("__"))
}

/// Content rules of the file families cover their neighbours, and a
/// `Bash(…)` rule covers the commands the Terminal tool starts and types.
fn family_matches(pattern: &str, tool: &str) -> bool {
    match pattern {
        "Bash" => matches!(tool, "Bash" | "Terminal"),
        "Read" => matches!(tool, "Read" | "Glob" | "Grep"),
        "Edit" | "Write" => matches!(tool, "Edit" | "Write" | "NotebookEdit"),
        _ => tool_matches(pattern, tool),
    }
}

fn content_matches(content: &str, subject: Subject<'_>) -> bool {
    match subject {
        Subject::Command { text, ast_split } => bash_pattern_matches(content, text, ast_split),
        Subject::Path {
            path,
            project,
            home,
        } => path_pattern_matches(content, path, project, home),
        Subject::Url(url) => url_pattern_matches(content, url),
    }
}

/// Shell metacharacters a Bash wildcard does not cross on raw text.
fn is_shell_meta(b: u8) -> bool {
    matches!(
        b,
        b'&' | b';' | b'|' | b'$' | b'<' | b'>' | b'(' | b')' | b'`' | b'\n'
    )
}

/// Matches a Bash rule's content against one command text.
pub fn bash_pattern_matches(pattern: &str, text: &str, ast_split: bool) -> bool {
    let text = text.trim();
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return text.is_empty();
    }
    // `npm run test:*` is the older spelling of `npm run test *`.
    let owned;
    let pattern = match pattern.strip_suffix(":*") {
        Some(prefix) => {
            owned = format!("{prefix} *");
            owned.as_str()
        }
        None => pattern,
    };
    if text.contains(crate::bash::HOLE) {
        // Parts only known when the command runs may be anything.
        let bare = pattern.strip_suffix(" *").filter(|p| !p.contains('*'));
        return may_match(pattern.as_bytes(), text.as_bytes())
            || bare.is_some_and(|p| may_match(p.as_bytes(), text.as_bytes()));
    }
    let allowed = |b: u8| ast_split || !is_shell_meta(b);
    if let Some(prefix) = pattern.strip_suffix(" *")
        && !prefix.contains('*')
        && text == prefix
    {
        return true;
    }
    wildcard(pattern.as_bytes(), text.as_bytes(), &allowed)
}

/// Whether some value of the text's holes makes the pattern match: both
/// sides are strings with wildcards (`*` in the pattern, [`HOLE`] in the
/// text), and this asks whether the two languages meet. Reachability over
/// (pattern position, text position).
///
/// [`HOLE`]: crate::bash::HOLE
fn may_match(pattern: &[u8], text: &[u8]) -> bool {
    let hole = crate::bash::HOLE as u8;
    let (m, n) = (pattern.len(), text.len());
    let mut seen = vec![false; (m + 1) * (n + 1)];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        let cell = i * (n + 1) + j;
        if seen[cell] {
            continue;
        }
        seen[cell] = true;
        if i == m && j == n {
            return true;
        }
        let p = pattern.get(i).copied();
        let t = text.get(j).copied();
        if p == Some(b'*') {
            stack.push((i + 1, j));
            if j < n {
                stack.push((i, j + 1));
            }
        }
        if t == Some(hole) {
            stack.push((i, j + 1));
            if i < m && p != Some(b'*') {
                stack.push((i + 1, j));
            }
        }
        if let (Some(p), Some(t)) = (p, t)
            && p != b'*'
            && t != hole
            && p == t
        {
            stack.push((i + 1, j + 1));
        }
    }
    false
}

/// `*`-only wildcard matching; `star_may_eat` limits what `*` may cover.
fn wildcard(pattern: &[u8], text: &[u8], star_may_eat: &dyn Fn(u8) -> bool) -> bool {
    // Classic two-pointer glob with backtracking to the last star.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            if !star_may_eat(text[st]) {
                return false;
            }
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

fn path_strings(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

/// Matches a file rule's path glob against an absolute path.
pub fn path_pattern_matches(
    pattern: &str,
    path: &Path,
    project: &Path,
    home: Option<&Path>,
) -> bool {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return path.as_os_str().is_empty();
    }
    let target = path_strings(path);
    let (base, rest): (Vec<String>, &str) = if let Some(rest) = pattern.strip_prefix("~/") {
        match home {
            Some(home) => (path_strings(home), rest),
            None => return false,
        }
    } else if let Some(rest) = pattern.strip_prefix("//") {
        (Vec::new(), rest)
    } else if let Some(rest) = pattern.strip_prefix('/') {
        (Vec::new(), rest)
    } else if let Some(rest) = pattern.strip_prefix("./") {
        (path_strings(project), rest)
    } else if !pattern.contains('/') {
        // A bare name matches at any depth.
        let globs: Vec<&str> = vec!["**", pattern];
        return glob_components(&globs, &target);
    } else {
        (path_strings(project), pattern)
    };
    let mut globs: Vec<&str> = base.iter().map(String::as_str).collect();
    globs.extend(rest.split('/').filter(|c| !c.is_empty() && *c != "."));
    glob_components(&globs, &target)
}

/// `**` matches any number of components; `*` and `?` stay within one.
fn glob_components(globs: &[&str], target: &[String]) -> bool {
    match globs.split_first() {
        None => target.is_empty(),
        Some((&"**", rest)) => {
            (0..=target.len()).any(|skip| glob_components(rest, &target[skip..]))
        }
        Some((glob, rest)) => match target.split_first() {
            Some((first, tail)) => component_matches(glob, first) && glob_components(rest, tail),
            None => false,
        },
    }
}

fn component_matches(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    fn go(g: &[char], n: &[char]) -> bool {
        match g.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    go(&g, &n)
}

/// The host of a URL, lowercased, without user info or port.
pub fn url_host(url: &str) -> Option<String> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_once(']').map(|(h, _)| format!("{h}]"))?
    } else {
        host_port.split(':').next()?.to_owned()
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn url_pattern_matches(pattern: &str, url: &str) -> bool {
    match pattern.strip_prefix("domain:") {
        Some(domain) => {
            let domain = domain.trim().to_ascii_lowercase();
            let Some(host) = url_host(url) else {
                return false;
            };
            match domain.strip_prefix("*.") {
                Some(parent) => host.ends_with(&format!(".{parent}")),
                None => host == domain,
            }
        }
        None => wildcard(pattern.as_bytes(), url.as_bytes(), &|_| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn bash_wildcards_stop_at_metacharacters_on_raw_text_only() {
        assert!(bash_pattern_matches("ls *", "ls -la", false));
        // On raw text `*` stops at every shell metacharacter.
        for meta in ["&", ";", "|", "$", "<", ">", "(", ")", "`", "\n"] {
            let text = format!("ls -la {meta} rm -rf ~");
            assert!(!bash_pattern_matches("ls *", &text, false), "{text:?}");
            assert!(bash_pattern_matches("ls *", &text, true), "{text:?}");
        }
        assert!(bash_pattern_matches("ls *", "ls -la src", false));
        assert!(bash_pattern_matches("ls *", "ls a;b", true));
        assert!(bash_pattern_matches("git status *", "git status", true));
        assert!(bash_pattern_matches(
            "npm run test:*",
            "npm run test --watch",
            true
        ));
        assert!(!bash_pattern_matches(
            "npm run test *",
            "npm run testing",
            true
        ));
        assert!(bash_pattern_matches("", "", true));
        assert!(!bash_pattern_matches("", "ls", true));
        assert!(!bash_pattern_matches("git push", "git push --force", true));
    }

    #[test]
    fn path_globs_match_components() {
        let project = PathBuf::from("/p");
        let home = PathBuf::from("/home/u");
        let m = |pat: &str, path: &str| {
            path_pattern_matches(pat, Path::new(path), &project, Some(&home))
        };
        assert!(m("./secrets/**", "/p/secrets/a/b.txt"));
        assert!(!m("./secrets/**", "/p/secretsx/a"));
        assert!(!m("./secrets/**", "/q/secrets/a"));
        assert!(m("src/*.rs", "/p/src/main.rs"));
        assert!(!m("src/*.rs", "/p/src/a/main.rs"));
        assert!(m("~/.ssh/**", "/home/u/.ssh/id_rsa"));
        assert!(m("/etc/**", "/etc/passwd"));
        assert!(m(".env", "/p/deep/er/.env"));
        assert!(m("*.pem", "/p/certs/a.pem"));
        assert!(!m(".env", "/p/.env.example"));
    }

    #[test]
    fn tool_names_and_domains() {
        assert!(tool_matches("mcp__github__*", "mcp__github__create_issue"));
        assert!(tool_matches("mcp__github", "mcp__github__create_issue"));
        assert!(!tool_matches("mcp__github", "mcp__githubx__a"));
        assert!(!tool_matches("Bash", "BashOutput"));
        assert!(url_pattern_matches(
            "domain:docs.rs",
            "https://docs.rs/serde"
        ));
        assert!(!url_pattern_matches(
            "domain:docs.rs",
            "https://docs.rs.evil.com/"
        ));
        assert!(!url_pattern_matches(
            "domain:docs.rs",
            "https://evil.com/?docs.rs"
        ));
        assert!(url_pattern_matches(
            "domain:*.github.com",
            "https://api.github.com/x"
        ));
        assert_eq!(
            url_host("http://u:p@Example.COM:8080/x").as_deref(),
            Some("example.com")
        );
    }
}
