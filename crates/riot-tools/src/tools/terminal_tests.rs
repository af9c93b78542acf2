#![allow(clippy::disallowed_methods)] // tests write scripts with std::fs

use std::sync::Arc;

use riot_protocol::{DynTool, PermissionTarget, ToolEnv, ToolOutcome, ToolResultContent};
use serde_json::json;

use super::*;
use crate::testing::{TempProject, context};

fn text(outcome: &ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Ok { model_content, .. } => model_content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text { text } => text.clone(),
                other => panic!("unexpected content {other:?}"),
            })
            .collect(),
        ToolOutcome::Failed {
            error_for_model, ..
        } => format!("FAILED: {error_for_model}"),
        ToolOutcome::Cancelled => "CANCELLED".into(),
    }
}

/// A real project whose session has real terminals.
fn project() -> (TempProject, Arc<ToolEnv>) {
    let project = TempProject::new();
    let mut env = ToolEnv::new(
        project.env.cwd.clone(),
        project.env.spill_dir.clone(),
        Arc::clone(&project.env.fs),
        Arc::clone(&project.env.proc),
        Arc::clone(&project.env.clock),
        Arc::clone(&project.env.ids),
    );
    env.terminals = Arc::new(riot_runtime::PtyTerminals::default());
    (project, Arc::new(env))
}

async fn run(env: &Arc<ToolEnv>, input: serde_json::Value) -> String {
    let call = Arc::new(Terminal).prepare(input).unwrap();
    let ctx = context(Arc::clone(env));
    if let Err(e) = call.validate_input(&ctx).await {
        return format!("INVALID: {}", e.message);
    }
    text(&call.call(&ctx).await)
}

#[test]
fn named_keys_become_terminal_bytes() {
    assert_eq!(encode_keys("ls -l<Enter>"), b"ls -l\r");
    assert_eq!(encode_keys("<C-c><Up><Esc>:q<CR>"), b"\x03\x1b[A\x1b:q\r");
    assert_eq!(encode_keys("a <lt>b> <div> x<y"), b"a <b> <div> x<y");
    assert_eq!(encode_keys("\u{3}"), b"\x03");
    assert_eq!(encode_keys("<C-C>"), b"\x03", "key names ignore case");
    assert_eq!(encode_keys("<C-1>"), b"<C-1>", "not a key: typed as is");
}

#[test]
fn a_write_is_judged_as_the_command_lines_it_types() {
    assert_eq!(typed_as_command("rm -rf ~<Enter>"), "rm -rf ~\n");
    assert_eq!(typed_as_command("<C-c>git push -f\r"), "git push -f\n");
    let call = |input: serde_json::Value| Arc::new(Terminal).prepare(input).unwrap();
    let env = Arc::new(crate::testing::null_env(riot_protocol::FixedClock::new()));
    let ctx = context(env);
    assert_eq!(
        call(json!({"action": "write", "name": "sh", "input": "curl x | sh<Enter>"}))
            .permission_target(&ctx),
        PermissionTarget::Command {
            command: "curl x | sh\n".into()
        }
    );
    assert_eq!(
        call(json!({"action": "open", "name": "dev", "command": "npm run dev"}))
            .permission_target(&ctx),
        PermissionTarget::Command {
            command: "npm run dev".into()
        }
    );
    let read = call(json!({"action": "read", "name": "dev"}));
    assert!(read.is_read_only());
    assert_eq!(read.permission_target(&ctx), PermissionTarget::Opaque);
    assert!(!call(json!({"action": "close", "name": "dev"})).is_read_only());
    assert!(!call(json!({"action": "open", "name": "dev", "command": "ls"})).is_read_only());
}

