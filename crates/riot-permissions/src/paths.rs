//! Path safety: which paths are sensitive (docs/design.md §9.2 "safety
//! checks") and which path shapes are refused on every platform
//! ("path-shape checks"). Everything here works on path **components**,
//! never on substrings: `src/legit.git-helper.rs` is not a `.git` path.
//!
//! Components are split on both `/` and `\`, so a Windows-style path written
//! on Unix is judged the same way (fail closed).

use std::path::{Component, Path, PathBuf};

/// Why a path is sensitive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sensitivity {
    /// Secrets: reading is a finding too (`.env`, `~/.ssh/id_rsa`,
    /// `~/.aws/credentials`, `.netrc`, key files).
    Credential(String),
    /// Only writing is a finding (`.git/` internals, shell rc files, SSH
    /// config, Riot's own settings and hooks).
    WriteSensitive(String),
}

impl Sensitivity {
    /// The human-readable explanation.
    pub fn detail(&self) -> &str {
        match self {
            Sensitivity::Credential(d) | Sensitivity::WriteSensitive(d) => d,
        }
    }

    /// Whether reading the path is already a finding.
    pub fn applies_to_reads(&self) -> bool {
        matches!(self, Sensitivity::Credential(_))
    }
}

/// Splits a textual path into its components on `/` and `\`, dropping
/// empty and `.` components.
pub fn components(path: &str) -> Vec<&str> {
    path.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

const SHELL_STARTUP_FILES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".login",
    ".logout",
    ".inputrc",
    ".bash_aliases",
    "bash.bashrc",
    "zshrc",
    "zshenv",
    "config.fish",
];

const CREDENTIAL_FILES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".my.cnf",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
];

/// Files in `~/.ssh` that are not keys.
const SSH_CONFIG_FILES: &[&str] = &[
    "config",
    "known_hosts",
    "known_hosts.old",
    "authorized_keys",
    "authorized_keys2",
    "rc",
    "environment",
];

const CREDENTIAL_DIRS: &[&str] = &[".ssh", ".aws", ".gnupg", ".azure"];

const KEY_EXTENSIONS: &[&str] = &[".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk"];

/// `.env.example` and friends are documentation, not secrets.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist", "defaults"];

fn is_env_file(name: &str) -> bool {
    if name == ".env" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(suffix) => !ENV_TEMPLATES.contains(&suffix.to_ascii_lowercase().as_str()),
        None => false,
    }
}

fn is_key_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    KEY_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) || CREDENTIAL_FILES.contains(&name)
}

/// Classifies a path by its components. `riot_home`, when known, marks
/// Riot's own configuration directory as write-sensitive.
///
/// Names are compared case-insensitively: on macOS and Windows `.GIT/config`
/// and `~/.ZSHRC` are the same files as `.git/config` and `~/.zshrc`.
pub fn classify(path: &str, riot_home: Option<&Path>) -> Option<Sensitivity> {
    classify_for(path, None, riot_home)
}

/// [`classify`] knowing the person's home directory too, so files that
/// are protected only there (`~/bin/*`, on the `PATH`) are recognised.
pub fn classify_for(
    path: &str,
    home: Option<&Path>,
    riot_home: Option<&Path>,
) -> Option<Sensitivity> {
    let lowered = path.to_ascii_lowercase();
    let comps = components(&lowered);
    let name = comps.last().copied().unwrap_or("");

    // Credentials first: they are the stronger finding.
    if let Some(s) = credential(&comps, name) {
        return Some(s);
    }
    // Riot's own configuration, the directory itself included (`cp x
    // $RIOT_HOME/` creates a file in it).
    let default_home = comps
        .windows(2)
        .position(|w| w == [".config", "riot"])
        .map(|i| i + 2);
    let riot_home = riot_home.and_then(|home| {
        let home = home.to_string_lossy().to_ascii_lowercase();
        let home_comps = components(&home);
        (!home_comps.is_empty()
            && comps.len() >= home_comps.len()
            && comps[..home_comps.len()] == home_comps[..])
            .then_some(home_comps.len())
    });
    // A session's git worktree (`<home>/worktrees/<project>/<name>/…`,
    // riot-worktree) is a checkout of the project, not
    // configuration: only the rest of the home is.
    let in_worktree = |end: usize| {
        comps.get(end) == Some(&"worktrees")
            && comps.len() > end + 2
            && !comps[end + 1].starts_with('.')
            && !comps[end + 2].starts_with('.')
    };
    let in_default_home = default_home.is_some_and(|end| !in_worktree(end));
    let in_riot_home = riot_home.is_some_and(|end| !in_worktree(end));
    if in_default_home || in_riot_home {
        if name == "credentials.json" {
            return Some(Sensitivity::Credential(
                "Riot's saved API keys (`credentials.json`)".into(),
            ));
        }
        return Some(Sensitivity::WriteSensitive(format!(
            "`{path}` is inside Riot's own configuration directory"
        )));
    }
    if let Some(detail) = runs_code(&comps, name, home) {
        return Some(Sensitivity::WriteSensitive(detail));
    }
    None
}

