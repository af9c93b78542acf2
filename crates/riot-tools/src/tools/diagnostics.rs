//! Diagnostics: runs the project's own checkers (`cargo check`, `tsc`,
//! pyright, ruff, eslint, `go vet`, or the `diagnostics.checks` setting)
//! through the injected process runner — the same runner, timeout and
//! cancellation as Bash — and reports what they found as structured
//! [`Diagnostic`]s (docs/diagnostics.md).
//!
//! Which checkers run is [`detect`], a pure function of [`ProjectFacts`]
//! (the project's top-level files and which programs exist); what their
//! output means is `diagnostics_parse`. The model chooses only `paths`,
//! never a command, so the tool allows its own calls (the checkers write
//! nothing but their build directories) except in plan mode, where the
//! chain keeps every call that is not read-only from running.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use riot_protocol::{
    CaptureLimit, CheckFormat, DecisionReason, Diagnostic, DiagnosticCheck, PermissionResult,
    ProcessSpec, ProgressPayload, PromptContext, Severity, Tool, ToolContext, ToolOutcome,
    UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::tools::bash::{MAX_TIMEOUT_MS, NON_INTERACTIVE_ENV};
pub use crate::tools::diagnostics_parse::PatternError;
use crate::tools::diagnostics_parse::{compile_regex, parse};
use crate::tools::schema_of;

/// At most this many diagnostics are listed (errors first); the rest are
/// counted.
pub const MAX_LISTED: usize = 200;

/// Each checker may take as long as the longest Bash command.
pub const CHECK_TIMEOUT_MS: u64 = MAX_TIMEOUT_MS;

/// Checkers print whole JSON documents: keep more than Bash does.
const CAPTURE: CaptureLimit = CaptureLimit {
    head_bytes: 4 * 1024 * 1024,
    tail_bytes: 1024 * 1024,
};

/// Programs whose presence decides a detected checker.
const PROGRAMS: &[&str] = &["cargo", "tsc", "pyright", "ruff", "eslint", "go"];

/// Files at the project's top that configure ESLint.
const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
];

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsInput {
    /// Files or directories to report on (absolute or relative to the
    /// project directory). The checkers still check the whole project;
    /// only what they say about these paths is returned. Omit for
    /// everything.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
}

/// What [`detect`] looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFacts {
    /// The project directory.
    pub root: PathBuf,
    /// Names of the files and directories at its top.
    pub files: BTreeSet<String>,
    /// `pyproject.toml`'s text, if there is one.
    pub pyproject: Option<String>,
    /// `package.json`'s text, if there is one.
    pub package_json: Option<String>,
    /// Programs in the project's `node_modules/.bin`.
    pub local_bins: BTreeSet<String>,
    /// Programs found on `PATH` (of cargo, tsc, pyright, ruff, eslint and
    /// go).
    pub on_path: BTreeSet<String>,
}

impl ProjectFacts {
    /// `name` from `node_modules/.bin`, else from `PATH`, else `None`.
    fn program(&self, name: &str) -> Option<String> {
        if self.local_bins.contains(name) {
            let local = self.root.join("node_modules").join(".bin").join(name);
            return Some(local.display().to_string());
        }
        self.on_path.contains(name).then(|| name.to_owned())
    }

    fn has(&self, file: &str) -> bool {
        self.files.contains(file)
    }

    /// Whether `pyproject.toml` has a `[tool.<name>]` table.
    fn pyproject_tool(&self, name: &str) -> bool {
        self.pyproject.as_deref().is_some_and(|text| {
            text.lines().any(|l| {
                let l = l.trim();
                l == format!("[tool.{name}]") || l.starts_with(&format!("[tool.{name}."))
            })
        })
    }
}

/// Whether a `{"regex": …}` format's pattern can be used (the settings
/// check it when read): `Err` says what is wrong.
pub fn check_pattern(pattern: &str) -> Result<(), PatternError> {
    compile_regex(pattern).map(|_| ())
}

fn check(argv: Vec<String>, format: CheckFormat) -> DiagnosticCheck {
    DiagnosticCheck { argv, format }
}

fn argv(program: String, args: &[&str]) -> Vec<String> {
    std::iter::once(program)
        .chain(args.iter().map(|a| (*a).to_owned()))
        .collect()
}

