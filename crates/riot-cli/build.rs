//! Builds the web UI into `riot`, so `riot serve` shows it without
//! `--ui-dir` (`serve.rs` embeds `$OUT_DIR/ui` with `include_dir!`).
//!
//! - `desktop/ui/dist/index.html` exists: the built files, less source
//!   maps, are copied to `$OUT_DIR/ui`, once every file `index.html` links
//!   to is there (a half-written `dist` is not embedded).
//! - It is missing and `npm` runs: it is built first (`npm ci` too when
//!   `node_modules` is missing), holding a lock on `desktop/ui/package.json`
//!   so two builds never run npm on the same tree at once.
//! - Otherwise the build still succeeds: `$OUT_DIR/ui` stays empty, a
//!   `cargo:warning` says what to install and run, and `RIOT_UI_MISSING`
//!   carries the same sentence to the page `riot serve` shows instead.
//!
//! In a release build for x86_64 Linux it also hands the linker
//! `link/hot-functions.txt`, so the functions a session runs sit together
//! in the binary (see [`hot_functions_first`]).
//!
//! npm runs only when `dist` is missing: `scripts/test` builds `dist`
//! before any Rust is compiled, so in CI this only copies. Cargo reruns
//! this script only when `dist` changes (while it is missing: when
//! anything under `desktop/ui` does), so an ordinary build skips it.

#![allow(clippy::disallowed_methods)] // a build script reads real files and runs npm
#![allow(clippy::print_stdout)] // its stdout is how it talks to Cargo

use std::error::Error;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What to do when the UI cannot be embedded, for the warning and the page.
const HOW: &str = "install Node.js 20 (or later) and npm, then run \
    `npm ci --prefix desktop/ui && npm run build --prefix desktop/ui` and build riot again, \
    or start `riot serve --ui-dir DIR` with a built web UI";