/// Secrets: reading them is a finding too.
fn credential(comps: &[&str], name: &str) -> Option<Sensitivity> {
    if is_env_file(name) {
        return Some(Sensitivity::Credential(format!(
            "`{name}` holds secrets (environment file)"
        )));
    }
    for (i, comp) in comps.iter().enumerate() {
        let rest = &comps[i + 1..];
        if CREDENTIAL_DIRS.contains(comp) {
            // Inside ~/.ssh only private keys are secrets; config and
            // known_hosts are write-sensitive, public keys are not.
            if *comp == ".ssh" {
                return match rest.first() {
                    None => Some(Sensitivity::Credential(
                        "`.ssh` holds SSH private keys".into(),
                    )),
                    Some(file) if file.starts_with("id_") && !file.ends_with(".pub") => Some(
                        Sensitivity::Credential(format!("`.ssh/{file}` is an SSH private key")),
                    ),
                    Some(file) if file.ends_with(".pub") => None,
                    Some(file) if SSH_CONFIG_FILES.contains(file) => {
                        Some(Sensitivity::WriteSensitive(format!(
                            "`.ssh/{file}` is SSH configuration (`rc` and `authorized_keys` run code)"
                        )))
                    }
                    // Any other file there may be a private key by another
                    // name (`~/.ssh/github`).
                    Some(file) => Some(Sensitivity::Credential(format!(
                        "`.ssh/{file}` may be an SSH private key"
                    ))),
                };
            }
            return Some(Sensitivity::Credential(format!(
                "`{comp}` holds credentials"
            )));
        }
        let pair = |dir: &str, file: &str| *comp == dir && rest_is(rest, file);
        if pair(".docker", "config.json")
            || pair(".kube", "config")
            || pair(".cargo", "credentials")
            || pair(".cargo", "credentials.toml")
            || (*comp == ".config" && rest.starts_with(&["gh", "hosts.yml"]))
            || (*comp == ".config" && rest.first() == Some(&"gcloud"))
        {
            return Some(Sensitivity::Credential(format!(
                "`{}` holds credentials",
                comps[i..].join("/")
            )));
        }
    }
    // `/proc/<pid>/environ` holds a process's environment, keys included.
    if name == "environ" && comps.first() == Some(&"proc") {
        return Some(Sensitivity::Credential(
            "`/proc/*/environ` holds a process's environment variables".into(),
        ));
    }
    if is_key_file(name) || name == ".vault-token" {
        return Some(Sensitivity::Credential(format!(
            "`{name}` looks like a private key or credential file"
        )));
    }
    None
}

/// Files and directories whose contents some program runs later without
/// being asked: git's internals, shell and editor startup files, agent
/// configuration, autostart entries, directories on the `PATH`, build
/// tool configuration that names programs.
fn runs_code(comps: &[&str], name: &str, home: Option<&Path>) -> Option<String> {
    if let Some(i) = comps.iter().position(|c| *c == ".git") {
        let inner = comps[i + 1..].join("/");
        let what = if inner.is_empty() {
            ".git".to_owned()
        } else {
            format!(".git/{inner}")
        };
        return Some(format!(
            "`{what}` is git's internal state (hooks and config run code)"
        ));
    }
    if SHELL_STARTUP_FILES.contains(&name) {
        return Some(format!(
            "`{name}` is a shell startup file: it runs on every new shell"
        ));
    }
    if STARTUP_FILES.contains(&name) {
        return Some(format!(
            "`{name}` is read by a program at start-up and can make it run code"
        ));
    }
    if name == ".gitconfig" {
        return Some("`.gitconfig` can make every git command run code".into());
    }
    if name == ".mcp.json" {
        return Some("`.mcp.json` starts MCP servers (runs code)".into());
    }
    for (i, comp) in comps.iter().enumerate() {
        if let Some((_, why)) = CODE_DIRS.iter().find(|(dir, _)| dir == comp) {
            return Some(format!("`{}` is {why}", comps[i..].join("/")));
        }
        let next = comps.get(i + 1).copied();
        if let Some(next) = next
            && let Some((_, _, why)) = CODE_DIR_PAIRS
                .iter()
                .find(|(a, b, _)| a == comp && *b == next)
        {
            return Some(format!("`{}` is {why}", comps[i..].join("/")));
        }
    }
    // `~/bin` is on many people's PATH; only the home's, not a project's.
    if let Some(home) = home {
        let home = home.to_string_lossy().to_ascii_lowercase();
        let home_comps = components(&home);
        if comps.len() > home_comps.len()
            && comps[..home_comps.len()] == home_comps[..]
            && comps[home_comps.len()] == "bin"
        {
            return Some(format!(
                "`~/{}` is on the PATH: a program put there runs in place of another",
                comps[home_comps.len()..].join("/")
            ));
        }
    }
    None
}

