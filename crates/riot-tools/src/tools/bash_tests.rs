use std::sync::{Arc, Mutex};

use riot_protocol::ToolOutcome;

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::bash_output::{BashOutput, BashOutputInput};
use crate::tools::kill_shell::{KillShell, KillShellInput};

fn bash(command: &str) -> BashInput {
    BashInput {
        command: command.into(),
        timeout: None,
        description: None,
        run_in_background: None,
        dangerously_disable_sandbox: None,
    }
}

#[tokio::test]
async fn runs_in_the_project_with_a_non_interactive_environment() {
    let p = TempProject::with_scrubbed_env(vec!["HOME".into()]);
    let out = Bash
        .call(
            bash("pwd; echo \"$GIT_EDITOR $EDITOR $VISUAL $GIT_PAGER $PAGER $NO_COLOR $GIT_TERMINAL_PROMPT home=${HOME:-scrubbed}\"; cat; echo done"),
            &p.ctx(),
        )
        .await;
    assert_eq!(
        text_of(&out),
        format!(
            "{}\ntrue true true cat cat 1 0 home=scrubbed\ndone",
            p.root().display()
        ),
        "stdin is /dev/null, so `cat` returns at once"
    );
    let ToolOutcome::Ok {
        ui_payload:
            Some(UiPayload::Command {
                exit_code,
                timed_out,
                ..
            }),
        ..
    } = out
    else {
        panic!("no command payload")
    };
    assert_eq!((exit_code, timed_out), (Some(0), false));
}

#[tokio::test]
async fn each_call_is_a_fresh_shell() {
    let p = TempProject::new();
    Bash.call(bash("cd /; export RIOT_X=1"), &p.ctx()).await;
    let out = Bash
        .call(bash("pwd; echo ${RIOT_X:-unset}"), &p.ctx())
        .await;
    assert_eq!(text_of(&out), format!("{}\nunset", p.root().display()));
}

#[tokio::test]
async fn a_non_zero_exit_is_reported_neutrally_but_is_an_error_result() {
    let p = TempProject::new();
    let out = Bash
        .call(bash("echo looked; echo 'no match' >&2; exit 1"), &p.ctx())
        .await;
    assert!(
        out.is_failed(),
        "a failing command is an error result, for the cascade"
    );
    assert_eq!(text_of(&out), "looked\n[stderr]\nno match\nExit code 1");
}

#[tokio::test]
async fn a_timed_out_command_returns_what_it_produced() {
    let p = TempProject::new();
    let mut input = bash("echo before; sleep 30; echo after");
    // Long enough that a loaded machine still starts bash and runs its
    // echo inside it.
    input.timeout = Some(2000);
    let out = Bash.call(input, &p.ctx()).await;
    assert!(out.is_failed());
    let text = text_of(&out);
    assert!(
        text.starts_with("before\nThe command timed out after 2000 ms and was stopped"),
        "{text}"
    );
    assert!(!text.contains("after\n"));
}

#[tokio::test]
async fn huge_output_keeps_head_and_tail_and_states_the_cut() {
    let p = TempProject::new();
    let out = Bash
        .call(
            bash("echo FIRST; head -c 2000000 /dev/zero | tr '\\0' 'x'; echo; echo LAST"),
            &p.ctx(),
        )
        .await;
    let text = text_of(&out);
    assert!(text.starts_with("FIRST\nxxx"));
    assert!(text.ends_with("xxx\nLAST"));
    assert!(
        text.contains("bytes omitted from the middle: 2000012 bytes in total"),
        "output of {} chars lacks the statement of the cut",
        text.len()
    );
}

#[tokio::test]
async fn output_is_reported_as_progress() {
    let p = TempProject::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&seen);
    let mut ctx = p.ctx();
    ctx.progress = Some(Arc::new(move |payload| {
        if let ProgressPayload::Output { text, .. } = payload {
            sink.lock().unwrap().push_str(&text);
        }
    }));
    Bash.call(bash("echo live"), &ctx).await;
    assert_eq!(seen.lock().unwrap().as_str(), "live\n");
}

