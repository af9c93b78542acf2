//! What each checker's output means: one parser per [`CheckFormat`], each
//! a pure function from the captured output to [`Diagnostic`]s with the
//! paths as the checker wrote them (the tool makes them project-relative).

use regex::Regex;
use riot_protocol::{CheckFormat, Diagnostic, Severity};
use serde_json::Value;

/// The named groups a `{"regex": …}` format may use; `file` and `message`
/// are required.
pub const REGEX_GROUPS: &[&str] = &["file", "line", "col", "severity", "code", "message"];

/// What is wrong with a `{"regex": …}` format's pattern. The message
/// follows the pattern's name ("the pattern for `x` has no named group …").
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// Not a regular expression.
    #[error("is not a valid regular expression: {0}")]
    Invalid(#[from] regex::Error),
    /// A required group (`file`, `message`) is missing.
    #[error(
        "has no named group `{0}`: name the parts with (?P<file>…), (?P<line>…), (?P<col>…), (?P<severity>…), (?P<code>…), (?P<message>…)"
    )]
    MissingGroup(&'static str),
    /// A group other than `file`, `line`, `col`, `severity`, `code` and `message`.
    #[error("has a group `{0}` that means nothing here: use only {groups}", groups = REGEX_GROUPS.join(", "))]
    UnknownGroup(String),
}

/// Compiles a configured pattern, or says what is wrong with it.
pub fn compile_regex(pattern: &str) -> Result<Regex, PatternError> {
    let re = Regex::new(pattern)?;
    let names: Vec<&str> = re.capture_names().flatten().collect();
    for required in ["file", "message"] {
        if !names.contains(&required) {
            return Err(PatternError::MissingGroup(required));
        }
    }
    if let Some(other) = names.iter().find(|n| !REGEX_GROUPS.contains(n)) {
        return Err(PatternError::UnknownGroup((*other).to_owned()));
    }
    Ok(re)
}

/// What `format` finds in a checker's stdout and stderr. `source` names the
/// checker in each diagnostic.
pub fn parse(
    format: &CheckFormat,
    source: &str,
    stdout: &str,
    stderr: &str,
) -> Result<Vec<Diagnostic>, PatternError> {
    let found = match format {
        CheckFormat::Cargo => cargo(stdout),
        CheckFormat::Tsc => lines_with(&tsc_regex(), source, &[stdout, stderr]),
        CheckFormat::Pyright => pyright(stdout),
        CheckFormat::Ruff => ruff(stdout),
        CheckFormat::Eslint => eslint(stdout),
        CheckFormat::GoVet => lines_with(&go_vet_regex(), source, &[stderr, stdout]),
        CheckFormat::Regex(pattern) => {
            lines_with(&compile_regex(pattern)?, source, &[stdout, stderr])
        }
    };
    let mut out: Vec<Diagnostic> = Vec::new();
    for mut d in found {
        if d.source.is_empty() {
            source.clone_into(&mut d.source);
        }
        // cargo reports a file once per target that includes it.
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

fn severity_of(word: &str) -> Severity {
    let w = word.trim().to_ascii_lowercase();
    if w.starts_with("warn") {
        Severity::Warning
    } else if w.starts_with("info") || w == "note" || w == "information" {
        Severity::Info
    } else if w == "hint" || w == "help" {
        Severity::Hint
    } else {
        Severity::Error
    }
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

fn string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_owned)
}

/// `cargo check --message-format=json`: one JSON object per line; the
/// `compiler-message` ones carry rustc's diagnostic with its primary span.
fn cargo(stdout: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-message" {
            continue;
        }
        let m = &v["message"];
        let message = string(m.get("message")).unwrap_or_default();
        let level = m["level"].as_str().unwrap_or("error");
        // The closing summaries repeat what was already reported.
        let spans = m["spans"].as_array().cloned().unwrap_or_default();
        if spans.is_empty()
            && (message.starts_with("aborting due to")
                || message.contains("warning emitted")
                || message.contains("warnings emitted")
                || message.starts_with("For more information"))
        {
            continue;
        }
        let primary = spans.iter().find(|s| s["is_primary"] == true);
        out.push(Diagnostic {
            path: primary
                .and_then(|s| string(s.get("file_name")))
                .unwrap_or_default(),
            line: primary.map(|s| num(s.get("line_start"))).unwrap_or(0),
            column: primary.map(|s| num(s.get("column_start"))).unwrap_or(0),
            severity: severity_of(level),
            code: string(m["code"].get("code")),
            message,
            source: "cargo".into(),
        });
    }
    out
}

