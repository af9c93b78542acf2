#![allow(clippy::disallowed_methods)] // tests make projects on disk and read the repository

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_protocol::process::OutputCallback;
use riot_protocol::{
    BackgroundOutput, CheckFormat, Diagnostic, DiagnosticCheck, FixedClock, ProcessError,
    ProcessOutput, ProcessRunner, ProcessSpec, SequentialIds, Severity, ToolEnv, ToolOutcome,
    UiPayload,
};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::testing::{TempProject, context, text_of};
use crate::tools::diagnostics_parse::parse;

/// The real runner with variables added to every command, recording what
/// it ran.
#[derive(Debug)]
struct EnvRunner {
    inner: riot_runtime::RealProcessRunner,
    env: Vec<(String, String)>,
    ran: Mutex<Vec<ProcessSpec>>,
}

#[async_trait]
impl ProcessRunner for EnvRunner {
    async fn run(
        &self,
        mut spec: ProcessSpec,
        cancel: CancellationToken,
        on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        spec.env_set.extend(self.env.iter().cloned());
        self.ran.lock().unwrap().push(spec.clone());
        self.inner.run(spec, cancel, on_output).await
    }
    async fn spawn_background(&self, _spec: ProcessSpec) -> Result<String, ProcessError> {
        Err(ProcessError::Unavailable)
    }
    async fn read_background(&self, _id: &str) -> Result<BackgroundOutput, ProcessError> {
        Err(ProcessError::Unavailable)
    }
    async fn kill_background(&self, _id: &str) -> Result<(), ProcessError> {
        Err(ProcessError::Unavailable)
    }
    fn prepare(&self, mut spec: ProcessSpec) -> ProcessSpec {
        spec.env_set.extend(self.env.iter().cloned());
        self.inner.prepare(spec)
    }
}

/// A tool environment over `p`'s directory whose commands also get `env`,
/// running `checks` (empty: detect).
fn env_over(
    p: &TempProject,
    env: Vec<(String, String)>,
    checks: Vec<DiagnosticCheck>,
) -> (Arc<ToolEnv>, Arc<EnvRunner>) {
    let runner = Arc::new(EnvRunner {
        inner: riot_runtime::RealProcessRunner::new(),
        env,
        ran: Mutex::new(Vec::new()),
    });
    let mut tool_env = ToolEnv::new(
        p.root().to_path_buf(),
        p.path(".riot-spill"),
        Arc::new(riot_runtime::RealFs),
        runner.clone(),
        Arc::new(FixedClock::new()),
        Arc::new(SequentialIds::default()),
    );
    tool_env.diagnostic_checks = checks;
    (Arc::new(tool_env), runner)
}

fn payload(out: &ToolOutcome) -> (Vec<String>, Vec<Diagnostic>, u64) {
    match out {
        ToolOutcome::Ok {
            ui_payload:
                Some(UiPayload::Diagnostics {
                    checkers,
                    diagnostics,
                    total,
                    ..
                }),
            ..
        } => (checkers.clone(), diagnostics.clone(), *total),
        other => panic!("no diagnostics payload: {other:?}"),
    }
}

fn all() -> DiagnosticsInput {
    DiagnosticsInput { paths: None }
}

fn facts(files: &[&str]) -> ProjectFacts {
    ProjectFacts {
        root: PathBuf::from("/p"),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        ..ProjectFacts::default()
    }
}

fn on_path(mut f: ProjectFacts, programs: &[&str]) -> ProjectFacts {
    f.on_path = programs.iter().map(|p| (*p).to_owned()).collect();
    f
}

/// The repository's pyright (installed by .ci/run from tests/lsp).
fn pyright_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp/node_modules/.bin/pyright")
        .canonicalize()
        .unwrap_or_else(|_| {
            panic!("pyright is not installed: run `npm ci --prefix tests/lsp` (as .ci/run does)")
        });
    assert!(bin.exists());
    bin
}

// ---- detection (a pure function of the project's facts) ----

#[test]
fn detects_each_checker_from_its_file_when_its_program_exists() {
    let all_files = on_path(
        facts(&[
            "Cargo.toml",
            "tsconfig.json",
            "pyrightconfig.json",
            "ruff.toml",
            "eslint.config.js",
            "go.mod",
        ]),
        &["cargo", "tsc", "pyright", "ruff", "eslint", "go"],
    );
    let commands: Vec<(String, &str)> = detect(&all_files)
        .iter()
        .map(|c| (c.display(), c.format.name()))
        .collect();
    assert_eq!(
        commands,
        [
            (
                "cargo check --message-format=json --quiet".to_owned(),
                "cargo"
            ),
            ("tsc --noEmit --pretty false".to_owned(), "tsc"),
            ("pyright --outputjson".to_owned(), "pyright"),
            (
                "ruff check --output-format=json --no-fix .".to_owned(),
                "ruff"
            ),
            ("eslint --format json .".to_owned(), "eslint"),
            ("go vet ./...".to_owned(), "go_vet"),
        ]
    );
}