#[tokio::test]
async fn cancellation_ends_the_call_as_cancelled() {
    let p = TempProject::new();
    let ctx = p.ctx();
    let cancel = ctx.cancel.clone();
    let mut ctx2 = ctx.clone();
    ctx2.progress = Some(Arc::new(move |_| cancel.cancel()));
    let out = Bash.call(bash("echo go; sleep 30"), &ctx2).await;
    assert_eq!(out, ToolOutcome::Cancelled);
}

#[tokio::test]
async fn timeouts_over_the_maximum_and_empty_commands_are_refused() {
    let p = TempProject::new();
    let mut input = bash("ls");
    input.timeout = Some(600_001);
    let e = Bash.validate_input(&input, &p.ctx()).await.unwrap_err();
    assert!(
        e.message
            .starts_with("`timeout` 600001 ms is over the maximum of 600000 ms")
    );
    let e = Bash
        .validate_input(&bash("  "), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("must not be empty"));
}

#[tokio::test]
async fn background_jobs_can_be_read_and_stopped() {
    let p = TempProject::new();
    let mut input = bash("echo started; sleep 30");
    input.run_in_background = Some(true);
    let out = Bash.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Started in the background with id bash_1. Read its new output with BashOutput (bash_id: \"bash_1\"); stop it with KillShell (shell_id: \"bash_1\")."
    );
    let mut seen = String::new();
    for _ in 0..250 {
        let read = BashOutput
            .call(
                BashOutputInput {
                    bash_id: "bash_1".into(),
                },
                &p.ctx(),
            )
            .await;
        seen = text_of(&read);
        if seen.contains("started") {
            break;
        }
        // Real time, so the job's reader can catch up (bounded: 5 s).
        riot_protocol::Clock::sleep_ms(&riot_runtime::SystemClock, 20).await;
    }
    assert_eq!(seen, "Status: running\nstarted");
    let killed = KillShell
        .call(
            KillShellInput {
                shell_id: "bash_1".into(),
            },
            &p.ctx(),
        )
        .await;
    assert_eq!(text_of(&killed), "Stopped background command bash_1.");
    let unknown = BashOutput
        .call(
            BashOutputInput {
                bash_id: "bash_9".into(),
            },
            &p.ctx(),
        )
        .await;
    assert!(text_of(&unknown).starts_with("There is no background command with id `bash_9`"));
}

#[test]
fn bash_cascades_and_is_read_only_exactly_when_the_command_analysis_says_so() {
    assert!(Bash.cascades_on_failure());
    for (command, read_only) in [
        ("ls -la", true),
        ("git status", true),
        ("rg foo", true),
        ("rm -rf build", false),
        ("sed -i s/a/b/ f", false),
        ("ls > out.txt", false),
        ("echo $(whoami)", false),
    ] {
        let input = bash(command);
        assert_eq!(Bash.is_read_only(&input), read_only, "{command}");
        assert_eq!(
            Bash.is_concurrency_safe(&input),
            read_only,
            "concurrency-safe exactly when read-only: {command}"
        );
    }
}

#[tokio::test]
async fn leaving_the_sandbox_is_always_a_question_that_says_why() {
    let p = TempProject::new();
    let mut input = bash("curl -sS https://example.com");
    assert_eq!(
        Bash.check_permissions(&input, &p.ctx()).await,
        PermissionResult::Passthrough
    );
    input.dangerously_disable_sandbox = Some(true);
    input.description = Some("needs the network to fetch the page".into());
    let PermissionResult::Ask { reason, message } = Bash.check_permissions(&input, &p.ctx()).await
    else {
        panic!("leaving the sandbox must ask");
    };
    assert_eq!(
        reason,
        DecisionReason::Sandbox {
            detail: "asks to run outside the OS sandbox: needs the network to fetch the page"
                .into()
        }
    );
    assert!(!reason.yields_to_bypass());
    assert_eq!(
        message,
        "Riot wants to run `curl -sS https://example.com` OUTSIDE the OS sandbox (dangerouslyDisableSandbox), with full access to your files and the network. Its reason: needs the network to fetch the page"
    );
    input.description = None;
    let PermissionResult::Ask { reason, .. } = Bash.check_permissions(&input, &p.ctx()).await
    else {
        panic!("leaving the sandbox must ask");
    };
    assert_eq!(
        reason.detail(),
        "asks to run outside the OS sandbox: no reason given"
    );
}

