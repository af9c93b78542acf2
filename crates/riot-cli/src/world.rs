//! The real world a face hands the kernel: file system, processes, clock,
//! ids, the environment, and where Riot's home is.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use riot_kernel::Capabilities;
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};

/// The process environment as a map.
pub fn environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// `$RIOT_HOME`, else `$XDG_CONFIG_HOME/riot`, else `~/.config/riot`.
pub fn riot_home(env: &BTreeMap<String, String>) -> Result<PathBuf, String> {
    if let Some(home) = env.get("RIOT_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    if let Some(xdg) = env.get("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(xdg).join("riot"));
    }
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".config/riot"))
        .ok_or_else(|| "cannot find a home directory: set RIOT_HOME".to_owned())
}

/// The project directory: `--cwd`, else the current directory, made absolute.
pub fn project_dir(flag: Option<&PathBuf>) -> Result<PathBuf, String> {
    let current =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let dir = match flag {
        Some(d) if d.is_absolute() => d.clone(),
        Some(d) => current.join(d),
        None => current,
    };
    if !dir.is_dir() {
        return Err(format!("--cwd {}: not a directory", dir.display()));
    }
    // Canonical, so sessions and trust match however the path was typed.
    dir.canonicalize()
        .map_err(|e| format!("--cwd {}: {e}", dir.display()))
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
        seed: hasher.finish(),
    }
}
