//! The settings' `env` applied to the commands Riot runs for a session:
//! tools (Bash, background jobs), hooks, and — through the MCP hub's
//! options — stdio MCP servers. [`Config::tool_env`] decides which
//! variables; [`SettingsEnv`] sets them on every process started through
//! the runner it wraps.
//!
//! [`Config::tool_env`]: super::Config::tool_env

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{
    BackgroundOutput, ProcessError, ProcessOutput, ProcessRunner, ProcessSpec,
    process::OutputCallback,
};
use tokio_util::sync::CancellationToken;

/// A process runner that sets the settings' `env` under what each process
/// sets itself: a variable the spec sets or removes keeps the spec's word.
pub struct SettingsEnv {
    inner: Arc<dyn ProcessRunner>,
    vars: Vec<(String, String)>,
}

impl std::fmt::Debug for SettingsEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may be tokens: names only.
        f.debug_struct("SettingsEnv")
            .field("inner", &self.inner)
            .field(
                "vars",
                &self
                    .vars
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl SettingsEnv {
    /// `inner` with `vars` set on every process; `inner` itself when there
    /// is nothing to set.
    pub fn wrap(
        inner: Arc<dyn ProcessRunner>,
        vars: Vec<(String, String)>,
    ) -> Arc<dyn ProcessRunner> {
        if vars.is_empty() {
            inner
        } else {
            Arc::new(Self { inner, vars })
        }
    }

    fn apply(&self, mut spec: ProcessSpec) -> ProcessSpec {
        let mut set: Vec<(String, String)> = self
            .vars
            .iter()
            .filter(|(name, _)| {
                !spec.env_remove.contains(name) && !spec.env_set.iter().any(|(n, _)| n == name)
            })
            .cloned()
            .collect();
        set.append(&mut spec.env_set);
        spec.env_set = set;
        spec
    }
}

#[async_trait]
impl ProcessRunner for SettingsEnv {
    async fn run(
        &self,
        spec: ProcessSpec,
        cancel: CancellationToken,
        on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        self.inner.run(self.apply(spec), cancel, on_output).await
    }

    async fn spawn_background(&self, spec: ProcessSpec) -> Result<String, ProcessError> {
        self.inner.spawn_background(self.apply(spec)).await
    }

    async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError> {
        self.inner.read_background(id).await
    }

    async fn kill_background(&self, id: &str) -> Result<(), ProcessError> {
        self.inner.kill_background(id).await
    }

    /// The settings' `env` goes on a command run elsewhere (the editor's
    /// terminal) too, under the inner runner's own change (the sandbox).
    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec {
        self.inner.prepare(self.apply(spec))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use riot_protocol::CaptureLimit;

    use super::*;

    /// Records the specs it is asked to run.
    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<ProcessSpec>>);

    #[async_trait]
    impl ProcessRunner for Recorder {
        async fn run(
            &self,
            spec: ProcessSpec,
            _cancel: CancellationToken,
            _on_output: Option<OutputCallback>,
        ) -> Result<ProcessOutput, ProcessError> {
            self.0.lock().unwrap().push(spec);
            Ok(ProcessOutput::default())
        }
        async fn spawn_background(&self, spec: ProcessSpec) -> Result<String, ProcessError> {
            self.0.lock().unwrap().push(spec);
            Ok("job".into())
        }
        async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError> {
            Err(ProcessError::UnknownJob(id.into()))
        }
        async fn kill_background(&self, id: &str) -> Result<(), ProcessError> {
            Err(ProcessError::UnknownJob(id.into()))
        }
        fn prepare(&self, mut spec: ProcessSpec) -> ProcessSpec {
            spec.program = format!("wrapped-{}", spec.program);
            spec
        }
    }

    fn spec(set: &[(&str, &str)], remove: &[&str]) -> ProcessSpec {
        ProcessSpec {
            program: "bash".into(),
            args: vec![],
            cwd: "/p".into(),
            env_set: set
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            env_remove: remove.iter().map(|k| (*k).to_owned()).collect(),
            timeout_ms: None,
            capture: CaptureLimit::default(),
            stdin: None,
            undoable_only: false,
        }
    }

    #[tokio::test]
    async fn settings_vars_go_under_what_each_process_sets_or_removes() {
        let recorder = Arc::new(Recorder::default());
        let runner = SettingsEnv::wrap(
            recorder.clone(),
            vec![
                ("NODE_ENV".into(), "test".into()),
                ("PAGER".into(), "less".into()),
                ("SECRET_KEY".into(), "x".into()),
            ],
        );
        runner
            .run(
                spec(&[("PAGER", "cat")], &["SECRET_KEY"]),
                CancellationToken::new(),
                None,
            )
            .await
            .unwrap();
        runner.spawn_background(spec(&[], &[])).await.unwrap();
        let specs = recorder.0.lock().unwrap();
        let set = |i: usize| -> Vec<(String, String)> { specs[i].env_set.clone() };
        assert_eq!(
            set(0),
            vec![
                ("NODE_ENV".to_owned(), "test".to_owned()),
                ("PAGER".to_owned(), "cat".to_owned())
            ]
        );
        assert_eq!(specs[0].env_remove, vec!["SECRET_KEY".to_owned()]);
        assert_eq!(set(1).len(), 3);
    }

    #[test]
    fn a_command_run_elsewhere_gets_the_settings_env_and_then_the_inner_runners_change() {
        // What the editor's terminal is handed (ProcessRunner::prepare).
        let runner = SettingsEnv::wrap(
            Arc::new(Recorder::default()),
            vec![
                ("NODE_ENV".into(), "test".into()),
                ("PAGER".into(), "less".into()),
            ],
        );
        let prepared = runner.prepare(spec(&[("PAGER", "cat")], &[]));
        assert_eq!(prepared.program, "wrapped-bash");
        assert_eq!(
            prepared.env_set,
            vec![
                ("NODE_ENV".to_owned(), "test".to_owned()),
                ("PAGER".to_owned(), "cat".to_owned())
            ]
        );
    }

    #[test]
    fn nothing_to_set_is_the_runner_itself_and_values_are_never_shown() {
        let recorder: Arc<dyn ProcessRunner> = Arc::new(Recorder::default());
        let same = SettingsEnv::wrap(recorder.clone(), Vec::new());
        assert!(Arc::ptr_eq(&same, &recorder));
        let wrapped = SettingsEnv::wrap(recorder, vec![("TOKEN".into(), "s3cret".into())]);
        let shown = format!("{wrapped:?}");
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
    }
}