#[tokio::test]
async fn only_a_call_that_leaves_the_sandbox_runs_on_the_unsandboxed_runner() {
    let p = TempProject::new();
    // The "sandboxed" runner runs nothing; the one outside is real.
    let mut env = riot_protocol::ToolEnv::new(
        p.env.cwd.clone(),
        p.env.spill_dir.clone(),
        Arc::clone(&p.env.fs),
        Arc::new(crate::testing::NullProc),
        Arc::clone(&p.env.clock),
        Arc::clone(&p.env.ids),
    );
    env.unsandboxed_proc = Some(Arc::clone(&p.env.proc));
    let ctx = crate::testing::context(Arc::new(env));
    let inside = Bash.call(bash("echo inside"), &ctx).await;
    assert_eq!(
        text_of(&inside),
        "The command could not be started: running processes is not available here."
    );
    let mut outside = bash("echo outside");
    outside.dangerously_disable_sandbox = Some(true);
    assert_eq!(text_of(&Bash.call(outside, &ctx).await), "outside");
}

/// A runner whose `prepare` puts a wrapper in front (as the sandbox does)
/// and that runs nothing itself.
#[derive(Debug)]
struct WrappingRunner;

#[async_trait::async_trait]
impl riot_protocol::ProcessRunner for WrappingRunner {
    async fn run(
        &self,
        _spec: ProcessSpec,
        _cancel: tokio_util::sync::CancellationToken,
        _on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, riot_protocol::ProcessError> {
        panic!("a command host is set: the runner must not run the command")
    }
    async fn spawn_background(
        &self,
        _spec: ProcessSpec,
    ) -> Result<String, riot_protocol::ProcessError> {
        Ok("bg_1".into())
    }
    async fn read_background(
        &self,
        _id: &str,
    ) -> Result<riot_protocol::BackgroundOutput, riot_protocol::ProcessError> {
        Err(riot_protocol::ProcessError::Unavailable)
    }
    async fn kill_background(&self, _id: &str) -> Result<(), riot_protocol::ProcessError> {
        Err(riot_protocol::ProcessError::Unavailable)
    }
    fn prepare(&self, mut spec: ProcessSpec) -> ProcessSpec {
        spec.args.insert(0, spec.program.clone());
        spec.program = "wrapper".into();
        spec
    }
}

/// A command host (an editor's terminals) that records what it is handed
/// and answers with a fixed output.
#[derive(Debug)]
struct RecordingHost {
    handed: Mutex<Vec<(String, ProcessSpec)>>,
    answer: ProcessOutput,
}

#[async_trait::async_trait]
impl riot_protocol::CommandHost for RecordingHost {
    async fn run(
        &self,
        tool_use_id: &str,
        spec: ProcessSpec,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Result<ProcessOutput, riot_protocol::ProcessError> {
        self.handed
            .lock()
            .unwrap()
            .push((tool_use_id.to_owned(), spec));
        Ok(self.answer.clone())
    }
}

#[tokio::test]
async fn a_command_host_runs_the_prepared_foreground_command_and_its_result_reads_as_bashs() {
    let p = TempProject::with_scrubbed_env(vec!["ANTHROPIC_API_KEY".into()]);
    let host = Arc::new(RecordingHost {
        handed: Mutex::new(Vec::new()),
        answer: ProcessOutput {
            exit_code: Some(2),
            stdout: CapturedOutput {
                head: "ran in the editor\n".into(),
                total_bytes: 18,
                ..CapturedOutput::default()
            },
            ..ProcessOutput::default()
        },
    });
    let mut env = riot_protocol::ToolEnv::new(
        p.env.cwd.clone(),
        p.env.spill_dir.clone(),
        Arc::clone(&p.env.fs),
        Arc::new(WrappingRunner),
        Arc::clone(&p.env.clock),
        Arc::clone(&p.env.ids),
    );
    env.scrubbed_env = p.env.scrubbed_env.clone();
    env.command_host = Some(Arc::clone(&host) as Arc<dyn riot_protocol::CommandHost>);
    let ctx = crate::testing::context(Arc::new(env));
    let mut input = bash("make test");
    input.timeout = Some(5000);
    let out = Bash.call(input, &ctx).await;
    // The same text and error status as a local exit code 2.
    let ToolOutcome::Failed {
        error_for_model,
        ui_payload: Some(UiPayload::Command { exit_code, .. }),
    } = out
    else {
        panic!("a non-zero exit is a failed result: {out:?}")
    };
    assert_eq!(error_for_model, "ran in the editor\nExit code 2");
    assert_eq!(exit_code, Some(2));
    let handed = host.handed.lock().unwrap().clone();
    assert_eq!(handed.len(), 1);
    let (call, spec) = &handed[0];
    assert_eq!(call, "toolu_test");
    // The runner's rewrite, then Bash's own spec.
    assert_eq!(spec.program, "wrapper");
    assert_eq!(spec.args, ["bash", "-c", "make test"]);
    assert_eq!(spec.cwd, p.root());
    assert_eq!(spec.timeout_ms, Some(5000));
    assert_eq!(spec.env_remove, ["ANTHROPIC_API_KEY"]);
    assert!(spec.env_set.contains(&("PAGER".into(), "cat".into())));

    // A background command is still the runner's.
    let mut background = bash("sleep 100");
    background.run_in_background = Some(true);
    let started = Bash.call(background, &ctx).await;
    assert!(text_of(&started).starts_with("Started in the background with id bg_1."));
    assert_eq!(host.handed.lock().unwrap().len(), 1);
}

/// A command host that answers one call with `answer`.
#[derive(Debug)]
struct AnswerHost(Mutex<Option<Result<ProcessOutput, riot_protocol::ProcessError>>>);

#[async_trait::async_trait]
impl riot_protocol::CommandHost for AnswerHost {
    async fn run(
        &self,
        _tool_use_id: &str,
        _spec: ProcessSpec,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Result<ProcessOutput, riot_protocol::ProcessError> {
        self.0.lock().unwrap().take().expect("one call")
    }
}

async fn call_with_host(answer: Result<ProcessOutput, riot_protocol::ProcessError>) -> ToolOutcome {
    let p = TempProject::new();
    let mut env = riot_protocol::ToolEnv::new(
        p.env.cwd.clone(),
        p.env.spill_dir.clone(),
        Arc::clone(&p.env.fs),
        Arc::new(WrappingRunner),
        Arc::clone(&p.env.clock),
        Arc::clone(&p.env.ids),
    );
    env.command_host = Some(Arc::new(AnswerHost(Mutex::new(Some(answer)))));
    let ctx = crate::testing::context(Arc::new(env));
    Bash.call(bash("make deploy"), &ctx).await
}

#[tokio::test]
async fn a_command_whose_result_was_lost_after_it_started_is_not_called_unstarted() {
    let out = call_with_host(Err(riot_protocol::ProcessError::ResultLost(
        "the editor's terminal failed to wait for the command: connection closed".into(),
    )))
    .await;
    let ToolOutcome::Failed {
        error_for_model,
        ui_payload: None,
    } = out
    else {
        panic!("a lost result is a failure: {out:?}")
    };
    assert_eq!(
        error_for_model,
        "The command was started in the editor's terminal, but its result could not be read (the editor's terminal failed to wait for the command: connection closed); it may have run. Check its effects before running it again."
    );
}

#[tokio::test]
async fn output_whose_beginning_the_host_cut_is_shown_whole_and_flagged_truncated() {
    let cut = CapturedOutput {
        head: "[… the beginning was cut …]\n".into(),
        tail: "the end\n".into(),
        total_bytes: 8,
        omitted_bytes: 0,
        beginning_cut: true,
    };
    let out = call_with_host(Ok(ProcessOutput {
        exit_code: Some(0),
        stdout: cut,
        ..ProcessOutput::default()
    }))
    .await;
    let ToolOutcome::Ok {
        ui_payload: Some(UiPayload::Command {
            truncated, stdout, ..
        }),
        ..
    } = &out
    else {
        panic!("exit 0 is a success: {out:?}")
    };
    assert!(*truncated);
    assert_eq!(stdout, "[… the beginning was cut …]\nthe end\n");
    assert_eq!(text_of(&out), "[… the beginning was cut …]\nthe end");
}