/// The checkers a project's files ask for, in a fixed order: Cargo.toml →
/// `cargo check`, tsconfig.json → `tsc`, pyright and ruff when the project
/// configures them, ESLint when configured, go.mod → `go vet`. A checker
/// whose program is in neither `node_modules/.bin` nor `PATH` is left out.
pub fn detect(facts: &ProjectFacts) -> Vec<DiagnosticCheck> {
    let mut out = Vec::new();
    if facts.has("Cargo.toml")
        && let Some(cargo) = facts.program("cargo")
    {
        out.push(check(
            argv(cargo, &["check", "--message-format=json", "--quiet"]),
            CheckFormat::Cargo,
        ));
    }
    if facts.has("tsconfig.json")
        && let Some(tsc) = facts.program("tsc")
    {
        out.push(check(
            argv(tsc, &["--noEmit", "--pretty", "false"]),
            CheckFormat::Tsc,
        ));
    }
    if (facts.has("pyrightconfig.json") || facts.pyproject_tool("pyright"))
        && let Some(pyright) = facts.program("pyright")
    {
        out.push(check(
            argv(pyright, &["--outputjson"]),
            CheckFormat::Pyright,
        ));
    }
    if (facts.has("ruff.toml") || facts.has(".ruff.toml") || facts.pyproject_tool("ruff"))
        && let Some(ruff) = facts.program("ruff")
    {
        out.push(check(
            argv(ruff, &["check", "--output-format=json", "--no-fix", "."]),
            CheckFormat::Ruff,
        ));
    }
    let eslint_configured = ESLINT_CONFIGS.iter().any(|f| facts.has(f))
        || facts
            .package_json
            .as_deref()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
            .is_some_and(|v| v.get("eslintConfig").is_some());
    if eslint_configured && let Some(eslint) = facts.program("eslint") {
        out.push(check(
            argv(eslint, &["--format", "json", "."]),
            CheckFormat::Eslint,
        ));
    }
    if facts.has("go.mod")
        && let Some(go) = facts.program("go")
    {
        out.push(check(argv(go, &["vet", "./..."]), CheckFormat::GoVet));
    }
    out
}

/// Runs the project's checkers and reports their diagnostics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Diagnostics;

