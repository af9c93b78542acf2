//! The ACP registry entry (`acp-registry/riot/agent.json`, issue 27) is
//! true of the binary: its version is `riot --version`'s, its fields have
//! the shapes the registry's manifest format asks, and the command every
//! platform runs (`riot acp`) answers `initialize` with the entry's name and
//! version and with authentication methods, which the registry requires.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::Path;

use serde_json::{Value, json};
use support::{PATIENCE, World, run};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn manifest() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../acp-registry/riot/agent.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A string of the root `Cargo.toml`'s `[workspace.package]`.
fn workspace_key(key: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let section = text.split("[workspace.package]").nth(1).unwrap();
    let line = section
        .lines()
        .find(|l| l.split('=').next().is_some_and(|k| k.trim() == key))
        .unwrap_or_else(|| panic!("no `{key}` in [workspace.package]"));
    line.split_once('=')
        .unwrap()
        .1
        .trim()
        .trim_matches('"')
        .to_owned()
}

/// The registry's platforms (its manifest format's binary targets).
const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

#[test]
fn the_manifest_has_the_registry_shape() {
    let m = manifest();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    for required in ["id", "name", "version", "description", "distribution"] {
        assert!(keys.contains(&required), "missing `{required}` in {keys:?}");
    }
    let allowed = [
        "id",
        "name",
        "version",
        "description",
        "repository",
        "website",
        "authors",
        "license",
        "license_url",
        "icon",
        "distribution",
    ];
    for key in &keys {
        assert!(allowed.contains(key), "`{key}` is not a manifest field");
    }
    let id = m["id"].as_str().unwrap();
    assert!(
        id.starts_with(|c: char| c.is_ascii_lowercase())
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "id `{id}` must be lowercase letters, digits and hyphens"
    );
    // The folder is named by the id, and holds the icon.
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../acp-registry")
        .join(id);
    assert!(folder.join("agent.json").is_file());
    let icon = std::fs::read_to_string(folder.join("icon.svg")).unwrap();
    assert!(
        icon.starts_with("<svg") && icon.contains("currentColor"),
        "{icon}"
    );
    assert_eq!(
        m["repository"],
        workspace_key("repository"),
        "the repository is the workspace's"
    );
    assert_eq!(m["license"], workspace_key("license"));

    let binary = m["distribution"]["binary"].as_object().unwrap();
    assert_eq!(
        m["distribution"].as_object().unwrap().len(),
        1,
        "Riot ships binaries only"
    );
    assert!(!binary.is_empty());
    let version = m["version"].as_str().unwrap();
    for (platform, target) in binary {
        assert!(
            PLATFORMS.contains(&platform.as_str()),
            "unknown platform `{platform}`"
        );
        let archive = target["archive"].as_str().unwrap();
        assert!(
            archive.starts_with(&format!(
                "{}/releases/download/v{version}/riot-{version}-",
                workspace_key("repository")
            )) && archive.ends_with(".tar.gz"),
            "{platform}: the archive of this version's release, got {archive}"
        );
        assert_eq!(target["cmd"], "./riot", "{platform}");
        assert_eq!(target["args"], json!(["acp"]), "{platform}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_matches_riot_version_and_riot_acp() {
    let m = manifest();
    let version = m["version"].as_str().unwrap();
    let world = World::new();

    let out = run(world.bare(&["--version"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), format!("riot {version}"));

    // What every platform runs: `riot` with the manifest's arguments.
    let args: Vec<&str> = m["distribution"]["binary"]["linux-x86_64"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let mut cmd = world.bare(&args);
    cmd.stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let line = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("riot acp did not answer initialize")
        .unwrap()
        .expect("riot acp closed stdout");
    let reply: Value = serde_json::from_str(&line).unwrap();
    let result = &reply["result"];
    assert_eq!(result["agentInfo"]["version"], version, "{reply}");
    assert_eq!(result["agentInfo"]["title"], m["name"], "{reply}");
    assert_eq!(result["agentInfo"]["name"], m["id"], "{reply}");
    let methods: Vec<&str> = result["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["anthropic-api-key", "openai-api-key", "none"]);
    drop(stdin);
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("riot acp did not exit after stdin closed")
        .unwrap();
    assert!(status.success(), "{status}");
}
