//! The real world a face hands the kernel: file system, processes, clock,
//! ids, the environment, and where Riot's home is.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_kernel::Capabilities;
use riot_kernel::error::EXIT_USAGE;
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};

/// The process environment as a map.
pub fn environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// Why Riot's home or a directory the person named cannot be used. Each
/// is said in words, never as a bare OS error, and is a usage error.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// Neither `RIOT_HOME`, an absolute `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("cannot find a home directory: set RIOT_HOME")]
    NoHome,
    /// A relative home that cannot be made absolute.
    #[error("cannot make Riot's home {} absolute: {source}", home.display())]
    RelativeHome {
        /// The home as given.
        home: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The directory given with `flag`, or a part of its path, does not exist.
    #[error("{flag} {} does not exist", dir.display())]
    Missing {
        /// The flag that named it (`--cwd`, `--ui-dir`).
        flag: &'static str,
        /// The directory as given.
        dir: PathBuf,
    },
    /// The directory given with `flag` cannot be reached.
    #[error("{flag} {} cannot be reached: permission denied", dir.display())]
    Denied {
        /// The flag that named it.
        flag: &'static str,
        /// The directory as given.
        dir: PathBuf,
    },
    /// The directory given with `flag` cannot be opened for another reason.
    #[error("{flag} {} cannot be opened: {}", dir.display(), source.kind())]
    Unopenable {
        /// The flag that named it.
        flag: &'static str,
        /// The directory as given.
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// What was given with `flag` is not a directory.
    #[error("{flag} {} is not a directory", dir.display())]
    NotADirectory {
        /// The flag that named it.
        flag: &'static str,
        /// The path as given.
        dir: PathBuf,
    },
}

impl WorldError {
    /// The exit code: every one is a usage error ([`EXIT_USAGE`]), as a
    /// refusal of the kernel's is.
    pub fn exit_code(&self) -> i32 {
        EXIT_USAGE
    }
}

/// `$RIOT_HOME`, else `$XDG_CONFIG_HOME/riot` (when absolute), else
/// `~/.config/riot`; a relative one is taken from the current directory, so that what Riot
/// keeps there (worktrees, which git makes from the project) never lands
/// inside the project.
pub fn riot_home(env: &BTreeMap<String, String>) -> Result<PathBuf, WorldError> {
    let home = if let Some(home) = env.get("RIOT_HOME").filter(|h| !h.is_empty()) {
        PathBuf::from(home)
    } else if let Some(xdg) = env
        .get("XDG_CONFIG_HOME")
        // The XDG rule: a relative value is ignored.
        .filter(|h| Path::new(h).is_absolute())
    {
        PathBuf::from(xdg).join("riot")
    } else {
        env.get("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".config/riot"))
            .ok_or(WorldError::NoHome)?
    };
    if home.is_absolute() {
        return Ok(home);
    }
    std::path::absolute(&home).map_err(|source| WorldError::RelativeHome { home, source })
}

/// The project directory: `--cwd`, else the current directory, made absolute.
pub fn project_dir(flag: Option<&PathBuf>) -> Result<PathBuf, WorldError> {
    let current = std::env::current_dir().map_err(WorldError::CurrentDir)?;
    let dir = match flag {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => current.join(d),
        None => current,
    };
    // Canonical, so sessions and trust match however the path was typed.
    existing_dir("--cwd", &dir)
}

/// `dir` made absolute and canonical, or why not, in words: `FLAG DIR
/// does not exist`, `… is not a directory`, never a bare OS error.
#[allow(clippy::disallowed_methods)] // a face checks the person's own path
pub fn existing_dir(flag: &'static str, dir: &Path) -> Result<PathBuf, WorldError> {
    let why = |source: std::io::Error| {
        let dir = dir.to_path_buf();
        match source.kind() {
            // `NotADirectory` here: a part of the path is a file.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                WorldError::Missing { flag, dir }
            }
            std::io::ErrorKind::PermissionDenied => WorldError::Denied { flag, dir },
            _ => WorldError::Unopenable { flag, dir, source },
        }
    };
    let meta = std::fs::metadata(dir).map_err(why)?;
    if !meta.is_dir() {
        return Err(WorldError::NotADirectory {
            flag,
            dir: dir.to_path_buf(),
        });
    }
    std::fs::canonicalize(dir).map_err(why)
}

/// Real capabilities.
pub fn capabilities() -> Capabilities {
    // A well-mixed seed for retry jitter from the std library's per-process
    // random hasher keys.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(std::process::id().into());
    Capabilities {
        fs: Arc::new(RealFs),
        proc: Arc::new(RealProcessRunner::new()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds::new()),
        web: Arc::new(riot_runtime::HttpWeb),
        terminals: Arc::new(riot_runtime::PtyTerminalHost),
        // Bash's commands run in the OS sandbox; the helper in front of
        // each is this binary (`riot __sandbox-exec`).
        sandbox: Arc::new(riot_runtime::RealSandbox::new(sandbox_helper())),
        seed: hasher.finish(),
    }
}

/// The sandbox helper: this executable, which answers `__sandbox-exec`.
fn sandbox_helper() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("riot"))
}

/// What makes each session's browser (docs/browser.md): Debian's Chromium
/// or `browser.executable`; none with `RIOT_BROWSER=off` (tests that pin
/// the tool list, which a found Chromium would change).
pub fn browsers() -> Arc<dyn riot_protocol::BrowserHost> {
    if std::env::var("RIOT_BROWSER").is_ok_and(|v| v == "off") {
        Arc::new(riot_protocol::NoBrowserHost)
    } else {
        Arc::new(riot_runtime::ChromiumHost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // compares with the real current directory
    fn riot_home_is_always_absolute() {
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            riot_home(&env(&[("RIOT_HOME", "rh")])).unwrap(),
            here.join("rh")
        );
        assert_eq!(
            riot_home(&env(&[("RIOT_HOME", "/abs/rh"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/abs/rh")
        );
        assert_eq!(
            riot_home(&env(&[("XDG_CONFIG_HOME", "/cfg"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/cfg/riot")
        );
        // A relative XDG_CONFIG_HOME is ignored, as the XDG rule says.
        assert_eq!(
            riot_home(&env(&[("XDG_CONFIG_HOME", "cfg"), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.config/riot")
        );
        assert_eq!(
            riot_home(&env(&[("RIOT_HOME", ""), ("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.config/riot")
        );
        assert_eq!(
            riot_home(&env(&[])).unwrap_err().to_string(),
            "cannot find a home directory: set RIOT_HOME"
        );
    }

    #[test]
    fn a_directory_that_cannot_be_used_is_said_in_words_and_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let e = existing_dir("--cwd", &missing).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("--cwd {} does not exist", missing.display())
        );
        assert_eq!(e.exit_code(), 2);
        let file = dir.path().join("file");
        std::fs::File::create(&file).unwrap();
        let e = existing_dir("--ui-dir", &file).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("--ui-dir {} is not a directory", file.display())
        );
        // A part of the path that is a file: the directory does not exist.
        let e = existing_dir("--cwd", &file.join("sub")).unwrap_err();
        assert!(
            matches!(e, WorldError::Missing { flag: "--cwd", .. }),
            "{e}"
        );
    }
}