impl Diagnostics {
    /// The project's facts, read through the capabilities: its top-level
    /// names and two files through the file system, `PATH` through a `sh`
    /// run by the process runner (which sees the environment the checkers
    /// will see).
    async fn facts(ctx: &ToolContext) -> Result<ProjectFacts, ToolOutcome> {
        let env = &ctx.env;
        let root = env.cwd.clone();
        let files: BTreeSet<String> = env
            .fs
            .read_dir(&root)
            .await
            .map(|entries| {
                entries
                    .into_iter()
                    .filter_map(|e| e.path.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let read = |name: &'static str| {
            let path = root.join(name);
            async move {
                let bytes = env.fs.read(&path).await.ok()?;
                String::from_utf8(bytes).ok()
            }
        };
        let pyproject = if files.contains("pyproject.toml") {
            read("pyproject.toml").await
        } else {
            None
        };
        let package_json = if files.contains("package.json") {
            read("package.json").await
        } else {
            None
        };
        let local_bins = env
            .fs
            .read_dir(&root.join("node_modules").join(".bin"))
            .await
            .map(|entries| {
                entries
                    .into_iter()
                    .filter_map(|e| e.path.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let script = format!(
            "for p in {}; do command -v \"$p\" >/dev/null 2>&1 && echo \"$p\"; done; true",
            PROGRAMS.join(" ")
        );
        let out = env
            .proc
            .run(
                spec(ctx, vec!["sh".into(), "-c".into(), script], 30_000),
                ctx.cancel.clone(),
                None,
            )
            .await
            .map_err(|e| {
                ToolOutcome::failed(format!("Diagnostics could not look for the checkers: {e}."))
            })?;
        if out.cancelled {
            return Err(ToolOutcome::Cancelled);
        }
        let on_path = out
            .stdout
            .head
            .lines()
            .map(str::trim)
            .filter(|l| PROGRAMS.contains(l))
            .map(str::to_owned)
            .collect();
        Ok(ProjectFacts {
            root,
            files,
            pyproject,
            package_json,
            local_bins,
            on_path,
        })
    }
}

fn spec(ctx: &ToolContext, argv: Vec<String>, timeout_ms: u64) -> ProcessSpec {
    let mut argv = argv.into_iter();
    ProcessSpec {
        program: argv.next().unwrap_or_default(),
        args: argv.collect(),
        cwd: ctx.env.cwd.clone(),
        env_set: NON_INTERACTIVE_ENV
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        env_remove: ctx.env.scrubbed_env.clone(),
        timeout_ms: Some(timeout_ms),
        capture: CAPTURE,
        stdin: None,
        undoable_only: true,
    }
}

/// A diagnostic's path relative to the project when inside it.
fn tidy_path(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        match p.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.to_owned(),
        }
    } else {
        path.strip_prefix("./").unwrap_or(path).to_owned()
    }
}

/// Whether `d` (its path relative to `root` or absolute) lies at or under
/// one of `wanted` (absolute).
fn wanted(root: &Path, d: &Diagnostic, wanted: &[PathBuf]) -> bool {
    let abs = root.join(&d.path);
    wanted.iter().any(|w| abs.starts_with(w))
}

fn count(list: &[Diagnostic], severity: Severity) -> usize {
    list.iter().filter(|d| d.severity == severity).count()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a checker run that produced nothing readable says about itself.
fn failure_note(command: &str, out: &riot_protocol::ProcessOutput) -> Option<String> {
    if out.timed_out {
        return Some(format!(
            "`{command}` did not finish within {CHECK_TIMEOUT_MS} ms and was stopped."
        ));
    }
    if out.exit_code == Some(0) {
        return None;
    }
    let last: Vec<&str> = [out.stderr.tail.as_str(), out.stderr.head.as_str()]
        .into_iter()
        .find(|t| !t.trim().is_empty())
        .unwrap_or(out.stdout.head.as_str())
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = last[last.len().saturating_sub(5)..].join("\n");
    let status = out.exit_code.map_or_else(
        || "was killed".to_owned(),
        |c| format!("exited with code {c}"),
    );
    Some(format!(
        "`{command}` {status} and reported no diagnostics it could read; its last output:\n{tail}"
    ))
}

#[async_trait]
impl Tool for Diagnostics {
    type Input = DiagnosticsInput;

    fn name(&self) -> &str {
        "Diagnostics"
    }

    fn input_schema(&self) -> serde_json::Value {
        schema_of::<DiagnosticsInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        let bash = if cx.has_tool("Bash") {
            " Prefer it to running `cargo check`, `tsc` and the like through Bash: the result is the list of findings, not pages of build output."
        } else {
            ""
        };
        format!(
            "Runs the project's own checkers and returns their findings as a list of `path:line:col: severity[code]: message`.\n\
             \n\
             - The checkers come from the project: Cargo.toml → `cargo check`, tsconfig.json → `tsc --noEmit`, pyright or ruff when the project configures them, ESLint when configured, go.mod → `go vet`; or from the `diagnostics.checks` setting, which replaces detection.\n\
             - `paths` limits the list to those files or directories; the checkers still check the whole project, so expect it to take as long as a build check.\n\
             - Use it after a series of edits to see what is still broken, and before saying that code compiles.{bash}\n\
             \n\
             NEVER:\n\
             - call it after every single edit of a file a language server watches: edits already report new errors in their result;\n\
             - claim the code is clean when a checker failed to run — the result says so;\n\
             - use it to run tests: it only checks."
        )
    }

    fn describe(&self, input: &DiagnosticsInput) -> String {
        match &input.paths {
            Some(paths) if !paths.is_empty() => format!("Diagnostics for {}", paths.join(", ")),
            _ => "Diagnostics".into(),
        }
    }

    async fn validate_input(
        &self,
        input: &DiagnosticsInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input
            .paths
            .as_ref()
            .is_some_and(|p| p.iter().any(|p| p.trim().is_empty()))
        {
            return Err(ValidationError::rejected(
                "`paths` has an empty entry. Give file or directory paths, or omit `paths` for the whole project.",
            ));
        }
        for c in &ctx.env.diagnostic_checks {
            if let CheckFormat::Regex(pattern) = &c.format
                && let Err(problem) = compile_regex(pattern)
            {
                return Err(ValidationError::rejected(format!(
                    "The `diagnostics.checks` setting's pattern for `{}` {problem}. Tell the person to fix the setting.",
                    c.display()
                )));
            }
        }
        Ok(())
    }

    /// The model picks only `paths`; the commands are the project's
    /// checkers or the person's settings. Rules and plan mode still apply.
    /// A checker found in the project runs the project's own code (`cargo
    /// check` runs its build scripts): without the OS sandbox around it,
    /// that is the person's to allow.
    async fn check_permissions(
        &self,
        _input: &DiagnosticsInput,
        ctx: &ToolContext,
    ) -> PermissionResult {
        let sandboxed = ctx.env.unsandboxed_proc.is_some();
        if !sandboxed && ctx.env.diagnostic_checks.is_empty() {
            return PermissionResult::Ask {
                reason: DecisionReason::Consent {
                    detail: "the project's own checkers would run outside any OS sandbox".into(),
                },
                message: "Riot wants to run the project's checkers (such as `cargo check`, which runs the project's build scripts) to list its diagnostics. No OS sandbox is enforced, so they run with your full access.".into(),
            };
        }
        PermissionResult::Allow {
            reason: DecisionReason::Mode {
                detail: "Diagnostics runs only the project's checkers, which write nothing but their build directories".into(),
                mode: ctx.mode,
            },
            updated_input: None,
        }
    }

    async fn call(&self, input: DiagnosticsInput, ctx: &ToolContext) -> ToolOutcome {
        let checks = if ctx.env.diagnostic_checks.is_empty() {
            match Self::facts(ctx).await {
                Ok(facts) => detect(&facts),
                Err(outcome) => return outcome,
            }
        } else {
            ctx.env.diagnostic_checks.clone()
        };
        if checks.is_empty() {
            return ToolOutcome::text(
                "No checker found for this project: none of Cargo.toml (cargo), tsconfig.json (tsc), a pyright or ruff configuration, an ESLint configuration or go.mod (go) is here with its program installed. The person can name checkers in the `diagnostics.checks` setting (docs/diagnostics.md).",
                Some(UiPayload::Diagnostics {
                    checkers: Vec::new(),
                    diagnostics: Vec::new(),
                    total: 0,
                    truncated: false,
                }),
            );
        }
        let root = ctx.env.cwd.clone();
        let wanted_paths: Option<Vec<PathBuf>> = input
            .paths
            .as_ref()
            .filter(|p| !p.is_empty())
            .map(|p| p.iter().map(|p| ctx.resolve(p)).collect());

        let mut found: Vec<Diagnostic> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let mut checkers = Vec::new();
        for c in &checks {
            let command = c.display();
            ctx.report(ProgressPayload::Status {
                text: format!("running {command}"),
            });
            checkers.push(command.clone());
            let source = Path::new(c.argv.first().map_or("", String::as_str))
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let source = if c.argv.first().is_some_and(|p| p == "sh") {
                c.format.name().to_owned()
            } else {
                source
            };
            let out = match ctx
                .env
                .proc
                .run(
                    spec(ctx, c.argv.clone(), CHECK_TIMEOUT_MS),
                    ctx.cancel.clone(),
                    None,
                )
                .await
            {
                Ok(out) => out,
                Err(e) => {
                    notes.push(format!("`{command}` could not run: {e}."));
                    continue;
                }
            };
            if out.cancelled {
                return ToolOutcome::Cancelled;
            }
            let stdout = format!("{}{}", out.stdout.head, out.stdout.tail);
            let stderr = format!("{}{}", out.stderr.head, out.stderr.tail);
            let parsed = match parse(&c.format, &source, &stdout, &stderr) {
                Ok(parsed) => parsed,
                Err(problem) => {
                    notes.push(format!("the pattern for `{command}` {problem}."));
                    continue;
                }
            };
            if parsed.is_empty()
                && let Some(note) = failure_note(&command, &out)
            {
                notes.push(note);
            }
            found.extend(parsed.into_iter().map(|mut d| {
                d.path = tidy_path(&root, &d.path);
                d
            }));
        }
        if let Some(w) = &wanted_paths {
            found.retain(|d| wanted(&root, d, w));
        }
        found.sort_by(|a, b| {
            (a.severity, &a.path, a.line, a.column).cmp(&(b.severity, &b.path, b.line, b.column))
        });
        let total = found.len();
        let truncated = total > MAX_LISTED;
        found.truncate(MAX_LISTED);

        let scope = match &input.paths {
            Some(p) if !p.is_empty() => format!(" in {}", p.join(", ")),
            _ => String::new(),
        };
        let errors = count(&found, Severity::Error);
        let warnings = count(&found, Severity::Warning);
        let others = found.len() - errors - warnings;
        let mut text = if total == 0 {
            format!("No diagnostics{scope} from {}.", quoted(&checkers))
        } else {
            let mut head = format!(
                "{}, {}",
                plural(errors, "error", "errors"),
                plural(warnings, "warning", "warnings")
            );
            if others > 0 {
                head.push_str(&format!(", {others} other"));
            }
            format!("{head}{scope} from {}:", quoted(&checkers))
        };
        for d in &found {
            text.push('\n');
            text.push_str(&d.one_line());
        }
        if truncated {
            text.push_str(&format!(
                "\n… and {} more not listed. Pass `paths` to narrow the list.",
                total - MAX_LISTED
            ));
        }
        for note in &notes {
            text.push_str("\n\nNote: ");
            text.push_str(note);
        }
        ToolOutcome::text(
            text,
            Some(UiPayload::Diagnostics {
                checkers,
                diagnostics: found,
                total: total as u64,
                truncated,
            }),
        )
    }
}

fn quoted(commands: &[String]) -> String {
    commands
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "diagnostics_tests.rs"]
mod tests;