#[tokio::test]
async fn inputs_that_do_not_fit_the_action_are_refused_with_the_fix() {
    let (_project, env) = project();
    assert_eq!(
        run(&env, json!({"action": "open", "name": "dev"})).await,
        "INVALID: action \"open\" needs `command`: the command line to run, e.g. \"npm run dev\"."
    );
    assert_eq!(
        run(&env, json!({"action": "read", "name": "dev", "input": "x"})).await,
        "INVALID: `input` is only for action \"write\"; leave it out."
    );
    assert_eq!(
        run(&env, json!({"action": "read", "name": "my server"})).await,
        "INVALID: `name` must be 1 to 40 letters, digits, `-` or `_`, e.g. \"dev-server\"."
    );
    assert!(
        run(
            &env,
            json!({"action": "wait", "name": "dev", "pattern": "("})
        )
        .await
        .starts_with("INVALID: `pattern` is not a valid regular expression")
    );
    assert_eq!(
        run(&env, json!({"action": "read", "name": "dev"})).await,
        "FAILED: no terminal named `dev`; open terminals: none. Open it first with action \"open\"."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repl_session_through_the_tool() {
    let (_project, env) = project();
    let opened = run(
        &env,
        json!({"action": "open", "name": "py", "command": "python3 -q"}),
    )
    .await;
    assert!(
        opened.starts_with("Opened terminal `py` running `python3 -q`.\n"),
        "{opened}"
    );
    assert!(opened.contains("```\n>>>\n```"), "{opened}");

    let typed = run(
        &env,
        json!({"action": "write", "name": "py", "input": "sum(range(10))<Enter>"}),
    )
    .await;
    assert!(
        typed.starts_with("Typed into `py`.\nNew output:\n"),
        "{typed}"
    );
    assert!(
        typed.contains(
            "Screen now:\n```\n>>> sum(range(10))\n45\n>>>\n```\nCursor at row 3, column 5."
        ),
        "{typed}"
    );

    // The person types; the agent's next read says what.
    env.terminals
        .write("py", b"x = 3\r", riot_protocol::Typist::Person)
        .await
        .unwrap();
    env.terminals.settle("py", 2_000).await.unwrap();
    let read = run(&env, json!({"action": "read", "name": "py"})).await;
    assert!(
        read.contains("The person typed into this terminal: x = 3<Enter>\n"),
        "{read}"
    );

    // A face sends each key as it is pressed: the read shows them as one line typed.
    for key in [&b"x"[..], b"*", b"2", b"\r"] {
        env.terminals
            .write("py", key, riot_protocol::Typist::Person)
            .await
            .unwrap();
    }
    env.terminals.settle("py", 2_000).await.unwrap();
    let read = run(&env, json!({"action": "read", "name": "py"})).await;
    assert!(
        read.contains("The person typed into this terminal: x*2<Enter>\n"),
        "{read}"
    );
    assert!(read.contains("\n6\n>>>\n```"), "{read}");

    let closed = run(&env, json!({"action": "close", "name": "py"})).await;
    assert!(
        closed.starts_with(
            "Closed terminal `py`: its program and everything it started were stopped."
        ),
        "{closed}"
    );
    assert!(
        closed.ends_with("The program was ended by signal 9."),
        "{closed}"
    );
    assert!(env.terminals.list().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_reports_the_matching_text_and_a_timeout() {
    let (project, env) = project();
    std::fs::write(
        project.root().join("dev.sh"),
        "echo building\nsleep 0.3\necho 'Local: http://localhost:4321/ ready'\nexec sleep 300\n",
    )
    .unwrap();
    run(
        &env,
        json!({"action": "open", "name": "dev", "command": "bash dev.sh"}),
    )
    .await;
    let waited = run(
        &env,
        json!({"action": "wait", "name": "dev", "pattern": "http://\\S+ ready", "timeout_ms": 20000}),
    )
    .await;
    assert!(
        waited.starts_with("`http://\\S+ ready` matched in `dev`: http://localhost:4321/ ready\n"),
        "{waited}"
    );
    let again = run(
        &env,
        json!({"action": "wait", "name": "dev", "pattern": "ready", "timeout_ms": 200}),
    )
    .await;
    assert!(
        again.starts_with(
            "`ready` did not appear in `dev` within 200 ms; the program is still running."
        ),
        "{again}"
    );
    run(&env, json!({"action": "close", "name": "dev"})).await;
}

#[tokio::test]
async fn leaving_the_sandbox_is_always_a_question_and_only_for_open() {
    let (_project, env) = project();
    let ctx = context(Arc::clone(&env));
    let input = |v: serde_json::Value| serde_json::from_value::<TerminalInput>(v).unwrap();
    assert_eq!(
        Terminal
            .check_permissions(
                &input(json!({"action": "open", "name": "dev", "command": "npm run dev"})),
                &ctx
            )
            .await,
        PermissionResult::Passthrough
    );
    let PermissionResult::Ask { reason, message } = Terminal
        .check_permissions(
            &input(json!({"action": "open", "name": "dev", "command": "npm run dev ", "dangerouslyDisableSandbox": true})),
            &ctx,
        )
        .await
    else {
        panic!("leaving the sandbox must ask");
    };
    assert_eq!(
        reason,
        DecisionReason::Sandbox {
            detail: "asks to run terminal `dev` outside the OS sandbox".into()
        }
    );
    assert!(!reason.yields_to_bypass());
    assert_eq!(
        message,
        "Riot wants to open terminal `dev` running `npm run dev` OUTSIDE the OS sandbox (dangerouslyDisableSandbox), with full access to your files and the network. Everything typed into it later runs outside the sandbox too (each write is asked about like this open)."
    );
    assert_eq!(
        run(
            &env,
            json!({"action": "read", "name": "dev", "dangerouslyDisableSandbox": true})
        )
        .await,
        "INVALID: `dangerouslyDisableSandbox` is only for action \"open\"; leave it out."
    );
}

/// The session's sandbox rewrites every terminal's program but one opened
/// with `dangerouslyDisableSandbox` (here the "sandbox" replaces the
/// command, so the screen shows which ran).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_an_open_that_leaves_the_sandbox_is_not_rewritten() {
    let project = TempProject::new();
    let mut env = ToolEnv::new(
        project.env.cwd.clone(),
        project.env.spill_dir.clone(),
        Arc::clone(&project.env.fs),
        Arc::clone(&project.env.proc),
        Arc::clone(&project.env.clock),
        Arc::clone(&project.env.ids),
    );
    env.terminals = Arc::new(riot_runtime::PtyTerminals::sandboxed(Arc::new(
        |mut spec: riot_protocol::ProcessSpec| {
            spec.args = vec!["-c".into(), "echo in-the-sandbox; exec sleep 300".into()];
            spec
        },
    )));
    let env = Arc::new(env);
    let command = "echo unsandboxed; exec sleep 300";
    let inside = run(
        &env,
        json!({"action": "open", "name": "a", "command": command}),
    )
    .await;
    assert!(inside.contains("```\nin-the-sandbox\n```"), "{inside}");
    let outside = run(
        &env,
        json!({"action": "open", "name": "b", "command": command, "dangerouslyDisableSandbox": true}),
    )
    .await;
    assert!(outside.contains("```\nunsandboxed\n```"), "{outside}");
    env.terminals.close_all();
}

/// Typing into a terminal that runs outside the sandbox runs the text
/// outside too: each write is a sandbox question (which bypass mode does
/// not answer), however harmless the text looks; a write to a sandboxed
/// terminal is judged as the command lines it types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_terminal_outside_the_sandbox_is_always_a_question() {
    let project = TempProject::new();
    let mut env = ToolEnv::new(
        project.env.cwd.clone(),
        project.env.spill_dir.clone(),
        Arc::clone(&project.env.fs),
        Arc::clone(&project.env.proc),
        Arc::clone(&project.env.clock),
        Arc::clone(&project.env.ids),
    );
    env.terminals = Arc::new(riot_runtime::PtyTerminals::sandboxed(Arc::new(
        |spec: riot_protocol::ProcessSpec| spec,
    )));
    let env = Arc::new(env);
    let ctx = context(Arc::clone(&env));
    let input = |v: serde_json::Value| serde_json::from_value::<TerminalInput>(v).unwrap();
    run(
        &env,
        json!({"action": "open", "name": "in", "command": "cat"}),
    )
    .await;
    run(
        &env,
        json!({"action": "open", "name": "out", "command": "cat", "dangerouslyDisableSandbox": true}),
    )
    .await;
    let listed: Vec<(String, bool)> = env
        .terminals
        .list()
        .into_iter()
        .map(|t| (t.name, t.outside_sandbox))
        .collect();
    assert_eq!(listed, [("in".to_owned(), false), ("out".to_owned(), true)]);
    let write = |name: &str| input(json!({"action": "write", "name": name, "input": "ls<Enter>"}));
    assert_eq!(
        Terminal.check_permissions(&write("in"), &ctx).await,
        PermissionResult::Passthrough
    );
    let PermissionResult::Ask { reason, message } =
        Terminal.check_permissions(&write("out"), &ctx).await
    else {
        panic!("typing outside the sandbox must ask");
    };
    assert_eq!(
        reason,
        DecisionReason::Sandbox {
            detail: "types into terminal `out`, which runs outside the OS sandbox".into()
        }
    );
    assert!(!reason.yields_to_bypass());
    assert_eq!(
        message,
        "Riot wants to type `ls<Enter>` into terminal `out`, which runs OUTSIDE the OS sandbox: what is typed there runs with full access to your files and the network."
    );
    env.terminals.close_all();
}

/// Without a sandbox there is nothing to leave: the terminal is not
/// reported outside it, and writes are judged as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_sandbox_no_terminal_is_outside_it() {
    let (_project, env) = project();
    let ctx = context(Arc::clone(&env));
    run(
        &env,
        json!({"action": "open", "name": "out", "command": "cat", "dangerouslyDisableSandbox": true}),
    )
    .await;
    assert!(!env.terminals.list()[0].outside_sandbox);
    let write = serde_json::from_value::<TerminalInput>(
        json!({"action": "write", "name": "out", "input": "ls<Enter>"}),
    )
    .unwrap();
    assert_eq!(
        Terminal.check_permissions(&write, &ctx).await,
        PermissionResult::Passthrough
    );
    env.terminals.close_all();
}

/// Terminals that report a given foreground for every name, and one open
/// terminal `t` opened with `command` (no program runs).
#[derive(Debug)]
struct Reporting {
    foreground: riot_protocol::TerminalForeground,
    command: &'static str,
}

#[async_trait::async_trait]
impl riot_protocol::Terminals for Reporting {
    fn available(&self) -> bool {
        true
    }
    async fn open(&self, _: TerminalSpec) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }
    async fn write(&self, _: &str, _: &[u8], _: Typist) -> Result<(), TerminalError> {
        Err(TerminalError::Unavailable)
    }
    async fn settle(&self, _: &str, _: u64) -> Result<(), TerminalError> {
        Err(TerminalError::Unavailable)
    }
    async fn read(&self, _: &str) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }
    async fn wait(
        &self,
        _: &str,
        _: &str,
        _: u64,
        _: tokio_util::sync::CancellationToken,
    ) -> Result<(WaitEnd, TerminalView), TerminalError> {
        Err(TerminalError::Unavailable)
    }
    async fn close(&self, _: &str) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }
    fn list(&self) -> Vec<riot_protocol::TerminalInfo> {
        vec![riot_protocol::TerminalInfo {
            name: "t".into(),
            command: self.command.into(),
            running: true,
            outside_sandbox: false,
        }]
    }
    fn foreground(&self, _: &str) -> riot_protocol::TerminalForeground {
        self.foreground.clone()
    }
    fn subscribe(&self, _: riot_protocol::TerminalSink) {}
    fn close_all(&self) {}
}

