//! `riot serve`: ACP over a WebSocket on loopback, for the desktop app and
//! the browser (docs/interfaces.md, docs/design.md §2), and the web UI: the copy
//! built into this binary (`build.rs`), or `--ui-dir`. Prints exactly one line,
//! `Riot is serving at http://HOST:PORT/?token=TOKEN`, and nothing else on
//! stdout; logs go to the log file. `--cwd DIR` is offered to the page as
//! the project directory (`_meta.riot.defaultCwd` of `initialize`, and
//! `&cwd=` in the address `--open` opens). A `--host` that is not loopback is
//! refused (exit 2) unless `--allow-remote` is given, and then warned
//! about on stderr: the token travels in plain HTTP. Stops on SIGTERM, SIGINT, a client's
//! `_riot/shutdown`, or — with `--exit-on-stdin-eof` — when stdin closes;
//! running turns are cancelled and end before the process exits.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use riot_acp::{AcpConfig, Shutdown, WebUi, WsServer};
use riot_kernel::Kernel;
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::cli::flag_layer;
use crate::cli::{ServeArgs, SharedOptions};
use crate::world;
use riot_kernel::error::EXIT_USAGE;

/// Exit code after SIGINT (docs/interfaces.md: 130 interrupted).
const EXIT_INTERRUPTED: i32 = 130;

/// The built web UI (`desktop/ui/dist`, less source maps) as `build.rs`
/// found it; empty when it could not be built.
static EMBEDDED_UI: include_dir::Dir<'static> = include_dir::include_dir!("$OUT_DIR/ui");

/// Why the web UI is not embedded, and what to do about it; empty when it is.
const EMBEDDED_UI_MISSING: &str = env!("RIOT_UI_MISSING");

/// A file of the embedded web UI by its path from the UI's root.
fn embedded_file(path: &str) -> Option<&'static [u8]> {
    EMBEDDED_UI.get_file(path).map(include_dir::File::contents)
}

/// What a refused `--ui-dir` is told to pass instead.
const UI_DIR_HINT: &str = "pass the directory of the built web UI (it holds index.html)";

/// Why `--ui-dir` cannot be served; each says what to pass instead.
#[derive(Debug, thiserror::Error)]
enum UiDirError {
    /// The directory cannot be used.
    #[error("{0}; {hint}", hint = UI_DIR_HINT)]
    Dir(#[source] world::WorldError),
    /// The directory has no `index.html`.
    #[error("--ui-dir {} has no index.html; {hint}", dir.display(), hint = UI_DIR_HINT)]
    NoIndex {
        /// The directory as given.
        dir: std::path::PathBuf,
    },
}

impl UiDirError {
    /// The exit code: a usage error ([`EXIT_USAGE`]), the directory's own
    /// when that is what is wrong.
    fn exit_code(&self) -> i32 {
        match self {
            UiDirError::Dir(e) => e.exit_code(),
            UiDirError::NoIndex { .. } => EXIT_USAGE,
        }
    }
}

/// The web UI to serve: `--ui-dir`, else the embedded copy, else a page
/// saying why there is none.
fn web_ui(ui_dir: Option<&Path>) -> Result<WebUi, UiDirError> {
    let Some(dir) = ui_dir else {
        return Ok(if EMBEDDED_UI_MISSING.is_empty() {
            WebUi::Embedded(embedded_file)
        } else {
            tracing::warn!(why = EMBEDDED_UI_MISSING, "riot serve: no web UI to serve");
            WebUi::Missing(EMBEDDED_UI_MISSING.to_owned())
        });
    };
    let canonical = crate::world::existing_dir("--ui-dir", dir).map_err(UiDirError::Dir)?;
    if !canonical.join("index.html").is_file() {
        return Err(UiDirError::NoIndex {
            dir: dir.to_path_buf(),
        });
    }
    Ok(WebUi::Dir(canonical))
}

/// The query parameter of `value`: unreserved characters and `/` as they
/// are, every other byte percent-encoded.
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// 256 random bits from the OS, as 64 hex digits. No fallback: a token
/// that is not random would let any local process drive the agent.
fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Resolves when stdin reaches end of file (or fails). Read on a plain
/// thread, not the runtime's blocking pool: the runtime must not wait for
/// a read that never ends when a signal stops the server.
fn stdin_closed() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    rx
}

