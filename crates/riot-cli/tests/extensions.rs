//! Black-box tests of skills and slash commands (docs/design.md §13) through
//! `riot exec`, the real binary and the strict mock server: where they are
//! found and which wins, what reaches the model, and what a person is told
//! about files that could not be used.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::Path;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill(dir: &Path, name: &str, description: &str, body: &str) {
    write(
        &dir.join(name).join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n"),
    );
}

/// The description of the Skill tool in a request body.
fn skill_tool_description(body: &Value) -> String {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Skill")
        .unwrap_or_else(|| panic!("no Skill tool in {}", body["tools"]))["description"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The lines `- name: description` of the Skill tool's list.
fn listed_skills(description: &str) -> Vec<String> {
    description
        .lines()
        .skip_while(|l| *l != "Available skills:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The text of the first user message of a request.
fn first_prompt(body: &Value) -> Vec<String> {
    body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skill_tool_loads_a_user_skill_with_its_bundled_files_for_the_model() {
    let world = World::new();
    let skills = world.home.path().join("skills");
    skill(
        &skills,
        "deploy",
        "Ship the service to staging. Use when asked to deploy.",
        "# Deploying\n\nRun `make deploy ENV=staging`, then follow checklist.md.",
    );
    write(
        &skills.join("deploy").join("checklist.md"),
        "- smoke test\n",
    );
    let server = server(vec![
        tool_call("call_skill_1", "Skill", json!({"skill": "deploy"})),
        Reply::Text("Deployed.".into()),
    ])
    .await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Deploy it"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Deployed.");

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    // Only the list is in context: the body is not.
    let description = skill_tool_description(&bodies[0]);
    assert_eq!(
        listed_skills(&description),
        [
            "- commit: Turn the current working-tree changes into one or more well-formed git commits. Use when the person asks to commit, to save work in git, or to split changes into commits.",
            "- debug: Find the root cause of a failure (a failing test, a crash, wrong output, a hang) methodically before changing code. Use when something is broken and the cause is not yet known.",
            "- deploy: Ship the service to staging. Use when asked to deploy.",
            "- office: Create or change Word (.docx), Excel (.xlsx) or PowerPoint (.pptx) files with the tools this machine has. Use when the person asks for a document, spreadsheet or slide deck as a file, or to change one.",
            "- review: Review code changes (the working tree, a branch, or given files) for bugs, risks and missing tests, and report findings ranked by severity. Use when the person asks for a review, a second opinion, or \"what could go wrong\".",
        ]
    );
    assert!(!bodies[0].to_string().contains("make deploy"));

    // Loading it answers the call with the body and the bundled file.
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "call_skill_1");
    assert!(
        result.get("is_error").is_none_or(|e| e == false),
        "{result}"
    );
    let text = result["content"].to_string();
    assert!(text.contains("Run `make deploy ENV=staging`"), "{text}");
    let checklist = skills.join("deploy").join("checklist.md");
    assert!(text.contains(checklist.to_str().unwrap()), "{text}");
    assert!(
        !text.contains("description:"),
        "front matter is not repeated: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_skill_is_refused_with_the_names_that_exist() {
    let world = World::new();
    let server = server(vec![
        tool_call("call_skill_1", "Skill", json!({"skill": "deploy"})),
        Reply::Text("No such skill.".into()),
    ])
    .await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Deploy it"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = &bodies(&server)[1]["messages"][2]["content"][0];
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["content"].to_string().contains(
            "There is no skill `deploy`. Available skills: commit, debug, office, review."
        ),
        "{result}"
    );
}

/// Project skills in both folders, user skills (one broken), built-ins.
fn layered_skills(world: &World) {
    let project = world.project.path();
    skill(
        &project.join(".riot/skills"),
        "review",
        "The project's own review steps.",
        "Project review body.",
    );
    skill(
        &project.join(".claude/skills"),
        "review",
        "Shadowed by .riot/skills.",
        "Never used.",
    );
    skill(
        &project.join(".claude/skills"),
        "lint",
        "Lint the project the project's way.",
        "Project lint body.",
    );
    let user = world.home.path().join("skills");
    skill(&user, "lint", "Shadowed by the project.", "Never used.");
    skill(&user, "notes", "Keep release notes.", "User notes body.");
    write(
        &user.join("broken").join("SKILL.md"),
        "---\nname: broken\ndescription: [unclosed\n---\nbody\n",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_skills_win_over_user_and_built_in_ones_and_a_broken_file_is_reported() {
    let world = World::new();
    layered_skills(&world);
    let server = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec(&server, Wire::Anthropic, &["--trust-project", "Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let description = skill_tool_description(&bodies(&server)[0]);
    let listed = listed_skills(&description);
    let names: Vec<&str> = listed
        .iter()
        .map(|l| l[2..].split(':').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["commit", "debug", "lint", "notes", "office", "review"]
    );
    assert!(listed.contains(&"- review: The project's own review steps.".to_owned()));
    assert!(listed.contains(&"- lint: Lint the project the project's way.".to_owned()));
    // The broken skill is skipped and named with its line; the session ran.
    let broken = world.home.path().join("skills/broken/SKILL.md");
    let notice = out
        .stderr
        .lines()
        .find(|l| l.contains(broken.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no notice for the broken skill: {}", out.stderr));
    assert!(notice.contains("line 3"), "{notice}");
    assert!(notice.contains("skipped"), "{notice}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_skills_and_commands_are_not_loaded_and_the_notice_says_so() {
    let world = World::new();
    layered_skills(&world);
    write(
        &world.project.path().join(".riot/commands/ship.md"),
        "Ship it.",
    );
    let server = server(vec![Reply::Text("Ok.".into())]).await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let description = skill_tool_description(&bodies(&server)[0]);
    assert!(
        description.contains("- review: Review code changes"),
        "the built-in review stays: {description}"
    );
    assert!(description.contains("- lint: Shadowed by the project."));
    assert!(!description.contains("project's own"), "{description}");
    assert!(
        out.stderr
            .contains("3 project skill(s) in .riot/skills or .claude/skills were not loaded because this project is not trusted; rerun with --trust-project"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("1 project command(s)"),
        "{}",
        out.stderr
    );

    // Typing the project's command is then an unknown command.
    let out = run(world.exec(&server, Wire::Anthropic, &["/ship"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("Unknown command /ship"),
        "{}",
        out.stderr
    );
    assert_eq!(bodies(&server).len(), 1, "no model request for it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_project_command_expands_its_arguments_and_attaches_mentions() {
    let world = World::new();
    write(
        &world.project.path().join(".riot/commands/git/fix.md"),
        "---\ndescription: Fix an issue\nargument-hint: <issue> <file>\n---\nFix issue #$1 in $2 (asked: $ARGUMENTS). Notes are in @notes.txt.\n",
    );
    write(
        &world.project.path().join("notes.txt"),
        "the parser is fragile\n",
    );
    let server = server(vec![Reply::Text("Fixed.".into())]).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--trust-project", r#"/git:fix 42 "src/a b.rs""#],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &bodies(&server)[0];
    let texts = first_prompt(body);
    assert_eq!(
        texts[0],
        r#"Fix issue #42 in src/a b.rs (asked: 42 "src/a b.rs"). Notes are in @notes.txt."#
    );
    assert!(
        texts[1..]
            .iter()
            .any(|t| t.contains("Contents of notes.txt") && t.contains("the parser is fragile")),
        "{texts:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_command_wins_over_a_user_one_and_its_model_is_used_for_its_turn() {
    let world = World::new();
    write(
        &world.home.path().join("commands/summary.md"),
        "User summary: $ARGUMENTS",
    );
    write(
        &world.project.path().join(".riot/commands/summary.md"),
        "---\nmodel: mock-model-large\n---\nProject summary of the changes",
    );
    write(
        &world.home.path().join("commands/compact.md"),
        "Not the built-in.",
    );
    let server = server(vec![Reply::Text("Summary.".into())]).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--trust-project", "/summary briefly"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let body = &bodies(&server)[0];
    assert_eq!(body["model"], "mock-model-large");
    // No placeholder in the body: the arguments are appended.
    assert_eq!(
        first_prompt(body)[0],
        "Project summary of the changes\n\nARGUMENTS: briefly"
    );
    let compact = world.home.path().join("commands/compact.md");
    assert!(
        out.stderr.contains(&format!(
            "command {} skipped: /compact is built in",
            compact.display()
        )),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_commands_act_without_the_model_and_bad_ones_say_why() {
    let world = World::new();
    write(
        &world.home.path().join("commands/review-pr.md"),
        "---\ndescription: Review a pull request\nargument-hint: <number>\n---\nReview PR $1.",
    );
    let server = server(vec![Reply::Text("It exists.".into())]).await;

    let help = run(world.exec(&server, Wire::Anthropic, &["/help"])).await;
    assert_eq!(help.code, Some(0), "{help:?}");
    for line in [
        "/compact [what to focus on] — Summarise the conversation so far to free context",
        "/clear — Start over with an empty conversation",
        "/review-pr <number> — Review a pull request",
        "commit — Turn the current working-tree changes",
    ] {
        assert!(help.stderr.contains(line), "{line}: {}", help.stderr);
    }

    let mode = run(world.exec(&server, Wire::Anthropic, &["/mode yolo"])).await;
    assert_eq!(mode.code, Some(2), "{mode:?}");
    assert!(
        mode.stderr.contains("unknown permission mode `yolo`"),
        "{}",
        mode.stderr
    );

    let unattended = run(world.exec(&server, Wire::Anthropic, &["/mode unattended"])).await;
    assert_eq!(unattended.code, Some(2), "{unattended:?}");
    assert!(
        unattended
            .stderr
            .contains("unattended mode can only be set in settings"),
        "{}",
        unattended.stderr
    );

    let unknown = run(world.exec(&server, Wire::Anthropic, &["/nope now"])).await;
    assert_eq!(unknown.code, Some(2), "{unknown:?}");
    assert!(
        unknown.stderr.contains("Unknown command /nope. Type /help"),
        "{}",
        unknown.stderr
    );
    assert!(
        server.requests().is_empty(),
        "none of these asked the model"
    );

    // A path is not a command: it goes to the model as typed.
    let path = run(world.exec(&server, Wire::Anthropic, &["/usr/bin/env exists?"])).await;
    assert_eq!(path.code, Some(0), "{path:?}");
    assert_eq!(first_prompt(&bodies(&server)[0])[0], "/usr/bin/env exists?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_runs_pre_compact_hooks_with_the_focus() {
    let world = World::new();
    // User-level hooks need no project trust.
    let seen = world.home.path().join("pre-compact.json");
    write(
        &world.home.path().join("hooks.json"),
        &json!({"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command",
            "command": format!("cat > '{}'", seen.display())}]}]})
        .to_string(),
    );
    let server = server(vec![
        Reply::Text("First answer.".into()),
        Reply::Text("Summary: the person asked about the API.".into()),
    ])
    .await;
    let first = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--output-format", "json", "Tell me about the API"],
    ))
    .await;
    assert_eq!(first.code, Some(0), "{first:?}");
    let id = first.json()["session_id"].as_str().unwrap().to_owned();
    assert!(!seen.exists(), "no compaction yet");

    let compact = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--resume", &id, "/compact keep the API notes"],
    ))
    .await;
    assert_eq!(compact.code, Some(0), "{compact:?}");
    let event: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(event["hook_event_name"], "PreCompact");
    assert_eq!(event["trigger"], "manual");
    assert_eq!(event["custom_instructions"], "keep the API notes");
    assert_eq!(event["session_id"], id.as_str());
    // The summary request carried the focus.
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1].to_string().contains("keep the API notes"),
        "{}",
        bodies[1]
    );
}