/// A write is shell text only while a shell (or a program handing typed
/// text to one) runs in the terminal's foreground, or when that cannot be
/// told; where the system does not report it, the opening command decides.
#[test]
fn a_write_is_shell_text_only_while_a_shell_runs_in_the_foreground() {
    use riot_protocol::TerminalForeground::{NotReported, Programs, Unknown};
    let target = |foreground: riot_protocol::TerminalForeground, command: &'static str| {
        let mut env = crate::testing::null_env(riot_protocol::FixedClock::new());
        env.terminals = Arc::new(Reporting {
            foreground,
            command,
        });
        let ctx = context(Arc::new(env));
        Arc::new(Terminal)
            .prepare(json!({"action": "write", "name": "t", "input": "print(6*7)<Enter>"}))
            .unwrap()
            .permission_target(&ctx)
    };
    let shell_text = PermissionTarget::Command {
        command: "print(6*7)\n".into(),
    };
    let names = |names: &[&str]| Programs(names.iter().map(|n| (*n).to_owned()).collect());
    let cases = [
        (
            names(&["python3", "python3.12"]),
            "bash",
            PermissionTarget::Opaque,
        ),
        (names(&["node"]), "node", PermissionTarget::Opaque),
        (names(&["bash"]), "python3", shell_text.clone()),
        (names(&["zsh-5.9"]), "zsh", shell_text.clone()),
        (names(&["ksh93"]), "ksh", shell_text.clone()),
        // A group where a shell waits for the program it started: still a shell.
        (names(&["bash", "python3"]), "python3", shell_text.clone()),
        // The shell runs on a pseudo-terminal of tmux's own.
        (names(&["tmux"]), "tmux", shell_text.clone()),
        // The sandbox is still starting the program: it may be a shell.
        (names(&["bwrap", "riot"]), "python3", shell_text.clone()),
        (Unknown, "python3 -q", shell_text.clone()),
        (NotReported, "python3 -q", PermissionTarget::Opaque),
        (NotReported, "/usr/bin/python3", PermissionTarget::Opaque),
        (NotReported, "bash", shell_text.clone()),
        (NotReported, "exec /bin/zsh -l", shell_text.clone()),
        (NotReported, "sudo -u me fish", shell_text.clone()),
        (NotReported, "cd app && python3", shell_text.clone()),
        (NotReported, "$SHELL", shell_text.clone()),
        (NotReported, "PYTHONPATH=. python3", shell_text.clone()),
    ];
    for (foreground, command, want) in cases {
        let shown = format!("{foreground:?} opened with `{command}`");
        assert_eq!(target(foreground, command), want, "{shown}");
    }
}