/// Writes `<home>/open.html`, owner-only, a page that goes on to `url`.
/// The browser is given this file, not the address: a command line is
/// visible to every local user, and the address carries the token.
fn redirect_page(home: &std::path::Path, url: &str) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = home.join("open.html");
    std::fs::create_dir_all(home)?;
    // A fresh file each time, so its mode is ours whatever was there.
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    // The address is ours (hex token, percent-encoded query); only `&`
    // needs escaping in an attribute.
    let url = url.replace('&', "&amp;");
    write!(
        file,
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0; url={url}\">\n\
         <title>Riot</title>\n<p>Opening Riot: <a href=\"{url}\">continue</a>.</p>\n"
    )?;
    Ok(path)
}

/// Opens `url` with `$BROWSER` (a command, given the URL as its argument)
/// or the desktop's opener (`xdg-open`, `open` on macOS). The browser
/// runs in its own process group with no stdio of ours, and is reaped on
/// a thread; it outlives the server, as a person's browser should.
fn open_browser(url: &str, browser: Option<&str>) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let program = browser
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .unwrap_or(opener);
    let mut words = program.split_whitespace();
    let name = words.next().unwrap_or(opener);
    #[allow(clippy::disallowed_methods)] // a face starts the person's browser
    let mut child = std::process::Command::new(name)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

/// Whether every address `host` names is loopback: an IP literal is
/// judged as it is, `localhost` is loopback, and any other name by what
/// it resolves to (a name that does not resolve is not loopback).
async fn is_loopback(host: &str, port: u16) -> bool {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return ip.to_canonical().is_loopback();
    }
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().to_canonical().is_loopback())
        }
        Err(_) => false,
    }
}

/// Why the server stopped.
enum Stop {
    Interrupt,
    Terminate,
    StdinClosed,
}

/// Runs `riot serve` until it is told to stop; returns the exit code.
pub async fn run(shared: &SharedOptions, args: &ServeArgs) -> i32 {
    let env = world::environment();
    let Setup {
        home,
        default_cwd,
        ui,
        remote,
    } = match check_setup(shared, args, &env).await {
        Ok(setup) => setup,
        Err(code) => return code,
    };
    let token = match random_token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("riot serve: cannot read random bytes for the token: {e}");
            return 1;
        }
    };
    // Handlers first, so a signal right after the line is printed counts.
    let (interrupt, terminate) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("riot serve: cannot handle signals: {e}");
            return 1;
        }
    };
    let stdin = args.exit_on_stdin_eof.then(stdin_closed);

    let browser = env.get("BROWSER").cloned();
    let caps = world::capabilities();
    let fs = Arc::clone(&caps.fs);
    let config = AcpConfig {
        kernel: Kernel::new(caps, home.clone())
            .with_language_servers(Arc::new(riot_lsp::LspHost))
            .with_browsers(world::browsers()),
        fs,
        env,
        flags: flag_layer(shared),
        trust_project: shared.trust_project,
        max_turns: shared.max_turns,
        default_cwd: default_cwd.clone(),
    };
    let server = match WsServer::bind(&args.host, args.port, config, token.clone(), ui).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "riot serve: cannot listen on {}:{}: {e}; choose another --port or --host",
                args.host, args.port
            );
            return 1;
        }
    };
    let addr = server.local_addr();
    let requested = server.shutdown();
    announce(addr, &token, remote);
    if args.open {
        open_page(
            &home,
            addr,
            &token,
            default_cwd.as_deref(),
            browser.as_deref(),
        );
    }

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let shutdown = async move {
        let why = wait_for_stop(interrupt, terminate, stdin).await;
        let _ = stop_tx.send(why);
    };
    if let Err(e) = server.run(shutdown).await {
        tracing::error!(error = %e, "riot serve: the server failed");
        eprintln!("riot serve: {e}");
        return 1;
    }
    stopped(stop_rx.await.ok(), &requested)
}

/// What `riot serve` checks before it binds.
struct Setup {
    /// Riot's home.
    home: std::path::PathBuf,
    /// `--cwd`, checked and canonical.
    default_cwd: Option<std::path::PathBuf>,
    ui: WebUi,
    /// `--host` is beyond loopback (allowed by `--allow-remote`).
    remote: bool,
}

