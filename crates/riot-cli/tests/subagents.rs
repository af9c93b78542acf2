//! Subagents (docs/design.md §14) through `riot exec` and the strict mock:
//! the parent's model starts Task calls; each child's requests are told
//! apart by `when` rules (its prompt, then its tool result), since the
//! children run at the same time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, assert_paired, bodies, run, tool_call, transcript_messages};

fn task(id: &str, agent: &str, prompt: &str) -> Value {
    json!({"id": id, "agent": agent, "prompt": prompt})
}

/// One reply with several Task calls.
fn tasks(calls: &[Value]) -> Reply {
    let calls: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                "Task",
                support::task_input(c["agent"].as_str().unwrap(), c["prompt"].as_str().unwrap()),
            )
        })
        .collect();
    support::tool_calls(&calls)
}

/// The `tool_result` blocks of the last request, as (id, text, is_error).
fn results(body: &Value) -> Vec<(String, String, bool)> {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            (
                b["tool_use_id"].as_str().unwrap().to_owned(),
                b["content"].to_string(),
                b["is_error"] == true,
            )
        })
        .collect()
}

/// The session files of `world`, with their meta lines.
fn transcripts(world: &World) -> Vec<(String, Value)> {
    let dir = world.home.path().join("sessions");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
            (e.path().to_str().unwrap().to_owned(), meta)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_explore_subagents_read_in_parallel_and_answer_in_order_with_linked_transcripts() {
    let world = World::new();
    std::fs::write(
        world.project.path().join("alpha.txt"),
        "ALPHA-FILE-CONTENT\n",
    )
    .unwrap();
    std::fs::write(world.project.path().join("beta.txt"), "BETA-FILE-CONTENT\n").unwrap();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tasks(&[
                task(
                    "call_task_1",
                    "explore",
                    "Explore alpha: what does alpha.txt say?",
                ),
                task(
                    "call_task_2",
                    "explore",
                    "Explore beta: what does beta.txt say?",
                ),
            ]),
            Reply::Text("Both explored.".into()),
        ],
    )
    // Each child's second request carries the file it read.
    .when_request_contains(
        "ALPHA-FILE-CONTENT",
        Reply::Text("alpha.txt says ALPHA.".into()),
    )
    .when_request_contains(
        "BETA-FILE-CONTENT",
        Reply::Text("beta.txt says BETA.".into()),
    )
    // In parallel: each child's first request is answered only once the
    // other's has arrived. Run one after the other, the first child would
    // wait for the second forever and the run would never finish.
    .when_held(
        "Explore alpha",
        "Explore beta",
        tool_call("call_read_a", "Read", json!({"file_path": "alpha.txt"})),
    )
    .when_held(
        "Explore beta",
        "Explore alpha",
        tool_call("call_read_b", "Read", json!({"file_path": "beta.txt"})),
    );
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--output-format", "json", "Explore both files"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let parent_id = out.json()["session_id"].as_str().unwrap().to_owned();
    assert_eq!(out.json()["result"], "Both explored.");
    // One meter for side requests: the children's four requests (10 input
    // and 5 output tokens each, as the mock reports) are the run's side
    // usage, the parent's two its usage.
    let result = out.json();
    assert_eq!(result["side_usage"]["input_tokens"], 40, "{result}");
    assert_eq!(result["side_usage"]["output_tokens"], 20, "{result}");
    assert_eq!(result["usage"]["input_tokens"], 20, "{result}");

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 6, "parent ×2, each child ×2");
    let last = bodies.last().unwrap();
    let answered = results(last);
    assert_eq!(answered.len(), 2);
    assert_eq!(answered[0].0, "call_task_1", "results in call order");
    assert!(
        answered[0].1.contains("alpha.txt says ALPHA."),
        "{answered:?}"
    );
    assert!(answered[0].1.contains("subagent `explore`"), "{answered:?}");
    assert_eq!(answered[1].0, "call_task_2");
    assert!(
        answered[1].1.contains("beta.txt says BETA."),
        "{answered:?}"
    );
    assert!(answered.iter().all(|r| !r.2));

    // A child sees its brief and read-only tools, not the parent's talk.
    let child = bodies
        .iter()
        .find(|b| {
            b["messages"][0]["content"]
                .to_string()
                .contains("Explore alpha")
        })
        .unwrap();
    let names: Vec<&str> = child["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Read", "Glob", "Grep", "Bash"]);
    assert!(!child.to_string().contains("Explore both files"));

    // Three transcripts: the parent and two children linked to it, each
    // with its calls paired.
    let files = transcripts(&world);
    assert_eq!(files.len(), 3, "{files:?}");
    let children: Vec<&(String, Value)> = files
        .iter()
        .filter(|(_, m)| m["parent"].is_string())
        .collect();
    assert_eq!(children.len(), 2);
    for (path, meta) in &children {
        assert_eq!(meta["parent"], parent_id.as_str());
        let messages = transcript_messages(std::path::Path::new(path));
        assert_eq!(
            messages.len(),
            4,
            "prompt, Read, result, answer: {messages:#?}"
        );
        assert_paired(&messages);
    }
    // Subagent transcripts are not sessions a person resumes.
    let listed = run(world.bare(&["sessions", "list", "--json"])).await;
    let listed: Vec<Value> = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explore_subagent_cannot_change_anything_and_is_told_why() {
    let world = World::new();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tasks(&[task("call_task_1", "explore", "Explore and make a marker")]),
            Reply::Text("It could not.".into()),
        ],
    )
    .when_request_contains(
        "call_write_1",
        Reply::Text("I was not allowed to change anything.".into()),
    )
    .when(
        "Explore and make a marker",
        support::tool_calls(&[
            (
                "call_touch_1",
                "Bash",
                json!({"command": "touch marker.txt"}),
            ),
            (
                "call_write_1",
                "Write",
                json!({"file_path": "marker.txt", "content": "x"}),
            ),
        ]),
    );
    let server = MockServer::start(script).await.unwrap();
    // Even bypass mode in the parent does not make explore write.
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "Mark it"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!world.cwd().join("marker.txt").exists());
    let bodies = bodies(&server);
    let child_second = bodies
        .iter()
        .find(|b| b.to_string().contains("call_write_1") && results(b).len() == 2)
        .unwrap();
    let refused = results(child_second);
    assert_eq!(refused[0].0, "call_touch_1");
    assert!(refused[0].2);
    assert!(
        refused[0]
            .1
            .contains("The `explore` agent is read-only: it cannot run Bash with this input."),
        "{refused:?}"
    );
    assert_eq!(refused[1].0, "call_write_1");
    assert!(refused[1].2);
    assert!(
        refused[1]
            .1
            .contains("There is no tool named `Write`. Use one of the available tools: Read, Glob, Grep, Bash."),
        "{refused:?}"
    );
    let parent = results(bodies.last().unwrap());
    assert!(
        parent[0]
            .1
            .contains("I was not allowed to change anything.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_agent_type_is_refused_with_the_types_that_exist() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tasks(&[task("call_task_1", "wizard", "Do magic")]),
            Reply::Text("No wizard.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["Magic"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let refused = results(bodies(&server).last().unwrap());
    assert!(refused[0].2);
    assert!(
        refused[0]
            .1
            .contains("There is no agent type `wizard`. Use one of: general-purpose, explore."),
        "{refused:?}"
    );
    assert_eq!(bodies(&server).len(), 2, "no subagent request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_agent_file_defines_a_type_with_its_tools_model_and_instructions() {
    let world = World::new();
    let agents = world.home.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reader.md"),
        "---\ndescription: Reads one file and summarises it\ntools: [Read]\nmodel: mock-model-small\n---\nSummarise in one sentence.\n",
    )
    .unwrap();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tasks(&[task("call_task_1", "reader", "Summarise notes for me")]),
            Reply::Text("Summarised.".into()),
        ],
    )
    .when(
        "Summarise notes for me",
        Reply::Text("Notes are short.".into()),
    );
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["Summarise"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let bodies = bodies(&server);
    // The parent's Task description lists the type.
    let task_tool = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Task")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        task_tool.contains("- reader: Reads one file and summarises it (tools: Read)"),
        "{task_tool}"
    );
    let child = &bodies[1];
    assert_eq!(child["model"], "mock-model-small");
    let names: Vec<&str> = child["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Read"]);
    assert!(
        child["system"]
            .to_string()
            .contains("Summarise in one sentence."),
        "{}",
        child["system"]
    );
    let parent = results(bodies.last().unwrap());
    assert!(parent[0].1.contains("Notes are short."), "{parent:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_file_cannot_move_a_dont_ask_session_to_accept_edits() {
    let world = World::new();
    let agents = world.home.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("writer.md"),
        "---\ndescription: Writes files\ntools: [Write]\npermission-mode: accept-edits\n---\nWrite what you are asked.\n",
    )
    .unwrap();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tasks(&[task("call_task_1", "writer", "Write the marker file")]),
            Reply::Text("Done.".into()),
        ],
    )
    .when_request_contains("call_write_1", Reply::Text("It was refused.".into()))
    .when(
        "Write the marker file",
        tool_call(
            "call_write_1",
            "Write",
            json!({"file_path": "marker.txt", "content": "x"}),
        ),
    );
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "dont-ask", "Mark it"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!world.cwd().join("marker.txt").exists(), "dont-ask held");
    let child = bodies(&server)
        .into_iter()
        .find(|b| results(b).iter().any(|r| r.0 == "call_write_1"))
        .unwrap();
    let refused = results(&child);
    assert!(refused[0].2, "{refused:?}");
    assert!(
        refused[0]
            .1
            .contains("nobody can answer permission questions in dont-ask mode"),
        "the child ran in the session's dont-ask mode, not the file's: {refused:?}"
    );
}