/// The real permission chain's answer for a Terminal call.
async fn chain_answer(
    project: &TempProject,
    env: &Arc<ToolEnv>,
    input: serde_json::Value,
    mode: riot_protocol::PermissionMode,
) -> PermissionResult {
    use riot_protocol::PermissionPolicy as _;
    let call = Arc::new(Terminal).prepare(input.clone()).unwrap();
    let ctx = context(Arc::clone(env));
    let query = riot_protocol::PermissionQuery {
        tool_name: "Terminal".into(),
        input,
        is_read_only: call.is_read_only(),
        target: call.permission_target(&ctx),
        tool_verdict: call.check_permissions(&ctx).await,
        classifier_input: call.classifier_input(),
        mode,
        hook: None,
    };
    riot_permissions::Policy::new(project.root(), None)
        .decide(&query)
        .await
}

/// Typed into a Python REPL, `print(6*7)` is Python, not a shell command
/// line: bypass mode allows it and default mode asks as for any action;
/// typed into a shell, a command that changes a protected path is still a
/// safety question in bypass mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_into_a_repl_is_not_judged_as_shell_text_but_typing_into_a_shell_is() {
    use riot_protocol::PermissionMode::{Bypass, Default};
    let (project, env) = project();
    let opened = run(
        &env,
        json!({"action": "open", "name": "py", "command": "python3 -q"}),
    )
    .await;
    assert!(opened.contains(">>>"), "{opened}");
    let print = json!({"action": "write", "name": "py", "input": "print(6*7)<Enter>"});
    assert_eq!(
        chain_answer(&project, &env, print.clone(), Bypass).await,
        PermissionResult::Allow {
            reason: DecisionReason::Mode {
                detail: "bypass mode allows calls no rule or safety check stopped".into(),
                mode: Bypass,
            },
            updated_input: None,
        }
    );
    assert_eq!(
        chain_answer(&project, &env, print, Default).await,
        PermissionResult::Ask {
            reason: DecisionReason::Mode {
                detail: "default mode asks before Terminal runs".into(),
                mode: Default,
            },
            message: "Riot wants to use Terminal".into(),
        }
    );

    let opened = run(
        &env,
        json!({"action": "open", "name": "sh", "command": "PS1='$ ' exec bash --norc --noprofile"}),
    )
    .await;
    assert!(opened.contains("$"), "{opened}");
    let rm = json!({"action": "write", "name": "sh", "input": "rm -rf .git<Enter>"});
    let PermissionResult::Ask { reason, .. } = chain_answer(&project, &env, rm, Bypass).await
    else {
        panic!("a protected path changed at a shell prompt asks");
    };
    assert_eq!(
        reason,
        DecisionReason::Safety {
            detail: "`rm -rf .git` may change a protected path: `.git` is git's internal state (hooks and config run code)".into()
        }
    );
    env.terminals.close_all();
}
