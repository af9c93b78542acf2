//! `riot-desktop`: Riot's desktop app (docs/design.md §2). A thin Tauri 2
//! shell: it starts `riot serve` under [`riot_supervisor`] (own process
//! group, restart with backoff, give up after 5 crashes and say so,
//! graceful then forced shutdown), shows the served page
//! (`http://127.0.0.1:PORT/?token=…`) in its window so the WebSocket's
//! Origin is the server's own, and gives that page two native services:
//! a folder picker and a notification when the window is not focused.
//!
//! Which `riot` runs: `$RIOT_BIN`, else the `riot` beside this program,
//! else `riot` on the PATH. Which web UI it serves: `$RIOT_UI_DIR`, else a
//! `ui/` directory beside this program, else (a development build) the
//! repository's `desktop/ui/dist` when built; else riot serve's own page.
//! Everything else (provider, model, `RIOT_HOME`) is the environment's,
//! as for `riot` itself.

#![allow(clippy::disallowed_methods)] // a face: reads its environment and the file system

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use riot_supervisor::{Policy, ServeCommand, Status, Supervisor};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, RunEvent, Url, WebviewUrl, WebviewWindow, WebviewWindowBuilder};
use tauri_plugin_dialog::DialogExt;
use tauri_plugin_notification::NotificationExt;

/// The window's label; the capability in `capabilities/` names it.
const MAIN: &str = "main";

/// The served page's origin (`http://127.0.0.1:PORT`) while one is up:
/// the only remote place the window may navigate to.
type ServedOrigin = Arc<Mutex<Option<String>>>;

fn riot_program() -> PathBuf {
    if let Some(path) = std::env::var_os("RIOT_BIN") {
        return PathBuf::from(path);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("riot")));
    match beside {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("riot"),
    }
}

fn ui_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RIOT_UI_DIR") {
        return Some(PathBuf::from(dir));
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("ui")));
    let development = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist");
    [beside, Some(development)]
        .into_iter()
        .flatten()
        .find(|dir| dir.join("index.html").is_file())
}

fn serve_command() -> ServeCommand {
    let mut command = ServeCommand::new(riot_program());
    if let Some(dir) = ui_dir() {
        command = command.arg("--ui-dir").arg(dir);
    }
    command
}

/// `http://127.0.0.1:PORT` of a served page's address.
fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The page to show for a status, if it changes what the window shows.
fn page_for(status: &Status, start_page: &Url) -> Option<Url> {
    let with_fragment = |kind: &str, reason: &str| {
        let mut page = start_page.clone();
        let encoded: String = reason
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    char::from(b).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        page.set_fragment(Some(&format!("{kind}={encoded}")));
        page
    };
    match status {
        Status::Ready { url, .. } => Url::parse(url).ok(),
        Status::Restarting { reason, .. } => Some(with_fragment("restarting", reason)),
        Status::GaveUp { reason, .. } => Some(with_fragment("gave-up", reason)),
        Status::Starting { .. } | Status::Stopped => None,
    }
}

/// Follows the supervisor: shows the served page when it is up, the start
/// page with the reason while it restarts or after giving up.
async fn follow(
    mut status: tokio::sync::watch::Receiver<Status>,
    window: WebviewWindow,
    served: ServedOrigin,
) {
    let Ok(start_page) = window.url() else {
        return;
    };
    loop {
        let current = status.borrow_and_update().clone();
        match &current {
            Status::Ready { url, pid } => {
                if let Ok(page) = Url::parse(url) {
                    tracing::info!(
                        pid,
                        "riot-desktop: riot serve is up at {}",
                        origin_of(&page)
                    );
                    if let Ok(mut origin) = served.lock() {
                        *origin = Some(origin_of(&page));
                    }
                }
            }
            Status::Restarting {
                crashes, reason, ..
            } => {
                tracing::warn!(crashes, "riot-desktop: restarting riot serve: {reason}");
            }
            Status::GaveUp { reason, .. } => {
                tracing::error!("riot-desktop: gave up on riot serve: {reason}");
            }
            Status::Starting { .. } | Status::Stopped => {}
        }
        if let Some(page) = page_for(&current, &start_page)
            && let Err(e) = window.navigate(page)
        {
            tracing::warn!(error = %e, "riot-desktop: cannot show the page");
        }
        if status.changed().await.is_err() {
            return;
        }
    }
}

/// Whether the window may go to `url`: its own start page, or the page
/// the supervised server serves. Anything else (a link in a reply) is
/// opened by nobody: the window never leaves Riot.
fn may_navigate(url: &Url, served: &ServedOrigin) -> bool {
    // The start page: `tauri://localhost` (Linux, macOS) or
    // `http://tauri.localhost` (Windows), exactly.
    let start_page = match url.scheme() {
        "tauri" => url.host_str() == Some("localhost") && url.port().is_none(),
        "http" | "https" => url.host_str() == Some("tauri.localhost") && url.port().is_none(),
        _ => false,
    };
    if start_page {
        return true;
    }
    served
        .lock()
        .map(|origin| origin.as_deref() == Some(origin_of(url).as_str()))
        .unwrap_or(false)
}

/// The native folder picker; the chosen directory's path, or nothing if
/// the person cancelled.
#[tauri::command]
async fn pick_folder(app: AppHandle) -> Option<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Choose a project folder")
        .pick_folder(move |path| {
            let _ = tx.send(path);
        });
    let path = rx.await.ok().flatten()?.into_path().ok()?;
    Some(path.display().to_string())
}

