//! AskUser and ExitPlanMode where nobody can answer (`riot exec`): the
//! model is told so, in words that let it go on (docs/interfaces.md; ARCHITECTURE
//! §9.1). The answering paths are in `acp.rs`, where an editor answers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

/// The `tool_result` block answering `id` in the last request.
fn last_result(server: &MockServer, id: &str) -> Value {
    support::tool_result(bodies(server).last().unwrap(), id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_exec_ask_user_tells_the_model_to_proceed_on_its_own_judgement() {
    let world = World::new();
    let server = server(vec![
        tool_call(
            "call_ask_1",
            "AskUser",
            json!({"questions": [{"question": "Postgres or SQLite?",
                "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]}),
        ),
        Reply::Text("I chose SQLite.".into()),
    ])
    .await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Set up storage"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "I chose SQLite.");
    let result = last_result(&server, "call_ask_1");
    assert!(
        result.get("is_error").is_none_or(|e| e == false),
        "{result}"
    );
    assert!(
        result["content"].to_string().contains(
            "No one can answer questions in this session: it runs without a person watching. Do not ask again. Proceed on your own judgement"
        ),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_questions_are_refused_before_anyone_is_asked() {
    let world = World::new();
    let server = server(vec![
        tool_call(
            "call_ask_1",
            "AskUser",
            json!({"questions": [{"question": "Which?", "options": [{"label": "A"}, {"label": "A"}]}]}),
        ),
        Reply::Text("Sorry.".into()),
    ])
    .await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Pick"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = last_result(&server, "call_ask_1");
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .to_string()
            .contains("Question 1 has two options with the same label"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_exec_a_plan_cannot_be_approved_and_the_mode_stays_plan() {
    let world = World::new();
    let server = server(vec![
        tool_call(
            "call_plan_1",
            "ExitPlanMode",
            json!({"plan": "1. Write out.txt"}),
        ),
        tool_call(
            "call_write_1",
            "Write",
            json!({"file_path": "out.txt", "content": "x\n"}),
        ),
        Reply::Text("Here is the plan: write out.txt.".into()),
    ])
    .await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "plan", "Plan the change"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let plan = last_result(&server, "call_plan_1");
    assert_eq!(plan["is_error"], true);
    assert!(
        plan["content"]
            .to_string()
            .contains("No one can approve a plan in this session. Stay in plan mode"),
        "{plan}"
    );
    let write = last_result(&server, "call_write_1");
    assert_eq!(write["is_error"], true, "still in plan mode: {write}");
    assert!(
        write["content"]
            .to_string()
            .contains("Plan mode: cannot write"),
        "{write}"
    );
    assert!(!world.cwd().join("out.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_plan_mode_outside_plan_mode_says_there_is_nothing_to_exit() {
    let world = World::new();
    let server = server(vec![
        tool_call("call_plan_1", "ExitPlanMode", json!({"plan": "1. Do it"})),
        Reply::Text("Going on.".into()),
    ])
    .await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Do it"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = last_result(&server, "call_plan_1");
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .to_string()
            .contains("You are not in plan mode (the mode is default): there is nothing to exit."),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_task_without_a_todo_list_gets_one_gentle_reminder() {
    let world = World::new();
    let mut replies: Vec<Reply> = (1..=12)
        .map(|i| {
            tool_call(
                &format!("call_glob_{i}"),
                "Glob",
                json!({"pattern": "*.rs"}),
            )
        })
        .collect();
    replies.push(Reply::Text("Done searching.".into()));
    let server = server(replies).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--max-turns", "20", "Search a lot"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let reminder = "there is no todo list. If several parts are left, write them with TodoWrite";
    let reminded: Vec<usize> = bodies(&server)
        .iter()
        .enumerate()
        .filter(|(_, b)| b.to_string().contains(reminder))
        .map(|(i, _)| i)
        .collect();
    // Requests 0..=9 precede the tenth call's result; from request 10 on,
    // the reminder is in the history — given once.
    assert_eq!(reminded, (10..=12).collect::<Vec<_>>());
    let last = bodies(&server).last().unwrap().to_string();
    assert_eq!(last.matches(reminder).count(), 1, "once, not per call");
}
