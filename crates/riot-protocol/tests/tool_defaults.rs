//! The `Tool` trait's defaults are the fail-closed choices of
//! docs/design.md §6.1, and the erased `DynTool` path preserves them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::fs::{DirEntry, FileMeta, FileSystem};
use riot_protocol::process::{BackgroundOutput, OutputCallback, ProcessOutput, ProcessSpec};
use riot_protocol::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The smallest possible tool: only the required methods.
struct Echo;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoInput {
    text: String,
}

#[async_trait]
impl Tool for Echo {
    type Input = EchoInput;

    fn name(&self) -> &str {
        "Echo"
    }

    fn input_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(EchoInput)).unwrap()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Echoes text.".into()
    }

    fn describe(&self, input: &EchoInput) -> String {
        format!("Echo {}", input.text)
    }

    async fn call(&self, input: EchoInput, _ctx: &ToolContext) -> ToolOutcome {
        ToolOutcome::text(input.text, None)
    }
}

#[derive(Debug)]
struct NoFs;

#[async_trait]
impl FileSystem for NoFs {
    async fn read(&self, _: &Path) -> io::Result<Vec<u8>> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn metadata(&self, _: &Path) -> io::Result<FileMeta> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn symlink_metadata(&self, _: &Path) -> io::Result<FileMeta> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn write_atomic(&self, _: &Path, _: &[u8]) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn create_dir_all(&self, _: &Path) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn remove_file(&self, _: &Path) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn canonicalize(&self, _: &Path) -> io::Result<PathBuf> {
        Err(io::ErrorKind::Unsupported.into())
    }
    async fn read_dir(&self, _: &Path) -> io::Result<Vec<DirEntry>> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

#[derive(Debug)]
struct NoProc;

#[async_trait]
impl ProcessRunner for NoProc {
    async fn run(
        &self,
        _: ProcessSpec,
        _: CancellationToken,
        _: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        Err(ProcessError::Unavailable)
    }
    async fn spawn_background(&self, _: ProcessSpec) -> Result<String, ProcessError> {
        Err(ProcessError::Unavailable)
    }
    async fn read_background(&self, _: &str) -> Result<BackgroundOutput, ProcessError> {
        Err(ProcessError::Unavailable)
    }
    async fn kill_background(&self, _: &str) -> Result<(), ProcessError> {
        Err(ProcessError::Unavailable)
    }
    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec {
        spec
    }
}

fn ctx() -> ToolContext {
    let env = ToolEnv::new(
        PathBuf::from("/project"),
        PathBuf::from("/project/.riot/spill"),
        Arc::new(NoFs),
        Arc::new(NoProc),
        Arc::new(FixedClock::new()),
        Arc::new(SequentialIds::new()),
    );
    ToolContext {
        env: Arc::new(env),
        tool_use_id: ToolUseId::new("toolu_1"),
        mode: PermissionMode::Default,
        allowed_by: riot_protocol::AllowedBy::Riot,
        cancel: CancellationToken::new(),
        progress: None,
    }
}

#[tokio::test]
async fn a_minimal_tool_gets_the_fail_closed_defaults() {
    let input = EchoInput { text: "hi".into() };
    let ctx = ctx();
    assert!(!Echo.is_read_only(&input), "read-only must be opt-in");
    assert!(
        !Echo.is_concurrency_safe(&input),
        "parallelism must be opt-in"
    );
    assert!(!Tool::cascades_on_failure(&Echo));
    assert_eq!(Tool::result_budget(&Echo), ResultBudget::Limit(50_000));
    assert_eq!(Echo.classifier_input(&input), None);
    assert_eq!(Tool::interrupt_behavior(&Echo), InterruptBehavior::Cancel);
    assert_eq!(
        Echo.permission_target(&input, &ctx),
        PermissionTarget::Opaque
    );
    assert_eq!(
        Echo.check_permissions(&input, &ctx).await,
        PermissionResult::Passthrough
    );
    assert_eq!(Echo.validate_input(&input, &ctx).await, Ok(()));
}

#[tokio::test]
async fn the_erased_tool_parses_once_and_keeps_the_defaults() {
    let tool: Arc<dyn DynTool> = Arc::new(Echo);
    assert_eq!(tool.name(), "Echo");
    assert_eq!(tool.result_budget(), ResultBudget::Limit(50_000));
    assert!(!tool.cascades_on_failure());

    let call = Arc::clone(&tool).prepare(json!({"text": "hi"})).unwrap();
    assert_eq!(call.describe(), "Echo hi");
    assert!(!call.is_read_only());
    assert!(!call.is_concurrency_safe());
    let ctx = ctx();
    assert_eq!(
        call.check_permissions(&ctx).await,
        PermissionResult::Passthrough
    );
    assert_eq!(call.call(&ctx).await, ToolOutcome::text("hi", None));
}

#[test]
fn structural_errors_come_back_as_serde_errors() {
    let tool: Arc<dyn DynTool> = Arc::new(Echo);
    let unknown = Arc::clone(&tool)
        .prepare(json!({"text": "hi", "txet": 1}))
        .err()
        .unwrap();
    assert!(
        unknown.to_string().contains("unknown field `txet`"),
        "{unknown}"
    );
    let missing = Arc::clone(&tool).prepare(json!({})).err().unwrap();
    assert!(
        missing.to_string().contains("missing field `text`"),
        "{missing}"
    );
}

#[test]
fn paths_resolve_in_the_project_and_a_leading_tilde_in_the_home() {
    let without_home = ctx();
    assert_eq!(
        without_home.resolve("src/a.rs"),
        PathBuf::from("/project/src/a.rs")
    );
    assert_eq!(
        without_home.resolve("/etc/hosts"),
        PathBuf::from("/etc/hosts")
    );
    // No home known: `~` stays a name in the project, as before.
    assert_eq!(without_home.resolve("~/x"), PathBuf::from("/project/~/x"));

    let mut env = ToolEnv::new(
        PathBuf::from("/project"),
        PathBuf::from("/project/.riot/spill"),
        Arc::new(NoFs),
        Arc::new(NoProc),
        Arc::new(FixedClock::new()),
        Arc::new(SequentialIds::new()),
    );
    env.home = Some(PathBuf::from("/home/me"));
    let with_home = ToolContext {
        env: Arc::new(env),
        ..ctx()
    };
    assert_eq!(
        with_home.resolve("~/.ssh/id_rsa"),
        PathBuf::from("/home/me/.ssh/id_rsa")
    );
    assert_eq!(with_home.resolve("~"), PathBuf::from("/home/me"));
    assert_eq!(with_home.resolve("~/"), PathBuf::from("/home/me/"));
    // Only a leading `~/`: other tildes are ordinary names.
    assert_eq!(with_home.resolve("a/~/b"), PathBuf::from("/project/a/~/b"));
    assert_eq!(
        with_home.resolve("~other/x"),
        PathBuf::from("/project/~other/x")
    );
    assert_eq!(
        with_home.resolve("src/a.rs"),
        PathBuf::from("/project/src/a.rs")
    );
}