/// A desktop notification (a turn ended, a permission is waiting): while
/// the window is not focused, or, with `other_session`, for a session the
/// page is not showing even while it is focused (the page decides which,
/// see docs/parallel.md). Whether one was sent.
#[tauri::command]
fn notify(
    app: AppHandle,
    window: WebviewWindow,
    title: String,
    body: String,
    other_session: Option<bool>,
) -> bool {
    let focused = window.is_focused().unwrap_or(false);
    let shown = (!focused || other_session == Some(true))
        && app
            .notification()
            .builder()
            .title(title)
            .body(body)
            .show()
            .is_ok();
    // What was said stays private; that the page reached us is logged.
    tracing::info!(
        focused,
        other_session,
        shown,
        "riot-desktop: the page asked for a notification"
    );
    shown
}

/// With `RIOT_DESKTOP_SELF_CHECK` set, the served page, once loaded, calls
/// `notify` through the IPC bridge as the web UI does: the smoke test
/// sees the call arrive, so the capability really lets the served origin
/// reach the shell.
const SELF_CHECK: &str = "window.__TAURI_INTERNALS__.invoke('notify', \
    {title: 'Riot', body: 'self-check'}).catch((e) => console.error('riot self-check', e));";

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RIOT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();

    let command = serve_command();
    tracing::info!(program = %command.program.display(), "riot-desktop: starting riot serve");
    // Supervisor::start spawns on the current runtime: enter Tauri's.
    let supervisor =
        tauri::async_runtime::block_on(
            async move { Supervisor::start(command, Policy::default()) },
        );
    let status = supervisor.status();
    let supervisor = Arc::new(Mutex::new(Some(supervisor)));
    let served: ServedOrigin = Arc::new(Mutex::new(None));

    let navigation = Arc::clone(&served);
    let self_check = std::env::var_os("RIOT_DESKTOP_SELF_CHECK").is_some();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(tauri::generate_handler![pick_folder, notify])
        .setup(move |app| {
            let window = WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
                .title("Riot")
                .inner_size(1200.0, 800.0)
                .min_inner_size(640.0, 480.0)
                .on_navigation(move |url| may_navigate(url, &navigation))
                .on_page_load(move |webview, payload| {
                    if payload.event() == PageLoadEvent::Finished {
                        // Never the token: origin and path only.
                        let url = payload.url();
                        tracing::info!("riot-desktop: showing {}{}", origin_of(url), url.path());
                        if self_check && url.scheme() == "http" {
                            let _ = webview.eval(SELF_CHECK);
                        }
                    }
                })
                .build()?;
            tauri::async_runtime::spawn(follow(status, window, served));
            // Session end (SIGTERM, SIGHUP) and Ctrl-C close the app the
            // normal way, so the server is stopped politely too.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::hangup()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                    _ = hup.recv() => {}
                }
                tracing::info!("riot-desktop: asked to quit");
                handle.exit(0);
            });
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            tracing::error!("riot-desktop: cannot start the window: {e}");
            if let Some(supervisor) = supervisor.lock().ok().and_then(|mut s| s.take()) {
                tauri::async_runtime::block_on(supervisor.shutdown());
            }
            std::process::exit(1);
        }
    };
    app.run(move |_, event| {
        if let RunEvent::Exit = event
            && let Some(supervisor) = supervisor.lock().ok().and_then(|mut s| s.take())
        {
            let how = tauri::async_runtime::block_on(supervisor.shutdown());
            tracing::info!("riot-desktop: riot serve stopped ({how:?})");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_travel_in_the_start_page_fragment() {
        let start = Url::parse("tauri://localhost/index.html").unwrap();
        let page = page_for(
            &Status::GaveUp {
                crashes: 5,
                reason: "exited with code 1; its last output:\nno such file: a b".into(),
            },
            &start,
        )
        .unwrap();
        assert_eq!(
            page.as_str(),
            "tauri://localhost/index.html#gave-up=exited%20with%20code%201%3B%20its%20last%20output%3A%0Ano%20such%20file%3A%20a%20b"
        );
        let ready = Status::Ready {
            url: "http://127.0.0.1:4000/?token=abc".into(),
            pid: 1,
        };
        assert_eq!(
            page_for(&ready, &start).unwrap().as_str(),
            "http://127.0.0.1:4000/?token=abc"
        );
        assert_eq!(page_for(&Status::Starting { attempt: 2 }, &start), None);
    }

    #[test]
    fn the_window_goes_only_to_its_start_page_and_the_served_origin() {
        let served: ServedOrigin = Arc::new(Mutex::new(None));
        let at = |s: &str| Url::parse(s).unwrap();
        assert!(may_navigate(&at("tauri://localhost/index.html#x"), &served));
        assert!(!may_navigate(
            &at("http://127.0.0.1:4000/?token=a"),
            &served
        ));
        *served.lock().unwrap() = Some("http://127.0.0.1:4000".into());
        assert!(may_navigate(&at("http://127.0.0.1:4000/?token=a"), &served));
        assert!(!may_navigate(&at("http://127.0.0.1:4001/"), &served));
        assert!(!may_navigate(&at("https://example.com/"), &served));
        assert!(!may_navigate(&at("http://localhost:4000/"), &served));
        assert!(!may_navigate(&at("tauri://evil.example/"), &served));
        assert!(!may_navigate(&at("http://tauri.localhost:8080/"), &served));
        assert!(may_navigate(
            &at("http://tauri.localhost/index.html"),
            &served
        ));
    }
}