#[test]
fn a_checker_whose_program_is_missing_is_left_out() {
    let f = on_path(facts(&["Cargo.toml", "go.mod"]), &["go"]);
    let names: Vec<&str> = detect(&f).iter().map(|c| c.format.name()).collect();
    assert_eq!(names, ["go_vet"]);
}

#[test]
fn python_and_eslint_checkers_need_the_project_to_configure_them() {
    let f = on_path(
        facts(&["main.py", "package.json"]),
        &["pyright", "ruff", "eslint"],
    );
    assert!(
        detect(&f).is_empty(),
        "installed but not configured: nothing runs"
    );

    let mut f = on_path(
        facts(&["pyproject.toml", "package.json"]),
        &["pyright", "ruff", "eslint"],
    );
    f.pyproject = Some("[project]\nname = \"x\"\n\n[tool.ruff.lint]\nselect = [\"F\"]\n".into());
    f.package_json = Some(r#"{"name": "x", "eslintConfig": {"root": true}}"#.into());
    let names: Vec<&str> = detect(&f).iter().map(|c| c.format.name()).collect();
    assert_eq!(
        names,
        ["ruff", "eslint"],
        "[tool.ruff.*] and eslintConfig configure them"
    );
}

#[test]
fn a_program_in_node_modules_wins_over_path() {
    let mut f = on_path(facts(&["tsconfig.json"]), &["tsc"]);
    f.local_bins.insert("tsc".into());
    assert_eq!(
        detect(&f)[0].argv,
        ["/p/node_modules/.bin/tsc", "--noEmit", "--pretty", "false"]
    );
}

// ---- parsers ----

#[test]
fn cargo_messages_give_the_primary_span_level_and_code_once() {
    let line = r#"{"reason":"compiler-message","package_id":"x","message":{"message":"mismatched types","code":{"code":"E0308","explanation":"..."},"level":"error","spans":[{"file_name":"src/other.rs","line_start":9,"column_start":1,"is_primary":false},{"file_name":"src/main.rs","line_start":2,"column_start":18,"is_primary":true}]}}"#;
    let summary = r#"{"reason":"compiler-message","message":{"message":"aborting due to 1 previous error","code":null,"level":"error","spans":[]}}"#;
    let finished = r#"{"reason":"build-finished","success":false}"#;
    let stdout = format!("{line}\n{line}\n{summary}\n{finished}\n");
    let found = parse(&CheckFormat::Cargo, "cargo", &stdout, "").unwrap();
    assert_eq!(
        found,
        [Diagnostic {
            path: "src/main.rs".into(),
            line: 2,
            column: 18,
            severity: Severity::Error,
            code: Some("E0308".into()),
            message: "mismatched types".into(),
            source: "cargo".into(),
        }]
    );
}

#[test]
fn tsc_ruff_eslint_and_go_vet_outputs_are_read() {
    let tsc = parse(
        &CheckFormat::Tsc,
        "tsc",
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\nFound 1 error.\n",
        "",
    )
    .unwrap();
    assert_eq!(
        tsc[0].one_line(),
        "src/a.ts:3:7: error[TS2322]: Type 'string' is not assignable to type 'number'."
    );
    assert_eq!(tsc.len(), 1);

    let ruff = parse(
        &CheckFormat::Ruff,
        "ruff",
        r#"[{"code":"F821","message":"Undefined name `x`","filename":"/p/a.py","location":{"row":4,"column":2}}]"#,
        "",
    )
    .unwrap();
    assert_eq!(
        ruff[0].one_line(),
        "/p/a.py:4:2: warning[F821]: Undefined name `x`"
    );

    let eslint = parse(
        &CheckFormat::Eslint,
        "eslint",
        r#"[{"filePath":"/p/a.js","messages":[{"ruleId":"no-undef","severity":2,"message":"'x' is not defined.","line":1,"column":5},{"ruleId":"semi","severity":1,"message":"Missing semicolon.","line":2,"column":9}]}]"#,
        "",
    )
    .unwrap();
    let lines: Vec<String> = eslint.iter().map(Diagnostic::one_line).collect();
    assert_eq!(
        lines,
        [
            "/p/a.js:1:5: error[no-undef]: 'x' is not defined.",
            "/p/a.js:2:9: warning[semi]: Missing semicolon."
        ]
    );

    let vet = parse(
        &CheckFormat::GoVet,
        "go",
        "",
        "# example.com/x\n./main.go:7:2: fmt.Printf format %d has arg s of wrong type string\n",
    )
    .unwrap();
    assert_eq!(vet.len(), 1);
    assert_eq!(
        vet[0].one_line(),
        "./main.go:7:2: error: fmt.Printf format %d has arg s of wrong type string"
    );
}

#[test]
fn a_configured_pattern_must_name_file_and_message_and_nothing_unknown() {
    let bad = parse(&CheckFormat::Regex("^(?P<path>.*)$".into()), "x", "", "")
        .unwrap_err()
        .to_string();
    assert!(bad.starts_with("has no named group `file`"), "{bad}");
    let bad = parse(
        &CheckFormat::Regex("^(?P<file>[^:]+):(?P<message>.*)(?P<extra>x)$".into()),
        "x",
        "",
        "",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        bad,
        "has a group `extra` that means nothing here: use only file, line, col, severity, code, message"
    );
}

// ---- real checkers on projects made here ----

#[tokio::test]
async fn cargo_check_reports_e0308_at_the_line_of_the_type_error() {
    let p = TempProject::new();
    p.write(
        "Cargo.toml",
        "[package]\nname = \"broken\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    p.write(
        "src/main.rs",
        "fn main() {\n    let n: i32 = \"seven\";\n    println!(\"{n}\");\n}\n",
    );
    let target = p.path("target");
    let (env, runner) = env_over(
        &p,
        vec![
            ("CARGO_TARGET_DIR".into(), target.display().to_string()),
            ("CARGO_NET_OFFLINE".into(), "true".into()),
        ],
        Vec::new(),
    );
    let out = Diagnostics.call(all(), &context(env)).await;
    let (checkers, diagnostics, total) = payload(&out);
    assert_eq!(checkers, ["cargo check --message-format=json --quiet"]);
    assert_eq!(total, 1, "{}", text_of(&out));
    let d = &diagnostics[0];
    assert_eq!(
        (
            d.path.as_str(),
            d.line,
            d.severity,
            d.code.as_deref(),
            d.message.as_str(),
            d.source.as_str()
        ),
        (
            "src/main.rs",
            2,
            Severity::Error,
            Some("E0308"),
            "mismatched types",
            "cargo"
        )
    );
    assert_eq!(d.column, 18, "the string literal");
    let text = text_of(&out);
    assert!(
        text.starts_with("1 error, 0 warnings from `cargo check --message-format=json --quiet`:\nsrc/main.rs:2:18: error[E0308]: mismatched types"),
        "{text}"
    );
    let ran = runner.ran.lock().unwrap();
    let cargo = ran
        .iter()
        .find(|s| s.program == "cargo")
        .expect("cargo ran");
    assert_eq!(cargo.cwd, p.root());
    assert_eq!(
        cargo.timeout_ms,
        Some(CHECK_TIMEOUT_MS),
        "Bash's longest timeout"
    );
    assert!(
        target.join("debug").exists(),
        "its build dir was the one given"
    );
}

#[tokio::test]
async fn pyright_reports_an_undefined_name() {
    let p = TempProject::new();
    p.write("pyrightconfig.json", "{}\n");
    p.write(
        "main.py",
        "import os\n\nprint(os.getcwd(), undefined_name)\n",
    );
    p.write("other.py", "print(also_missing)\n");
    std::fs::create_dir_all(p.path("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink(pyright_bin(), p.path("node_modules/.bin/pyright")).unwrap();
    let (env, _) = env_over(&p, Vec::new(), Vec::new());
    let out = Diagnostics
        .call(
            DiagnosticsInput {
                paths: Some(vec!["main.py".into()]),
            },
            &context(env),
        )
        .await;
    let (checkers, diagnostics, total) = payload(&out);
    assert_eq!(
        checkers,
        [format!(
            "{} --outputjson",
            p.path("node_modules/.bin/pyright").display()
        )]
    );
    assert_eq!(
        total,
        1,
        "other.py's error is outside `paths`: {}",
        text_of(&out)
    );
    let d = &diagnostics[0];
    assert_eq!(
        (
            d.path.as_str(),
            d.line,
            d.column,
            d.severity,
            d.code.as_deref()
        ),
        (
            "main.py",
            3,
            20,
            Severity::Error,
            Some("reportUndefinedVariable")
        )
    );
    assert_eq!(d.message, "\"undefined_name\" is not defined");
    assert!(text_of(&out).starts_with("1 error, 0 warnings in main.py from `"));
}

#[tokio::test]
async fn a_configured_regex_checker_replaces_detection() {
    let p = TempProject::new();
    p.write("Cargo.toml", "not even toml");
    let checks = DiagnosticCheck::parse_setting(&serde_json::json!({"checks": [{
        "command": "printf 'lint: src/a.c:3:5: warning W12: shadowed x\\nlint: src/b.c:10: error: no semicolon\\nall done\\n'",
        "format": {"regex": "^lint: (?P<file>[^:]+):(?P<line>\\d+):(?:(?P<col>\\d+):)? (?P<severity>\\w+)(?: (?P<code>W\\d+))?: (?P<message>.*)$"}
    }]}))
    .unwrap();
    let (env, runner) = env_over(&p, Vec::new(), checks);
    let out = Diagnostics.call(all(), &context(env)).await;
    let (checkers, diagnostics, _) = payload(&out);
    assert_eq!(checkers.len(), 1);
    let lines: Vec<String> = diagnostics.iter().map(Diagnostic::one_line).collect();
    assert_eq!(
        lines,
        [
            "src/b.c:10: error: no semicolon",
            "src/a.c:3:5: warning[W12]: shadowed x"
        ],
        "errors first"
    );
    assert_eq!(diagnostics[0].source, "regex");
    assert!(
        runner.ran.lock().unwrap().iter().all(|s| s.program == "sh"),
        "no detection, no cargo"
    );
}

#[tokio::test]
async fn a_checker_that_fails_without_findings_says_so() {
    let p = TempProject::new();
    let checks = vec![DiagnosticCheck {
        argv: vec![
            "sh".into(),
            "-c".into(),
            "echo 'config file missing' >&2; exit 3".into(),
        ],
        format: CheckFormat::Tsc,
    }];
    let (env, _) = env_over(&p, Vec::new(), checks);
    let out = Diagnostics.call(all(), &context(env)).await;
    assert_eq!(
        text_of(&out),
        "No diagnostics from `echo 'config file missing' >&2; exit 3`.\n\nNote: `echo 'config file missing' >&2; exit 3` exited with code 3 and reported no diagnostics it could read; its last output:\nconfig file missing"
    );
}

#[tokio::test]
async fn a_project_without_checkers_is_told_how_to_configure_one() {
    let p = TempProject::new();
    p.write("README.md", "hi");
    let (env, _) = env_over(&p, Vec::new(), Vec::new());
    let out = Diagnostics.call(all(), &context(env)).await;
    assert!(text_of(&out).starts_with("No checker found for this project"));
    assert!(text_of(&out).contains("`diagnostics.checks`"));
    assert_eq!(payload(&out).0, Vec::<String>::new());
}

#[tokio::test]
async fn a_bad_configured_pattern_is_refused_before_running() {
    let p = TempProject::new();
    let checks = vec![DiagnosticCheck {
        argv: vec!["true".into()],
        format: CheckFormat::Regex("(?P<file>".into()),
    }];
    let (env, runner) = env_over(&p, Vec::new(), checks);
    let err = Diagnostics
        .validate_input(&all(), &context(env))
        .await
        .unwrap_err();
    assert!(
        err.message.starts_with("The `diagnostics.checks` setting's pattern for `true` is not a valid regular expression"),
        "{}",
        err.message
    );
    assert!(runner.ran.lock().unwrap().is_empty());
}

#[tokio::test]
async fn calls_are_allowed_by_the_tool_in_the_sandbox_but_not_read_only() {
    let p = TempProject::new();
    let input = all();
    assert!(
        !Diagnostics.is_read_only(&input),
        "plan mode keeps it from running"
    );
    // Without an OS sandbox, the project's own checkers (its build
    // scripts) are the person's to allow.
    let verdict = Diagnostics.check_permissions(&input, &p.ctx()).await;
    let PermissionResult::Ask { reason, message } = &verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(
        reason.detail(),
        "the project's own checkers would run outside any OS sandbox"
    );
    assert!(
        message.contains("runs the project's build scripts"),
        "{message}"
    );
    // In the sandbox they run unasked.
    let mut env = riot_protocol::ToolEnv::new(
        p.env.cwd.clone(),
        p.env.spill_dir.clone(),
        Arc::clone(&p.env.fs),
        Arc::clone(&p.env.proc),
        Arc::clone(&p.env.clock),
        Arc::clone(&p.env.ids),
    );
    env.unsandboxed_proc = Some(Arc::clone(&p.env.proc));
    let ctx = context(Arc::new(env));
    let verdict = Diagnostics.check_permissions(&input, &ctx).await;
    assert!(
        matches!(verdict, PermissionResult::Allow { .. }),
        "{verdict:?}"
    );
}