/// Checks Riot's home, `--cwd`, `--ui-dir` and `--host`; `Err` is the
/// exit code, said on stderr.
async fn check_setup(
    shared: &SharedOptions,
    args: &ServeArgs,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Setup, i32> {
    let home = match world::riot_home(env) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("riot serve: {e}");
            return Err(e.exit_code());
        }
    };
    // A project directory given is checked now, in words, not at the
    // first session.
    let default_cwd = match &shared.cwd {
        None => None,
        Some(dir) => match crate::world::existing_dir("--cwd", dir) {
            Ok(dir) => Some(dir),
            Err(e) => {
                eprintln!("riot serve: {e}");
                return Err(e.exit_code());
            }
        },
    };
    let ui = match web_ui(args.ui_dir.as_deref()) {
        Ok(ui) => ui,
        Err(e) => {
            eprintln!("riot serve: {e}");
            return Err(e.exit_code());
        }
    };
    // Beyond loopback the token crosses the network in plain HTTP; only
    // on request, and with a warning.
    let remote = !is_loopback(&args.host, args.port).await;
    if remote && !args.allow_remote {
        eprintln!(
            "riot serve: --host {} is not a loopback address; pass --allow-remote to serve beyond this machine",
            args.host
        );
        return Err(EXIT_USAGE);
    }
    Ok(Setup {
        home,
        default_cwd,
        ui,
        remote,
    })
}

/// Logs that the server listens at `addr`, warns on stderr when that is
/// beyond loopback, and prints the one line of stdout: the address with
/// its token.
fn announce(addr: SocketAddr, token: &str, remote: bool) {
    tracing::info!(%addr, "riot serve: listening");
    if remote {
        tracing::warn!(%addr, "riot serve: serving beyond loopback (--allow-remote)");
        eprintln!(
            "riot serve: warning: listening on {addr}, beyond this machine (--allow-remote): the token travels in plain HTTP, and anyone on the network who sees it can drive the agent"
        );
    }
    let mut out = std::io::stdout().lock();
    let printed =
        writeln!(out, "Riot is serving at http://{addr}/?token={token}").and_then(|()| out.flush());
    if let Err(e) = printed {
        tracing::warn!(error = %e, "riot serve: cannot print the address");
    }
}

/// `--open`: opens the served page in a browser, through a redirect page
/// in `home`; says on stderr when it cannot.
fn open_page(
    home: &Path,
    addr: SocketAddr,
    token: &str,
    default_cwd: Option<&Path>,
    browser: Option<&str>,
) {
    // The page pre-fills its project directory from `&cwd=`.
    let mut url = format!("http://{addr}/?token={token}");
    if let Some(cwd) = default_cwd.and_then(Path::to_str) {
        url.push_str("&cwd=");
        url.push_str(&query_value(cwd));
    }
    let opened = redirect_page(home, &url)
        .and_then(|page| open_browser(&format!("file://{}", page.display()), browser));
    if let Err(e) = opened {
        eprintln!("riot serve: cannot open a browser ({e}); open the printed address yourself");
    }
}

/// Resolves with the first of SIGINT, SIGTERM and — when watched — the end
/// of stdin.
async fn wait_for_stop(
    mut interrupt: Signal,
    mut terminate: Signal,
    stdin: Option<tokio::sync::oneshot::Receiver<()>>,
) -> Stop {
    tokio::select! {
        _ = interrupt.recv() => Stop::Interrupt,
        _ = terminate.recv() => Stop::Terminate,
        _ = async {
            match stdin {
                Some(rx) => { let _ = rx.await; }
                None => std::future::pending::<()>().await,
            }
        } => Stop::StdinClosed,
    }
}

/// Logs why the server stopped (`None`: not by a signal or stdin) and
/// gives the exit code: 130 after SIGINT, else 0.
fn stopped(why: Option<Stop>, requested: &Shutdown) -> i32 {
    match why {
        Some(Stop::Interrupt) => {
            tracing::info!("riot serve: stopped by SIGINT");
            EXIT_INTERRUPTED
        }
        Some(Stop::Terminate) => {
            tracing::info!("riot serve: stopped by SIGTERM");
            0
        }
        Some(Stop::StdinClosed) => {
            tracing::info!("riot serve: stdin closed; stopped");
            0
        }
        None => {
            if requested.is_triggered() {
                tracing::info!("riot serve: stopped by _riot/shutdown");
            }
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ui_dir_that_cannot_be_served_says_what_to_pass_and_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("dist");
        let Err(e) = web_ui(Some(&missing)) else {
            panic!("a missing --ui-dir was served");
        };
        assert_eq!(
            e.to_string(),
            format!(
                "--ui-dir {} does not exist; pass the directory of the built web UI (it holds index.html)",
                missing.display()
            )
        );
        assert_eq!(e.exit_code(), EXIT_USAGE);
        let Err(e) = web_ui(Some(dir.path())) else {
            panic!("a --ui-dir without index.html was served");
        };
        assert!(matches!(e, UiDirError::NoIndex { .. }), "{e}");
        assert_eq!(e.exit_code(), EXIT_USAGE);
    }
}