/// Directories (any component) whose files configure an agent, an editor
/// or a build tool to run programs.
const CODE_DIRS: &[(&str, &str)] = &[
    (".riot", "agent configuration (rules, hooks, commands)"),
    (".claude", "agent configuration (rules, hooks, commands)"),
    (
        ".vscode",
        "editor configuration (tasks run on opening the folder)",
    ),
    (
        ".cargo",
        "Cargo configuration (it names programs Cargo runs)",
    ),
    (".emacs.d", "editor configuration (it runs on start-up)"),
    (
        ".bashrc.d",
        "shell start-up code (it runs on every new shell)",
    ),
    (
        ".profile.d",
        "shell start-up code (it runs on every new login)",
    ),
];

/// Two-component directories with the same meaning.
const CODE_DIR_PAIRS: &[(&str, &str, &str)] = &[
    (
        ".config",
        "autostart",
        "run when the desktop session starts",
    ),
    (".config", "systemd", "services systemd starts"),
    (
        ".config",
        "git",
        "git configuration (it can make git run code)",
    ),
    (
        ".config",
        "nvim",
        "editor configuration (it runs on start-up)",
    ),
    (".config", "environment.d", "environment for every session"),
    (
        ".local",
        "bin",
        "on the PATH: a program put there runs in place of another",
    ),
    (
        ".config",
        "fish",
        "shell start-up code (it runs on every new shell)",
    ),
    (
        "library",
        "launchagents",
        "run when the person logs in (macOS)",
    ),
];

/// Start-up files outside the shell that run code or change what runs.
const STARTUP_FILES: &[&str] = &[
    ".vimrc",
    ".gvimrc",
    "_vimrc",
    ".exrc",
    ".nvimrc",
    ".nvim.lua",
    ".emacs",
    ".envrc",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".tmux.conf",
    ".wgetrc",
    ".curlrc",
    ".yarnrc",
    ".yarnrc.yml",
];

/// Every file or directory name some rule above protects, for deciding
/// whether a shell glob could reach one without looking at the disk.
pub(crate) fn protected_names() -> impl Iterator<Item = &'static str> {
    SHELL_STARTUP_FILES
        .iter()
        .chain(STARTUP_FILES)
        .chain(CREDENTIAL_FILES)
        .chain(CREDENTIAL_DIRS)
        .copied()
        .chain(CODE_DIRS.iter().map(|(d, _)| *d))
        .chain(CODE_DIR_PAIRS.iter().flat_map(|(a, b, _)| [*a, *b]))
        .chain([
            ".git",
            ".env",
            ".env.local",
            ".env.production",
            ".env.development",
            ".env.test",
            ".env.staging",
            "hosts.yml",
            ".gitconfig",
            ".mcp.json",
            ".docker",
            ".kube",
            "config",
            "config.json",
            "credentials",
            "credentials.toml",
            "credentials.json",
            "settings.json",
            "riot",
            "gh",
            "gcloud",
            "environ",
            "x.pem",
            "x.key",
            "x.p12",
            "x.pfx",
            "x.jks",
            "x.keystore",
            "x.ppk",
            ".vault-token",
        ])
}

fn rest_is(rest: &[&str], name: &str) -> bool {
    rest.len() == 1 && rest[0] == name
}

const DOS_DEVICES: &[&str] = &[
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "CONIN$",
    "CONOUT$",
];

/// Path-shape checks (docs/design.md §9.2): shapes that mean something else
/// to some file system than they appear to. Returns the first problem.
pub fn shape_problem(path: &str) -> Option<String> {
    if path.contains('\0') {
        return Some("the path contains a NUL byte".into());
    }
    if path.starts_with("\\\\?\\") || path.starts_with("//?/") {
        return Some("the path uses a `\\\\?\\` verbatim prefix".into());
    }
    if path.starts_with("\\\\.\\") || path.starts_with("//./") {
        return Some("the path names a device (`\\\\.\\`)".into());
    }
    for (i, comp) in components(path).iter().enumerate() {
        if *comp == ".." {
            continue;
        }
        let is_drive = i == 0 && comp.len() == 2 && comp.ends_with(':');
        if comp.contains(':') && !is_drive {
            return Some(format!(
                "`{comp}` names an NTFS alternate data stream (`:` in a file name)"
            ));
        }
        if comp.ends_with('.') || comp.ends_with(' ') {
            return Some(format!(
                "`{comp}` ends with a dot or space, which Windows silently drops"
            ));
        }
        if is_short_name(comp) {
            return Some(format!(
                "`{comp}` looks like an 8.3 short name, which can alias another file"
            ));
        }
        let stem = comp.split('.').next().unwrap_or(comp).trim_end();
        if DOS_DEVICES.iter().any(|d| d.eq_ignore_ascii_case(stem)) {
            return Some(format!("`{comp}` is a DOS device name"));
        }
    }
    None
}