/// `pyright --outputjson`: 0-based positions.
fn pyright(stdout: &str) -> Vec<Diagnostic> {
    let Ok(v) = serde_json::from_str::<Value>(stdout) else {
        return Vec::new();
    };
    let items = v["generalDiagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .map(|d| {
            let start = &d["range"]["start"];
            Diagnostic {
                path: string(d.get("file")).unwrap_or_default(),
                line: num(start.get("line")) + 1,
                column: num(start.get("character")) + 1,
                severity: severity_of(d["severity"].as_str().unwrap_or("error")),
                code: string(d.get("rule")),
                message: string(d.get("message")).unwrap_or_default(),
                source: "pyright".into(),
            }
        })
        .collect()
}

/// `ruff check --output-format=json`: a list; a finding without a code is
/// a syntax error.
fn ruff(stdout: &str) -> Vec<Diagnostic> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(stdout) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|d| {
            let code = string(d.get("code"));
            Diagnostic {
                path: string(d.get("filename")).unwrap_or_default(),
                line: num(d["location"].get("row")),
                column: num(d["location"].get("column")),
                severity: if code.is_none() {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code,
                message: string(d.get("message")).unwrap_or_default(),
                source: "ruff".into(),
            }
        })
        .collect()
}

/// `eslint --format json`: files, each with messages (severity 2 is an
/// error, 1 a warning).
fn eslint(stdout: &str) -> Vec<Diagnostic> {
    let Ok(Value::Array(files)) = serde_json::from_str::<Value>(stdout) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for file in &files {
        let path = string(file.get("filePath")).unwrap_or_default();
        for m in file["messages"].as_array().into_iter().flatten() {
            out.push(Diagnostic {
                path: path.clone(),
                line: num(m.get("line")),
                column: num(m.get("column")),
                severity: if num(m.get("severity")) >= 2 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                code: string(m.get("ruleId")),
                message: string(m.get("message")).unwrap_or_default(),
                source: "eslint".into(),
            });
        }
    }
    out
}

fn tsc_regex() -> Regex {
    Regex::new(
        r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$",
    )
    .unwrap_or_else(|e| unreachable!("the tsc pattern is fixed: {e}"))
}

fn go_vet_regex() -> Regex {
    Regex::new(
        r"^(?:vet: )?(?P<file>[^\s:#][^:]*\.go):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<message>.*)$",
    )
    .unwrap_or_else(|e| unreachable!("the go vet pattern is fixed: {e}"))
}

/// Every line of `texts` that `re` matches whole, read through its named
/// groups; a missing severity is an error.
fn lines_with(re: &Regex, source: &str, texts: &[&str]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for text in texts {
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            let Some(caps) = re.captures(line) else {
                continue;
            };
            let group = |name: &str| caps.name(name).map(|m| m.as_str().trim().to_owned());
            let Some(path) = group("file").filter(|f| !f.is_empty()) else {
                continue;
            };
            out.push(Diagnostic {
                path,
                line: group("line").and_then(|l| l.parse().ok()).unwrap_or(0),
                column: group("col").and_then(|c| c.parse().ok()).unwrap_or(0),
                severity: group("severity").map_or(Severity::Error, |s| severity_of(&s)),
                code: group("code").filter(|c| !c.is_empty()),
                message: group("message").unwrap_or_default(),
                source: source.to_owned(),
            });
        }
    }
    out
}
