#![allow(clippy::disallowed_methods)] // finds the executable and makes the profile directory

//! The Browser capability: Debian's Chromium (or `browser.executable`)
//! driven over the DevTools protocol through a pipe (docs/browser.md).
//!
//! One browser per session, started on the first action with a private
//! profile directory, in its own process group (killed with the group on
//! `close`, when the session's browser is dropped, and by the watchdog if
//! Riot is killed). The host has already judged a URL's host before
//! `Navigate` reaches here; nothing in this module runs a script the model
//! wrote — the scripts it runs are its own, fixed ones.

mod cdp;
mod guard;
mod proxy;
mod snapshot;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use riot_protocol::{
    Browser, BrowserAction, BrowserError, BrowserHost, BrowserOptions, BrowserResult,
    BrowserTarget, ImageSource, NoBrowser,
};
use serde_json::{Value, json};

use cdp::Cdp;

/// Where a Chromium is looked for when `browser.executable` is not set.
const CANDIDATES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];

/// How long a page may take to finish loading.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The Chromium this system has: `/usr/bin/chromium`, or the first
/// Chromium or Chrome executable found on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    let debian = Path::new("/usr/bin/chromium");
    if debian.is_file() {
        return Some(debian.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| CANDIDATES.iter().map(move |name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Makes each session a [`ChromiumBrowser`] when a Chromium is found.
#[derive(Debug, Default, Clone, Copy)]
pub struct ChromiumHost;

impl BrowserHost for ChromiumHost {
    fn session_browser(&self, options: &BrowserOptions) -> Arc<dyn Browser> {
        let executable = match &options.executable {
            Some(path) => Some(path.clone()).filter(|p| p.is_file()),
            None => find_chromium(),
        };
        match executable {
            Some(executable) => Arc::new(ChromiumBrowser::new(executable, options.headless)),
            None => Arc::new(NoBrowser),
        }
    }
}

/// One session's browser.
#[derive(Debug)]
pub struct ChromiumBrowser {
    executable: PathBuf,
    headless: bool,
    state: tokio::sync::Mutex<Option<Running>>,
}

/// A started browser: the pipe, the page's session and the last
/// snapshot's refs.
#[derive(Debug)]
struct Running {
    cdp: Cdp,
    /// The browser's way out; stops with it.
    _proxy: proxy::Proxy,
    session: String,
    refs: HashMap<String, i64>,
    profile: PathBuf,
}

impl Drop for ChromiumBrowser {
    fn drop(&mut self) {
        // The session ended without `close`: the pipe's guard kills the
        // process group as it is dropped, then the profile goes.
        if let Some(running) = self.state.get_mut().take() {
            let profile = running.profile.clone();
            drop(running);
            let _ = std::fs::remove_dir_all(profile);
        }
    }
}

fn failed(what: impl Into<String>) -> BrowserError {
    BrowserError::Failed(what.into())
}

impl ChromiumBrowser {
    /// A browser that will run `executable` on first use.
    pub fn new(executable: PathBuf, headless: bool) -> Self {
        Self {
            executable,
            headless,
            state: tokio::sync::Mutex::new(None),
        }
    }

    /// The browser's process id while it runs (its process group's id).
    pub async fn pid(&self) -> Option<u32> {
        self.state.lock().await.as_ref().map(|r| r.cdp.pid)
    }

    async fn start(&self) -> Result<Running, BrowserError> {
        let profile = std::env::temp_dir().join(format!(
            "riot-browser-{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&profile)
                .map_err(|e| {
                    failed(format!(
                        "could not make the browser's profile directory ({e})"
                    ))
                })?;
        }
        let mut args: Vec<String> = vec![
            "--remote-debugging-pipe".into(),
            format!("--user-data-dir={}", profile.display()),
            "--no-first-run".into(),
            "--no-default-browser-check".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-extensions".into(),
            "--disable-default-apps".into(),
            "--disable-dev-shm-usage".into(),
            "--password-store=basic".into(),
            "--mute-audio".into(),
            "--window-size=1280,800".into(),
            // WebRTC's UDP does not pass the request guard: none at all.
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        ];
        // Every connection, loopback included, goes through Riot's proxy
        // (proxy.rs), which judges the address it connects to.
        let events: Arc<std::sync::Mutex<cdp::Events>> = Arc::default();
        let requests: Arc<guard::RequestGuard> = Arc::default();
        let proxy = proxy::Proxy::start(Arc::clone(&requests), Arc::clone(&events))
            .await
            .map_err(|e| failed(format!("could not start the browser's proxy ({e})")))?;
        args.push(format!("--proxy-server=http://127.0.0.1:{}", proxy.port));
        args.push("--proxy-bypass-list=<-loopback>".into());
        if self.headless {
            args.push("--headless=new".into());
        }
        // Chromium refuses to run as root with its own sandbox.
        // SAFETY: geteuid has no memory effects.
        if unsafe_geteuid() == 0 {
            args.push("--no-sandbox".into());
        }
        args.push("about:blank".into());
        let cdp = Cdp::start(&self.executable, &args, events, requests).map_err(|e| {
            failed(format!(
                "could not start {} ({e}); install Chromium or set `browser.executable`",
                self.executable.display()
            ))
        })?;
        let mut running = Running {
            cdp,
            _proxy: proxy,
            session: String::new(),
            refs: HashMap::new(),
            profile,
        };
        // Every page, frame and worker waits at its start until its
        // requests pause for the guard (cdp.rs `prepare_target`).
        running
            .cdp
            .call(
                None,
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
            )
            .await
            .map_err(|e| failed(format!("the browser did not start: {e}")))?;
        let target = running
            .cdp
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await
            .map_err(|e| failed(format!("the browser did not start: {e}")))?;
        let target_id = target["targetId"].as_str().unwrap_or_default().to_owned();
        let attached = running
            .cdp
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
            )
            .await
            .map_err(|e| failed(e.to_string()))?;
        running.session = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for method in ["Page.enable", "Runtime.enable", "Log.enable", "DOM.enable"] {
            running.call(method, json!({})).await?;
        }
        Ok(running)
    }
}

#[allow(unsafe_code)]
fn unsafe_geteuid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

impl Running {
    async fn call(&self, method: &str, params: Value) -> Result<Value, BrowserError> {
        self.cdp
            .call(Some(&self.session), method, params)
            .await
            .map_err(|e| failed(format!("{method} failed: {e}")))
    }

    /// A value computed by one of this module's own fixed scripts.
    async fn eval(&self, expression: &str) -> Result<Value, BrowserError> {
        let reply = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await?;
        Ok(reply["result"]["value"].clone())
    }

    async fn wait_loaded(&self) -> Result<(), BrowserError> {
        let deadline = tokio::time::Instant::now() + LOAD_TIMEOUT;
        loop {
            if self.eval("document.readyState").await?.as_str() == Some("complete") {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(failed(format!(
                    "the page did not finish loading within {} s",
                    LOAD_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// After an action that may start a navigation: let it begin, then
    /// wait for the document to load.
    async fn settle(&self) -> Result<(), BrowserError> {
        tokio::time::sleep(Duration::from_millis(150)).await;
        self.wait_loaded().await
    }

    async fn page(&self, text: String) -> Result<BrowserResult, BrowserError> {
        let info = self
            .eval("JSON.stringify([location.href, document.title])")
            .await?;
        let pair: Vec<String> = info
            .as_str()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        Ok(BrowserResult {
            url: pair.first().cloned().unwrap_or_default(),
            title: pair.get(1).cloned().unwrap_or_default(),
            text,
            image: None,
        })
    }

    async fn snapshot(&mut self) -> Result<BrowserResult, BrowserError> {
        let reply = self.call("Accessibility.getFullAXTree", json!({})).await?;
        let snap = snapshot::render(&reply);
        self.refs = snap.refs;
        self.page(snap.text).await
    }

    async fn node(&self, target: &BrowserTarget) -> Result<i64, BrowserError> {
        match target {
            BrowserTarget::Ref(r) => self.refs.get(r.trim()).copied().ok_or_else(|| {
                failed(format!(
                    "there is no element {r} in the last snapshot; take a snapshot and use one of its refs"
                ))
            }),
            BrowserTarget::Selector(selector) => {
                let doc = self.call("DOM.getDocument", json!({"depth": 0})).await?;
                let root = doc["root"]["nodeId"].as_i64().unwrap_or_default();
                let found = self
                    .cdp
                    .call(
                        Some(&self.session),
                        "DOM.querySelector",
                        json!({"nodeId": root, "selector": selector}),
                    )
                    .await
                    .map_err(|e| failed(format!("`{selector}` is not a valid CSS selector ({e})")))?;
                let node = found["nodeId"].as_i64().unwrap_or_default();
                if node == 0 {
                    return Err(failed(format!("no element matches `{selector}` on this page")));
                }
                let described = self.call("DOM.describeNode", json!({"nodeId": node})).await?;
                described["node"]["backendNodeId"]
                    .as_i64()
                    .ok_or_else(|| failed(format!("no element matches `{selector}` on this page")))
            }
        }
    }

    /// Runs one of this module's fixed functions on a node.
    async fn on_node(
        &self,
        node: i64,
        function: &str,
        args: Vec<Value>,
    ) -> Result<Value, BrowserError> {
        let resolved = self
            .call("DOM.resolveNode", json!({"backendNodeId": node}))
            .await?;
        let object = resolved["object"]["objectId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let args: Vec<Value> = args.into_iter().map(|v| json!({"value": v})).collect();
        let reply = self
            .call(
                "Runtime.callFunctionOn",
                json!({"objectId": object, "functionDeclaration": function, "arguments": args, "returnByValue": true}),
            )
            .await?;
        Ok(reply["result"]["value"].clone())
    }

    async fn click(&self, node: i64) -> Result<(), BrowserError> {
        let _ = self
            .call("DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node}))
            .await;
        let model = self
            .call("DOM.getBoxModel", json!({"backendNodeId": node}))
            .await
            .map_err(|_| failed("the element is not visible, so it cannot be clicked"))?;
        let quad: Vec<f64> = model["model"]["content"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        if quad.len() < 8 {
            return Err(failed(
                "the element has no box on the page, so it cannot be clicked",
            ));
        }
        let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
        let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await?;
        }
        Ok(())
    }

    async fn press(&self, key: &str) -> Result<(), BrowserError> {
        let (key, code, key_code, text) = key_info(key)
            .ok_or_else(|| failed(format!("`{key}` is not a key Riot knows; use a single character or a name such as Enter, Tab, Escape, Backspace, ArrowDown")))?;
        let mut down = json!({"type": if text.is_empty() { "rawKeyDown" } else { "keyDown" }, "key": key, "code": code, "windowsVirtualKeyCode": key_code});
        if !text.is_empty() {
            down["text"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down).await?;
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": key_code}),
        )
        .await?;
        Ok(())
    }

    /// Runs one action, then says which of the requests it caused were
    /// refused (guard.rs).
    async fn act(&mut self, action: BrowserAction) -> Result<BrowserResult, BrowserError> {
        // `console` lists refused requests among its lines already.
        let console = matches!(action, BrowserAction::Console);
        let result = self.perform(action).await;
        let blocked = std::mem::take(
            &mut self
                .cdp
                .events
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .blocked,
        );
        if blocked.is_empty() || console {
            return result;
        }
        let note = blocked.join("\n");
        match result {
            Ok(mut page) => {
                page.text = if page.text.is_empty() {
                    note
                } else {
                    format!("{}\n\n{note}", page.text)
                };
                Ok(page)
            }
            Err(BrowserError::Failed(why)) => Err(failed(format!("{why}\n{note}"))),
            Err(other) => Err(other),
        }
    }

    async fn perform(&mut self, action: BrowserAction) -> Result<BrowserResult, BrowserError> {
        match action {
            BrowserAction::Navigate { url } => {
                self.cdp.requests.approve(&url);
                let reply = self.call("Page.navigate", json!({"url": url})).await?;
                if let Some(error) = reply["errorText"].as_str().filter(|e| !e.is_empty()) {
                    return Err(failed(format!("loading {url} failed: {error}")));
                }
                self.wait_loaded().await?;
                self.snapshot().await
            }
            BrowserAction::Snapshot => self.snapshot().await,
            BrowserAction::Click { target } => {
                let node = self.node(&target).await?;
                self.click(node).await?;
                self.settle().await?;
                self.snapshot().await
            }
            BrowserAction::Type { target, text } => {
                let node = self.node(&target).await?;
                self.call("DOM.focus", json!({"backendNodeId": node}))
                    .await
                    .map_err(|_| failed("the element cannot take text (it cannot be focused)"))?;
                // Select what is there so the text replaces it.
                self.on_node(
                    node,
                    "function() { if (typeof this.select === 'function') { this.select(); } else { const r = document.createRange(); r.selectNodeContents(this); const s = getSelection(); s.removeAllRanges(); s.addRange(r); } }",
                    Vec::new(),
                )
                .await?;
                if text.is_empty() {
                    self.press("Delete").await?;
                } else {
                    self.call("Input.insertText", json!({"text": text})).await?;
                }
                self.snapshot().await
            }
            BrowserAction::Select { target, value } => {
                let node = self.node(&target).await?;
                let chosen = self
                    .on_node(
                        node,
                        "function(v) { if (!(this instanceof HTMLSelectElement)) { return 'not a select'; } const o = Array.from(this.options).find(o => o.value === v || o.label === v || o.text.trim() === v); if (!o) { return Array.from(this.options).map(o => o.value).join(', '); } this.value = o.value; this.dispatchEvent(new Event('input', {bubbles: true})); this.dispatchEvent(new Event('change', {bubbles: true})); return true; }",
                        vec![json!(value)],
                    )
                    .await?;
                match chosen {
                    Value::Bool(true) => {}
                    Value::String(s) if s == "not a select" => {
                        return Err(failed("the element is not a <select>; click it instead"));
                    }
                    Value::String(options) => {
                        return Err(failed(format!(
                            "the list has no option `{value}`; its options are: {options}"
                        )));
                    }
                    _ => return Err(failed("the option could not be chosen")),
                }
                self.settle().await?;
                self.snapshot().await
            }
            BrowserAction::Press { target, key } => {
                if let Some(target) = target {
                    let node = self.node(&target).await?;
                    self.call("DOM.focus", json!({"backendNodeId": node}))
                        .await?;
                }
                self.press(&key).await?;
                self.settle().await?;
                self.snapshot().await
            }
            BrowserAction::Screenshot => {
                let reply = self
                    .call("Page.captureScreenshot", json!({"format": "png"}))
                    .await?;
                let data = reply["data"].as_str().unwrap_or_default().to_owned();
                let mut result = self.page(String::new()).await?;
                result.text = format!("Screenshot of {} ({})", result.url, result.title);
                result.image = Some(ImageSource {
                    media_type: "image/png".into(),
                    data,
                });
                Ok(result)
            }
            BrowserAction::Console => {
                let lines: Vec<String> = std::mem::take(
                    &mut self
                        .cdp
                        .events
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .console,
                );
                let text = if lines.is_empty() {
                    "No console messages or errors since the last check.".to_owned()
                } else {
                    lines.join("\n")
                };
                self.page(text).await
            }
            BrowserAction::Back => {
                let history = self.call("Page.getNavigationHistory", json!({})).await?;
                let index = history["currentIndex"].as_u64().unwrap_or_default();
                let entries = history["entries"].as_array().cloned().unwrap_or_default();
                let Some(previous) = index
                    .checked_sub(1)
                    .and_then(|i| entries.get(usize::try_from(i).ok()?))
                else {
                    return Err(failed("there is no previous page in this tab's history"));
                };
                self.call(
                    "Page.navigateToHistoryEntry",
                    json!({"entryId": previous["id"]}),
                )
                .await?;
                self.settle().await?;
                self.snapshot().await
            }
            BrowserAction::Close => Ok(BrowserResult::default()),
        }
    }
}

/// `key`, `code`, Windows key code and the text a key types.
fn key_info(key: &str) -> Option<(String, String, u32, String)> {
    let named: &[(&str, u32, &str)] = &[
        ("Enter", 13, "\r"),
        ("Tab", 9, ""),
        ("Escape", 27, ""),
        ("Backspace", 8, ""),
        ("Delete", 46, ""),
        ("ArrowUp", 38, ""),
        ("ArrowDown", 40, ""),
        ("ArrowLeft", 37, ""),
        ("ArrowRight", 39, ""),
        ("Home", 36, ""),
        ("End", 35, ""),
        ("PageUp", 33, ""),
        ("PageDown", 34, ""),
        ("Space", 32, " "),
    ];
    if let Some((name, code, text)) = named.iter().find(|(n, ..)| n.eq_ignore_ascii_case(key)) {
        let key = if *name == "Space" { " " } else { name };
        return Some((
            (*key).to_owned(),
            (*name).to_owned(),
            *code,
            (*text).to_owned(),
        ));
    }
    let mut chars = key.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    let code = if c.is_ascii_alphabetic() {
        format!("Key{}", c.to_ascii_uppercase())
    } else if c.is_ascii_digit() {
        format!("Digit{c}")
    } else {
        String::new()
    };
    let key_code = u32::from(c.to_ascii_uppercase());
    Some((c.to_string(), code, key_code, c.to_string()))
}

#[async_trait]
impl Browser for ChromiumBrowser {
    fn available(&self) -> bool {
        true
    }

    async fn act(&self, action: BrowserAction) -> Result<BrowserResult, BrowserError> {
        let mut state = self.state.lock().await;
        if matches!(action, BrowserAction::Close) {
            if let Some(running) = state.take() {
                close(running).await;
                return Ok(BrowserResult {
                    text: "The browser is closed.".into(),
                    ..BrowserResult::default()
                });
            }
            return Ok(BrowserResult {
                text: "The browser was not running.".into(),
                ..BrowserResult::default()
            });
        }
        // A browser that died (killed, crashed) is started again.
        if let Some(running) = state.as_mut()
            && !running.cdp.running()
            && let Some(dead) = state.take()
        {
            close(dead).await;
        }
        if state.is_none() {
            *state = Some(self.start().await?);
        }
        let running = state.as_mut().ok_or(BrowserError::Unavailable)?;
        running.act(action).await
    }

    async fn close(&self) {
        if let Some(running) = self.state.lock().await.take() {
            close(running).await;
        }
    }
}

/// Kills the browser's process group, reaps it, then removes its profile.
async fn close(running: Running) {
    let Running { cdp, profile, .. } = running;
    cdp.kill().await;
    let _ = std::fs::remove_dir_all(&profile);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_what_chromium_expects() {
        assert_eq!(
            key_info("enter"),
            Some(("Enter".into(), "Enter".into(), 13, "\r".into()))
        );
        assert_eq!(
            key_info("a"),
            Some(("a".into(), "KeyA".into(), 65, "a".into()))
        );
        assert_eq!(key_info("Hyper"), None);
    }
}