/// `PROGRA~1`, `SETTIN~2.JSO`: a `~` followed by digits in the stem.
fn is_short_name(comp: &str) -> bool {
    let stem = comp.split('.').next().unwrap_or(comp);
    match stem.rfind('~') {
        Some(pos) if pos > 0 => {
            let digits = &stem[pos + 1..];
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

/// Removes a Windows verbatim prefix (`\\?\C:\x` → `C:\x`), which
/// `canonicalize` adds on Windows; done before the resolved-path checks.
pub fn strip_verbatim(path: &str) -> &str {
    path.strip_prefix("\\\\?\\UNC\\")
        .or_else(|| path.strip_prefix("\\\\?\\"))
        .unwrap_or(path)
}

/// Resolves `.` and `..` lexically (no file-system access).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Expands a leading `~` against `home`.
pub fn expand_home(text: &str, home: Option<&Path>) -> Option<PathBuf> {
    let home = home?;
    if text == "~" {
        Some(home.to_path_buf())
    } else {
        text.strip_prefix("~/").map(|rest| home.join(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_matching_is_not_substring_matching() {
        assert_eq!(classify("/p/src/legit.git-helper.rs", None), None);
        assert_eq!(classify("/p/.github/workflows/ci.yml", None), None);
        assert!(classify("/p/.git/config", None).is_some());
        assert_eq!(classify("/p/.environment", None), None);
        assert_eq!(classify("/p/.env.example", None), None);
        assert!(matches!(
            classify("/p/.env.local", None),
            Some(Sensitivity::Credential(_))
        ));
    }

    #[test]
    fn names_compare_case_insensitively() {
        assert!(classify("/p/.GIT/hooks/pre-commit", None).is_some());
        assert!(classify("/h/.ZshRC", None).is_some());
        assert!(matches!(
            classify("/p/.ENV", None),
            Some(Sensitivity::Credential(_))
        ));
        let home = Path::new("/Users/Me/.config/riot");
        assert!(classify("/users/me/.config/riot/settings.json", Some(home)).is_some());
    }

    #[test]
    fn a_sessions_worktree_under_riots_home_is_a_checkout_not_configuration() {
        let home = Path::new("/h/riot");
        assert_eq!(
            classify("/h/riot/worktrees/app-1a2b3c4d/w1/src/main.rs", Some(home)),
            None
        );
        assert_eq!(
            classify("/u/.config/riot/worktrees/app-1/w1/new.txt", None),
            None
        );
        // Its records, the directories above it and the rest of the home
        // stay protected; so does the worktree's own `.git` file.
        for path in [
            "/h/riot/worktrees/app-1/.meta/w1.json",
            "/h/riot/worktrees/app-1",
            "/h/riot/worktrees",
            "/h/riot/settings.json",
        ] {
            assert!(
                matches!(
                    classify(path, Some(home)),
                    Some(Sensitivity::WriteSensitive(_))
                ),
                "{path}"
            );
        }
        assert!(
            classify(
                "/h/riot/worktrees/app-1/w1/.git/hooks/pre-commit",
                Some(home)
            )
            .is_some()
        );
    }

    #[test]
    fn ssh_public_keys_are_not_secrets_but_private_keys_are() {
        assert_eq!(classify("/h/.ssh/id_rsa.pub", None), None);
        assert!(matches!(
            classify("/h/.ssh/id_rsa", None),
            Some(Sensitivity::Credential(_))
        ));
        assert!(matches!(
            classify("/h/.ssh/config", None),
            Some(Sensitivity::WriteSensitive(_))
        ));
    }

    #[test]
    fn shapes() {
        assert!(shape_problem("C:\\x\\file.txt").is_none());
        assert!(shape_problem("/p/a.txt:stream").is_some());
        assert!(shape_problem("/p/PROGRA~1/x").is_some());
        assert!(shape_problem("/p/file.txt.").is_some());
        assert!(shape_problem("/p/nul.txt").is_some());
        assert!(shape_problem("/p/nullable.rs").is_none());
        assert_eq!(strip_verbatim("\\\\?\\C:\\x"), "C:\\x");
    }
}