fn main() -> Result<(), Box<dyn Error>> {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").ok_or("no CARGO_MANIFEST_DIR")?);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("no OUT_DIR")?).join("ui");
    let ui = manifest.join("../../desktop/ui");
    let ui = ui.canonicalize().unwrap_or(ui);
    let dist = ui.join("dist");

    // A fresh, empty copy each run: what is in it is what gets embedded.
    match std::fs::remove_dir_all(&out) {
        Err(e) if e.kind() != ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    std::fs::create_dir_all(&out)?;

    let missing = match embed(&ui, &dist, &out) {
        Ok(()) => String::new(),
        Err(why) => {
            // Whatever was copied before the problem showed is not embedded.
            std::fs::remove_dir_all(&out)?;
            std::fs::create_dir_all(&out)?;
            let sentence = format!("the web UI is not embedded: {}", why.reason);
            println!("cargo::warning={sentence}");
            for line in why.details {
                println!("cargo::warning=  {line}");
            }
            sentence
        }
    };
    println!("cargo::rustc-env=RIOT_UI_MISSING={missing}");
    hot_functions_first(&manifest);

    // What a rerun could change: the built UI, or while there is none,
    // the UI's sources and packages (a build there creates `dist`).
    if dist.join("index.html").is_file() {
        println!("cargo::rerun-if-changed={}", dist.display());
    } else if ui.is_dir() {
        println!("cargo::rerun-if-changed={}", ui.display());
    } else {
        println!("cargo::rerun-if-changed=build.rs");
    }
    Ok(())
}

/// Asks the linker to put the functions in `link/hot-functions.txt` first,
/// in that order: the ones a `riot exec` session runs, as
/// `scripts/symbol-order generate` recorded them. The kernel maps a
/// binary's code in 64 KiB blocks around each page a process touches, so
/// the same 2.7 MB of code scattered over 21 MB kept 10.7 MiB resident;
/// placed together it keeps about its own size (docs/memory.md).
///
/// Only where the linker is known to be LLD, which reads the list: a
/// release build for `x86_64-unknown-linux-gnu`, whose default linker is
/// Rust's own LLD, without a linker chosen in the flags or the
/// environment. A name the binary lacks is skipped quietly: the list
/// grows stale, never wrong (`scripts/symbol-order measure` says how
/// stale).
fn hot_functions_first(manifest: &Path) {
    let list = manifest.join("link/hot-functions.txt");
    println!("cargo::rerun-if-changed={}", list.display());
    println!("cargo::rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = flags.contains("linker")
        || flags.contains("link-self-contained")
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some();
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || own_linker
        || !list.is_file()
    {
        return;
    }
    println!(
        "cargo::rustc-link-arg-bin=riot=-Wl,--symbol-ordering-file={}",
        list.display()
    );
    println!("cargo::rustc-link-arg-bin=riot=-Wl,--no-warn-symbol-ordering");
}

/// Why the UI is not embedded: one sentence, and lines only for the build log.
struct NotEmbedded {
    reason: String,
    details: Vec<String>,
}

impl NotEmbedded {
    fn new(reason: String) -> Self {
        Self {
            reason,
            details: Vec::new(),
        }
    }
}

/// Copies the built UI into `out`, building it first when it is missing
/// and npm can.
fn embed(ui: &Path, dist: &Path, out: &Path) -> Result<(), NotEmbedded> {
    let index = dist.join("index.html");
    if !index.is_file() {
        if !ui.join("package.json").is_file() {
            return Err(NotEmbedded::new(
                "the web UI's sources (desktop/ui) are not beside this crate; \
                 start `riot serve --ui-dir DIR` with a built web UI"
                    .to_owned(),
            ));
        }
        build(ui, &index)?;
    }
    copy_dir(dist, out).map_err(|e| {
        NotEmbedded::new(format!(
            "cannot copy desktop/ui/dist ({e}); run `npm run build --prefix desktop/ui` and build riot again"
        ))
    })?;
    let html = std::fs::read_to_string(out.join("index.html")).map_err(|e| {
        NotEmbedded::new(format!(
            "cannot read desktop/ui/dist/index.html ({e}); run `npm run build --prefix desktop/ui` and build riot again"
        ))
    })?;
    for link in local_links(&html) {
        if !out.join(link).is_file() {
            return Err(NotEmbedded::new(format!(
                "desktop/ui/dist/index.html links to {link}, which is not in desktop/ui/dist \
                 (was it being rebuilt?); run `npm run build --prefix desktop/ui` and build riot again"
            )));
        }
    }
    Ok(())
}

/// `npm ci` (when `node_modules` is missing) and `npm run build` in `ui`,
/// unless another build made `index` while this one waited for the lock.
fn build(ui: &Path, index: &Path) -> Result<(), NotEmbedded> {
    if !npm(ui, &["--version"]).is_ok_and(|o| o.status.success()) {
        return Err(NotEmbedded::new(format!(
            "desktop/ui/dist is not built and npm was not found; {HOW}"
        )));
    }
    // Held until this function returns; npm never locks package.json.
    let lock = std::fs::File::open(ui.join("package.json"))
        .and_then(|file| file.lock().map(|()| file))
        .map_err(|e| {
            NotEmbedded::new(format!("cannot lock desktop/ui/package.json ({e}); {HOW}"))
        })?;
    if index.is_file() {
        return Ok(());
    }
    let steps: &[&[&str]] = if ui.join("node_modules").is_dir() {
        &[&["run", "build"]]
    } else {
        &[&["ci", "--no-audit", "--no-fund"], &["run", "build"]]
    };
    for args in steps {
        let shown = format!("npm {} --prefix desktop/ui", args.join(" "));
        println!("cargo::warning=desktop/ui/dist is missing; running `{shown}`");
        let ran = npm(ui, args)
            .map_err(|e| NotEmbedded::new(format!("`{shown}` could not start ({e}); {HOW}")))?;
        if !ran.status.success() {
            let mut why = NotEmbedded::new(format!(
                "`{shown}` failed ({}); run it to see why, fix that and build riot again, \
                 or start `riot serve --ui-dir DIR` with a built web UI",
                ran.status
            ));
            why.details = last_lines(&ran.stdout, &ran.stderr, 12);
            return Err(why);
        }
    }
    drop(lock);
    if index.is_file() {
        Ok(())
    } else {
        Err(NotEmbedded::new(format!(
            "`npm run build --prefix desktop/ui` succeeded but made no desktop/ui/dist/index.html; {HOW}"
        )))
    }
}

/// Runs `npm ARGS` in `ui`, without our stdin; its output is collected.
fn npm(ui: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("npm")
        .args(args)
        .current_dir(ui)
        // Cargo's `DEBUG` means something else to Node's `debug` package.
        .env_remove("DEBUG")
        .stdin(Stdio::null())
        .output()
}

/// The last `n` non-empty lines of a command's output.
fn last_lines(stdout: &[u8], stderr: &[u8], n: usize) -> Vec<String> {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(stdout),
        String::from_utf8_lossy(stderr)
    );
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

/// Copies `from` into `to`, directories included, leaving out source maps.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() || source.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&source, &target)?;
        } else if source.extension().is_none_or(|e| e != "map") {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

/// The page's own files `html` loads (`src="…"` and `href="…"` that are
/// relative paths), without a leading `./`.
fn local_links(html: &str) -> Vec<&str> {
    let mut links = Vec::new();
    for attribute in ["src=\"", "href=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attribute) {
            rest = &rest[at + attribute.len()..];
            let Some(end) = rest.find('"') else { break };
            let value = &rest[..end];
            rest = &rest[end..];
            let path = value.strip_prefix("./").unwrap_or(value);
            let local = !path.is_empty()
                && !path.starts_with(['/', '#', '?'])
                && !path.contains(':')
                && !path.split('/').any(|part| part == "..");
            if local {
                links.push(path.split(['?', '#']).next().unwrap_or(path));
            }
        }
    }
    links
}
