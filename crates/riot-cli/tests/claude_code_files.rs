//! Black-box tests of the files people keep for every agent (issue #21):
//! a project's Claude Code settings (`.claude/settings.json`,
//! `.claude/settings.local.json`), the cross-agent `.agents/skills/`, and
//! `AGENTS.md` beside `CLAUDE.md` — through `riot exec` and `riot config
//! show`, the real binary and the strict mock server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::{Path, PathBuf};

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call, tool_result};

const WIRE: Wire = Wire::Anthropic;

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(WIRE, replies)).await.unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes the project's `.claude/<name>` and returns its path as Riot
/// names it.
fn claude_file(world: &World, name: &str, json: &Value) -> PathBuf {
    write(
        &world.project.path().join(".claude").join(name),
        &serde_json::to_string_pretty(json).unwrap(),
    );
    world.cwd().join(".claude").join(name)
}

/// A Bash call that is not read-only: `riot exec`, where nobody answers,
/// denies it unless a rule or mode lets it through.
fn touch_call() -> Reply {
    tool_call(
        "call_touch_1",
        "Bash",
        json!({"command": "touch made-by-the-model", "description": "Create a file"}),
    )
}

fn made(world: &World) -> bool {
    world.project.path().join("made-by-the-model").exists()
}

/// The transcript's result for `id`: (is_error, text).
fn transcript_result(world: &World, session_id: &str, id: &str) -> (bool, String) {
    let text = std::fs::read_to_string(world.transcript(session_id)).unwrap();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let blocks = record["message"]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for block in blocks {
            if block["type"] == "tool_result" && block["tool_use_id"] == id {
                return (
                    block["is_error"].as_bool().unwrap_or(false),
                    block["content"].to_string(),
                );
            }
        }
    }
    panic!("no result for {id} in the transcript:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_rule_in_claude_settings_lets_a_command_run_in_exec() {
    // Without the rule the command is denied: nobody can answer in exec.
    let world = World::new();
    let server_without = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server_without, WIRE, &["--trust-project", "Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!made(&world), "denied without the rule");
    let denied = tool_result(&bodies(&server_without)[1], "call_touch_1");
    assert_eq!(denied["is_error"], true, "{denied}");

    // Claude Code's legacy `:*` prefix form, in the project's shared file.
    claude_file(
        &world,
        "settings.json",
        &json!({"permissions": {"allow": ["Bash(touch:*)"]}}),
    );
    let server_with = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(
        &server_with,
        WIRE,
        &["--output-format", "json", "Make the file"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(made(&world), "the rule let the command run: {out:?}");
    let ran = tool_result(&bodies(&server_with)[1], "call_touch_1");
    assert!(ran.get("is_error").is_none_or(|e| e == false), "{ran}");
    let session = out.json()["session_id"].as_str().unwrap().to_owned();
    let (is_error, text) = transcript_result(&world, &session, "call_touch_1");
    assert!(
        !is_error,
        "the transcript records a successful call: {text}"
    );
    assert!(!text.contains("denied"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_in_claude_settings_blocks_even_in_bypass_and_untrusted() {
    let world = World::new();
    claude_file(
        &world,
        "settings.local.json",
        &json!({"permissions": {"deny": ["Bash(touch:*)"]}}),
    );
    let server = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(
        &server,
        WIRE,
        &["--permission-mode", "bypass", "Make the file"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!made(&world), "the deny rule held");
    let result = tool_result(&bodies(&server)[1], "call_touch_1");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result.to_string().contains(
            "denied by the rule `Bash(touch:*)` from local project settings (.riot/settings.local.json or .claude/settings.local.json)"
        ),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_claude_settings_are_ignored_with_the_notice() {
    let world = World::new();
    let path = claude_file(
        &world,
        "settings.json",
        &json!({
            "permissions": {"allow": ["Bash(touch:*)"], "defaultMode": "acceptEdits"},
            "env": {"GREETING": "hello"}
        }),
    );
    let server = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server, WIRE, &["Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !made(&world),
        "an untrusted project's allow rule is ignored"
    );
    let p = path.display();
    let notice = format!(
        "riot: This project is not trusted, so Riot ignored: env (from {p}), permissions.allow (from {p}), permissions.defaultMode (from {p}). Pass --trust-project once to trust it."
    );
    assert!(
        out.stderr.lines().any(|l| l == notice),
        "no `{notice}` in {}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bypass_permissions_from_claude_settings_is_refused_with_the_warning() {
    let world = World::new();
    let path = claude_file(
        &world,
        "settings.json",
        &json!({"permissions": {"defaultMode": "bypassPermissions"}}),
    );
    let server = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server, WIRE, &["--trust-project", "Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let warning = format!(
        "riot: {}: ignored \"permissions.defaultMode\": \"bypassPermissions\" — project settings cannot choose bypass mode, trusted or not; only your own settings (settings.json in Riot's home), --permission-mode or $RIOT_PERMISSION_MODE can.",
        path.display()
    );
    assert!(
        out.stderr.lines().any(|l| l == warning),
        "no `{warning}` in {}",
        out.stderr
    );
    assert!(!made(&world), "bypass was not chosen");
    let result = tool_result(&bodies(&server)[1], "call_touch_1");
    assert_eq!(result["is_error"], true, "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_env_reaches_tools_and_the_process_environment_wins() {
    let world = World::new();
    claude_file(
        &world,
        "settings.json",
        &json!({
            "env": {"RIOT_T_GREETING": "from-settings", "RIOT_T_OTHER": "other"},
            // A variable is only known when the command runs: without a
            // rule, Riot would ask (and exec deny).
            "permissions": {"allow": ["Bash(echo:*)"]}
        }),
    );
    let echo = || {
        tool_call(
            "call_echo_1",
            "Bash",
            json!({"command": "echo \"[$RIOT_T_GREETING $RIOT_T_OTHER]\""}),
        )
    };
    let first = server(vec![echo(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&first, WIRE, &["--trust-project", "Greet"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = tool_result(&bodies(&first)[1], "call_echo_1").to_string();
    assert!(result.contains("[from-settings other]"), "{result}");

    let second = server(vec![echo(), Reply::Text("Done.".into())]).await;
    let mut cmd = world.exec(&second, WIRE, &["Greet"]);
    cmd.env("RIOT_T_GREETING", "from-the-shell");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = tool_result(&bodies(&second)[1], "call_echo_1").to_string();
    assert!(result.contains("[from-the-shell other]"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_show_names_the_claude_files_each_value_came_from() {
    let world = World::new();
    let shared = claude_file(
        &world,
        "settings.json",
        &json!({
            "permissions": {"allow": ["Read(/docs/**)"], "defaultMode": "acceptEdits"},
            "env": {"NODE_ENV": "test"},
            "model": "opus"
        }),
    );
    let local = claude_file(
        &world,
        "settings.local.json",
        &json!({"permissions": {"deny": ["Bash(git push:*)"]}}),
    );
    let out = run(world.bare(&["config", "show", "--json", "--trust-project"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let config = out.json();
    let source = |path: &Path, layer: &str| json!({"layer": layer, "path": path});
    assert_eq!(
        config["default_mode"],
        json!({"value": "accept-edits", "source": source(&shared, "project")})
    );
    let rules: Vec<Value> = config["rules"].as_array().unwrap().clone();
    assert_eq!(
        rules,
        vec![
            json!({"rule": "Read(./docs/**)", "behavior": "allow", "source": "project",
                   "from": source(&shared, "project"), "written": "Read(/docs/**)"}),
            json!({"rule": "Bash(git push:*)", "behavior": "deny", "source": "local",
                   "from": source(&local, "local")}),
        ]
    );
    assert_eq!(
        config["env"],
        json!({"NODE_ENV": {"source": source(&shared, "project")}}),
        "names and files, never values"
    );
    assert_eq!(
        config["model"],
        Value::Null,
        "Claude Code's model is its own"
    );
    assert_eq!(
        config["unused_keys"],
        json!([format!("model (in {})", shared.display())])
    );

    let out = run(world.bare(&["config", "show"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let words = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let lines: Vec<Vec<String>> = out.stdout.lines().map(words).collect();
    for expected in [
        format!("permission mode accept-edits ({})", shared.display()),
        format!(
            "rule: allow Read(./docs/**) ({}, written Read(/docs/**))",
            shared.display()
        ),
        format!("rule: deny Bash(git push:*) ({})", local.display()),
        format!("env NODE_ENV ({})", shared.display()),
    ] {
        assert!(
            lines.contains(&words(&expected)),
            "no `{expected}` in\n{}",
            out.stdout
        );
    }
}

fn skill(dir: &Path, name: &str, description: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n"),
    );
}

/// The `- name: description` lines of the Skill tool in a request body.
fn listed_skills(body: &Value) -> Vec<String> {
    let description = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    description
        .lines()
        .skip_while(|l| *l != "Available skills:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| {
            !["- commit:", "- debug:", "- office:", "- review:"]
                .iter()
                .any(|builtin| l.starts_with(builtin))
        })
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_found_in_the_cross_agent_folders() {
    let world = World::new();
    let project = world.project.path();
    // `HOME` is the test's Riot home; `~/.agents/skills` is under it.
    skill(
        &world.home.path().join(".agents/skills"),
        "changelog",
        "From ~/.agents.",
    );
    skill(&project.join(".agents/skills"), "release", "From .agents.");
    skill(&project.join(".agents/skills"), "lint", "From .agents.");
    skill(&project.join(".claude/skills"), "lint", "From .claude.");
    skill(&project.join(".riot/skills"), "release", "From .riot.");

    let first = server(vec![
        tool_call("call_skill_1", "Skill", json!({"skill": "lint"})),
        Reply::Text("Linted.".into()),
    ])
    .await;
    let out = run(world.exec(&first, WIRE, &["--trust-project", "Lint"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let bodies_first = bodies(&first);
    assert_eq!(
        listed_skills(&bodies_first[0]),
        [
            "- changelog: From ~/.agents.",
            "- lint: From .agents.",
            "- release: From .riot.",
        ]
    );
    let loaded = tool_result(&bodies_first[1], "call_skill_1").to_string();
    assert!(loaded.contains("Steps for lint."), "{loaded}");
    let lint_dir = world.cwd().join(".agents/skills/lint");
    assert!(loaded.contains(lint_dir.to_str().unwrap()), "{loaded}");

    // An untrusted project's `.agents/skills` waits like `.riot/skills`.
    let other = tempfile::tempdir().unwrap();
    skill(&other.path().join(".agents/skills"), "deploy", "Untrusted.");
    let second = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec_in(other.path(), &second, WIRE, &["Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        listed_skills(&bodies(&second)[0]),
        ["- changelog: From ~/.agents."]
    );
    assert!(
        out.stderr.contains(
            "1 project skill(s) in .agents/skills were not loaded because this project is not trusted; rerun with --trust-project to use them."
        ),
        "{}",
        out.stderr
    );
}

/// How often `needle` occurs in the system prompt of a request body.
fn in_system_prompt(body: &Value, needle: &str) -> usize {
    body["system"].to_string().matches(needle).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_and_claude_md_are_both_read_and_a_link_only_once() {
    let world = World::new();
    let project = world.project.path();
    write(&project.join("AGENTS.md"), "Agents: run cargo nextest.");
    write(&project.join("CLAUDE.md"), "Claude: keep commits small.");
    let both = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec(&both, WIRE, &["Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &bodies(&both)[0];
    assert_eq!(in_system_prompt(body, "Agents: run cargo nextest."), 1);
    assert_eq!(in_system_prompt(body, "Claude: keep commits small."), 1);

    // CLAUDE.md as a link to AGENTS.md: its text once.
    std::fs::remove_file(project.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink("AGENTS.md", project.join("CLAUDE.md")).unwrap();
    let linked = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec(&linked, WIRE, &["Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &bodies(&linked)[0];
    assert_eq!(in_system_prompt(body, "Agents: run cargo nextest."), 1);

    // The same text in both files: once.
    std::fs::remove_file(project.join("CLAUDE.md")).unwrap();
    write(&project.join("CLAUDE.md"), "Agents: run cargo nextest.\n");
    let same = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec(&same, WIRE, &["Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &bodies(&same)[0];
    assert_eq!(in_system_prompt(body, "Agents: run cargo nextest."), 1);
}

/// `~/.claude/settings.json` is Claude Code's user layer: read without
/// trusting the project, converted as the project's files are, below
/// Riot's own user settings; what Riot cannot use is listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_claude_settings_are_read_as_the_user_layer() {
    let world = World::new();
    let user_file = world.home.path().join(".claude/settings.json");
    write(
        &user_file,
        &serde_json::to_string_pretty(&json!({
            "permissions": {"allow": ["Bash(touch:*)", "Read(/notes/**)"], "defaultMode": "acceptEdits"},
            "statusLine": {"type": "command", "command": "echo hi"}
        }))
        .unwrap(),
    );
    let out = run(world.bare(&["config", "show", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let config = out.json();
    let from = json!({"layer": "user", "path": user_file});
    assert_eq!(
        config["default_mode"],
        json!({"value": "accept-edits", "source": from})
    );
    let rules: Vec<Value> = config["rules"].as_array().unwrap().clone();
    assert_eq!(
        rules,
        vec![
            json!({"rule": "Bash(touch:*)", "behavior": "allow", "source": "user", "from": from}),
            json!({"rule": "Read(./notes/**)", "behavior": "allow", "source": "user",
                   "from": from, "written": "Read(/notes/**)"}),
        ]
    );
    assert_eq!(
        config["unused_keys"],
        json!([format!("statusLine (in {})", user_file.display())])
    );

    // Riot's own user settings win over Claude Code's.
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"permissions": {"default_mode": "default"}}"#,
    )
    .unwrap();
    let out = run(world.bare(&["config", "show", "--json"])).await;
    assert_eq!(out.json()["default_mode"]["value"], "default", "{out:?}");

    // The allow rule lets the command run in an untrusted project.
    let server = server(vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server, WIRE, &["Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(made(&world), "the user's Claude Code rule applied: {out:?}");
}