// ---- background agents under `riot exec` ----

/// The parent starts a background `explore` agent and ends its turn; the
/// agent runs `command`, then answers `CHILD-ANSWER …`; the parent answers
/// the result with `PARENT-SAW`.
fn late_result(command: &str) -> Script {
    support::background_agent_script(
        command,
        "CHILD-ANSWER the notes are in notes.txt",
        vec![
            Reply::Text("PARENT-IDLE".into()),
            Reply::Text("PARENT-SAW".into()),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_waits_for_a_background_agent_and_the_model_answers_its_result() {
    let world = World::new();
    let server = MockServer::start(late_result("sleep 2")).await.unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &["--output-format", "json", "PARENT-PROMPT start the search"],
    );
    cmd.env("RIOT_EXEC_BACKGROUND_WAIT_MS", "60000");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    // One result for the prompt: the answer the model gave the agent's
    // result, counting the parent's three requests.
    let result = out.json();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["result"], "PARENT-SAW", "{result}");
    assert_eq!(result["num_turns"], 3, "{result}");
    // The last parent request: its turn's answer, then Riot's message
    // with the result, once.
    let parents: Vec<Value> = bodies(&server)
        .into_iter()
        .filter(|b| b["messages"][0].to_string().contains("PARENT-PROMPT"))
        .collect();
    assert_eq!(parents.len(), 3, "{parents:#?}");
    let messages = parents[2]["messages"].as_array().unwrap();
    let tail: Vec<String> = support::conversation(&messages[messages.len() - 2..]);
    assert_eq!(tail.len(), 2, "{tail:#?}");
    assert_eq!(tail[0], "assistant: PARENT-IDLE");
    assert!(
        tail[1].starts_with(
            "user: <background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nCHILD-ANSWER the notes are in notes.txt"
        ),
        "{tail:#?}"
    );
    assert_eq!(parents[2].to_string().matches("CHILD-ANSWER").count(), 1);
    assert!(!parents[1].to_string().contains("CHILD-ANSWER"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_in_text_says_what_it_waits_for_and_prints_the_last_answer() {
    let world = World::new();
    let server = MockServer::start(late_result("sleep 2")).await.unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &["PARENT-PROMPT start the search"],
    );
    cmd.env("RIOT_EXEC_BACKGROUND_WAIT_MS", "60000");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "PARENT-SAW\n");
    assert!(
        out.stderr
            .contains("riot: waiting for 1 background agent (bg_1) to finish; Ctrl-C stops it\n"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_while_exec_waits_for_a_background_agent_stops_it_and_its_command() {
    let world = World::new();
    let marker = format!("sleep 47.{}", std::process::id());
    let server = MockServer::start(late_result(&marker)).await.unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &["--output-format", "json", "PARENT-PROMPT start the search"],
    );
    cmd.env("RIOT_EXEC_BACKGROUND_WAIT_MS", "60000");
    let riot = support::Running::spawn(cmd);
    let pid = i64::from(riot.pid());
    // The agent's command runs, and the parent's turn is over (its second
    // request answered PARENT-IDLE): Riot is waiting.
    let mut seen = false;
    for _ in 0..600 {
        let parents = bodies(&server)
            .iter()
            .filter(|b| b["messages"][0].to_string().contains("PARENT-PROMPT"))
            .count();
        if parents == 2 && !support::processes_with(&marker).is_empty() {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        seen,
        "the agent's command never ran while the parent waited"
    );
    assert!(support::signal("INT", pid));
    let out = riot.finish().await;
    assert_eq!(out.code, Some(130), "{out:?}");
    // The result says it was interrupted, not that it succeeded.
    let result = out.json();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert_eq!(result["is_error"], true, "{result}");
    support::wait_until("the agent's command to be stopped", || {
        support::processes_with(&marker).is_empty()
    })
    .await;
    // No request answered the agent's result.
    assert!(
        !bodies(&server)
            .iter()
            .any(|b| b.to_string().contains("CHILD-ANSWER"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_wait_ceiling_exec_stops_the_agent_and_the_model_hears_it_was_stopped() {
    let world = World::new();
    let marker = format!("sleep 48.{}", std::process::id());
    let server = MockServer::start(late_result(&marker)).await.unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &["--output-format", "json", "PARENT-PROMPT start the search"],
    );
    cmd.env("RIOT_EXEC_BACKGROUND_WAIT_MS", "3000");
    let riot = support::Running::spawn(cmd);
    // The agent's command runs before the wait runs out…
    support::wait_until("the agent's command to start", || {
        !support::processes_with(&marker).is_empty()
    })
    .await;
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(
            "riot: stopped background agent bg_1 after waiting 3 s for it (RIOT_EXEC_BACKGROUND_WAIT_MS)\n"
        ),
        "{}",
        out.stderr
    );
    // The model was told, and answered; one result for the prompt.
    let result = out.json();
    assert_eq!(result["result"], "PARENT-SAW", "{result}");
    let parents: Vec<Value> = bodies(&server)
        .into_iter()
        .filter(|b| b["messages"][0].to_string().contains("PARENT-PROMPT"))
        .collect();
    assert_eq!(parents.len(), 3, "{parents:#?}");
    assert!(
        parents[2]
            .to_string()
            .contains(r#"<background-task id=\"bg_1\" agent=\"explore\" status=\"stopped\">"#),
        "{}",
        parents[2]
    );
    // …and is gone after it.
    support::wait_until("the agent's command to be stopped", || {
        support::processes_with(&marker).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_ceiling_that_is_not_a_number_is_a_usage_error() {
    let world = World::new();
    let server = MockServer::start(late_result("sleep 1")).await.unwrap();
    let mut cmd = world.exec(&server, Wire::Anthropic, &["PARENT-PROMPT start"]);
    cmd.env("RIOT_EXEC_BACKGROUND_WAIT_MS", "10m");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot exec: RIOT_EXEC_BACKGROUND_WAIT_MS must be a whole number of milliseconds (0: do not wait), not `10m`\n"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_exec_ends_with_the_turn_and_stops_its_background_agent() {
    let world = World::new();
    let server = MockServer::start(late_result(&format!("sleep 49.{}", std::process::id())))
        .await
        .unwrap();
    let riot = support::Running::spawn(world.exec(
        &server,
        Wire::Anthropic,
        &["PARENT-PROMPT start the search"],
    ));
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "PARENT-IDLE\n");
    assert!(
        out.stderr.contains(
            "riot: stopping background agent bg_1 as the run ends; set RIOT_EXEC_BACKGROUND_WAIT_MS to wait for it\n"
        ),
        "{}",
        out.stderr
    );
    // No turn after the prompt's. (That the agent's commands die with the
    // session is `ctrl_c_while_exec_waits_…`'s check and the kernel's
    // `closing_the_parent_stops_its_background_agent_and_its_command`:
    // here the run may end before the command starts.)
    let parents = bodies(&server)
        .iter()
        .filter(|b| b["messages"][0].to_string().contains("PARENT-PROMPT"))
        .count();
    assert_eq!(parents, 2);
}
