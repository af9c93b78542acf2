//! The decision chain of docs/design.md §9.2 and the mode table of §9.1.
//!
//! ```text
//! hook deny                                   → Deny  (hook)
//! 1. deny rules, whole-tool or content        → Deny  (rule)      every mode
//! hook ask                                    → Ask   (hook)
//! 2. whole-tool ask rule                      → Ask   (rule)
//! 3. the tool's own verdict: Deny is final; an Ask that does not yield
//!    to bypass is final; a yielding Ask is parked; an Allow is NOT final
//! 4. content ask rules, safety checks         → Ask   (rule / safety)
//!    (unattended lets safety findings through, not ask rules; a
//!    protecting OS sandbox, those that exist only because part of a
//!    command is known only when it runs)
//! 5. bypass / unattended                      → Allow (mode)
//! 6. allow rules, a hook's allow, the tool's Allow → Allow
//! 7. parked consent → Ask (auto: the classifier answers); else the mode
//!    default for this kind of call (an enforced OS sandbox with
//!    auto-allow: a Bash command → Allow (sandbox) in default,
//!    accept-edits and auto)
//! plan / dont-ask: an Ask becomes a Deny with the same reason
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use riot_protocol::{
    DecisionReason, FileSystem, PathAccess, PermissionMode, PermissionPolicy, PermissionQuery,
    PermissionResult, PermissionRule, PermissionTarget, RuleBehavior,
};

use crate::bash::{CommandAnalysis, Context, analyze_command_in};
use crate::paths;
use crate::rules::{RuleSet, Subject, source_label};

mod inputs;
mod modes;
mod verdicts;

pub use inputs::{
    Classifier, ClassifierRequest, ClassifierUnavailable, ClassifierVerdict, HookDecision,
};
pub use modes::{MAX_DENIALS_IN_A_ROW, MAX_DENIALS_PER_SESSION};
use verdicts::{allow, ask, ask_rule, deny, finish_for_mode, rule_reason};
pub use verdicts::{nobody_can_answer, resolve_answer};

/// The permission policy: rules, the project and home directories, an
/// optional file system for resolving symlinks and an optional classifier.
#[derive(Debug)]
pub struct Policy {
    rules: RwLock<RuleSet>,
    project: PathBuf,
    /// Directories outside the project that count as the project for the
    /// mode's decision about a write (`additionalDirectories`).
    additional_dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
    riot_home: Option<PathBuf>,
    fs: Option<Arc<dyn FileSystem>>,
    classifier: Option<Arc<dyn Classifier>>,
    /// The enforced OS sandbox's description when it may allow commands
    /// unasked (`sandbox.auto_allow`); `None` otherwise.
    sandbox: Option<String>,
    /// Commands run in an enforced OS sandbox that keeps the protected
    /// paths as they were: findings that exist only because part of a
    /// command is known only when it runs are left to it.
    protecting_sandbox: bool,
    /// Classifier denials in a row and in the session (§9.5: three in a
    /// row or twenty in all hand control back to the person).
    denials_in_a_row: AtomicU32,
    denials_total: AtomicU32,
}

/// What the chain knows about the call beyond the query.
enum Facts {
    Bash(CommandAnalysis),
    Path {
        /// The path as the tool gave it, before joining and normalizing.
        given: String,
        literal: PathBuf,
        resolved: PathBuf,
        access: PathAccess,
        inside_project: bool,
    },
    Url(String),
    Opaque,
}

/// Where the chain stopped.
enum Step {
    Final(PermissionResult),
    /// Auto mode: the classifier answers; `describe` says what the call is.
    Classify {
        describe: String,
    },
}

/// Most symlinks followed by hand when resolving one path.
const MAX_LINK_HOPS: usize = 16;

impl Policy {
    /// A policy for a project. `home` expands `~` in rules; without it,
    /// `~/` rules match nothing.
    pub fn new(project: impl Into<PathBuf>, home: Option<PathBuf>) -> Self {
        Self {
            rules: RwLock::new(RuleSet::default()),
            project: paths::normalize(&project.into()),
            additional_dirs: Vec::new(),
            home,
            riot_home: None,
            fs: None,
            classifier: None,
            sandbox: None,
            protecting_sandbox: false,
            denials_in_a_row: AtomicU32::new(0),
            denials_total: AtomicU32::new(0),
        }
    }

    /// Adds configured rules (any sources, any order).
    pub fn with_rules(self, rules: impl IntoIterator<Item = PermissionRule>) -> Self {
        {
            let mut set = self.rules.write().unwrap_or_else(|e| e.into_inner());
            for rule in rules {
                set.push(rule);
            }
        }
        self
    }

    /// Directories outside the project whose files count as the
    /// project's when the mode decides about a write: accept-edits allows
    /// edits there unasked. Safety checks and rules apply as anywhere.
    pub fn with_additional_dirs(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        self.additional_dirs = dirs.into_iter().map(|d| paths::normalize(&d)).collect();
        self
    }

    /// Resolves symlinks through this file system for the resolved-path
    /// checks. Without one, only the literal path is judged.
    pub fn with_file_system(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = Some(fs);
        self
    }

    /// The auto-mode classifier. Without one, auto mode asks.
    pub fn with_classifier(mut self, classifier: Arc<dyn Classifier>) -> Self {
        self.classifier = Some(classifier);
        self
    }

    /// Commands run in an OS sandbox that was verified to be enforced
    /// (`mechanism` names it), and the person lets it allow them
    /// (`sandbox.auto_allow`): a Bash command that is not read-only but
    /// raised no safety finding is allowed in default, accept-edits and
    /// auto mode with the reason `sandbox` (docs/design.md §9.4). Only
    /// call this after the sandbox's probe succeeded.
    pub fn with_enforced_sandbox(mut self, mechanism: impl Into<String>) -> Self {
        self.sandbox = Some(mechanism.into());
        self
    }

    /// Commands run in an OS sandbox that was verified to be enforced and
    /// keeps the protected paths (`.git/hooks`, `.git/config`, `.riot`,
    /// `.claude`, `.mcp.json`, shell startup files, …) as they were: a
    /// safety finding that exists only because a word, a redirect target
    /// or a directory is known only when the command runs
    /// ([`CommandAnalysis::runtime_unknown`]: `for f in *.txt; do cp "$f"
    /// "$f.bak"; done`) no longer asks on its own; the sandbox decides
    /// what such a word may change. Every other safety finding — a
    /// protected path written literally, a credential read, `eval` — still
    /// asks. Independent of [`Self::with_enforced_sandbox`] (which allows
    /// unasked what raises no finding). Only call this for a mechanism that
    /// does keep those paths read-only (bubblewrap; Landlock alone leaves
    /// them writable).
    pub fn with_protecting_sandbox(mut self) -> Self {
        self.protecting_sandbox = true;
        self
    }

    /// Riot's own configuration directory, protected from writes (and its
    /// `credentials.json` from reads).
    pub fn with_riot_home(mut self, riot_home: impl Into<PathBuf>) -> Self {
        self.riot_home = Some(paths::normalize(&riot_home.into()));
        self
    }

    /// A snapshot of the current rules.
    pub fn rules(&self) -> RuleSet {
        self.rules.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The chain with a PreToolUse hook's decision as an input.
    pub async fn decide_with_hook(
        &self,
        query: &PermissionQuery,
        hook: Option<&HookDecision>,
    ) -> PermissionResult {
        // Without an explicit decision, the one the scheduler put in the query.
        let from_query = query.hook.as_ref().map(HookDecision::from_query);
        let hook = hook.or(from_query.as_ref());
        let facts = self.facts(query).await;
        let rules = self.rules();
        let result = match self.chain(query, hook, &facts, &rules) {
            Step::Final(result) => result,
            Step::Classify { describe } => self.classify(query, describe).await,
        };
        finish_for_mode(query.mode, result)
    }

    async fn facts(&self, query: &PermissionQuery) -> Facts {
        match &query.target {
            PermissionTarget::Command { command } => {
                let ctx = Context {
                    home: self.home.clone(),
                    riot_home: self.riot_home.clone(),
                    cwd: Some(self.project.clone()),
                };
                let mut analysis = analyze_command_in(command, &ctx);
                let protect = crate::bash::pending::Protect {
                    home: self.home.as_deref(),
                    riot_home: self.riot_home.as_deref(),
                };
                crate::bash::pending::settle(&mut analysis, self.fs.as_deref(), &protect).await;
                Facts::Bash(analysis)
            }
            PermissionTarget::Path { path, access } => {
                // `~/…` names the home directory, as the file tools read it;
                // other relative paths are in the project.
                let absolute = if path.is_absolute() {
                    path.clone()
                } else if let Some(in_home) =
                    paths::expand_home(&path.to_string_lossy(), self.home.as_deref())
                {
                    in_home
                } else {
                    self.project.join(path)
                };
                let literal = paths::normalize(&absolute);
                let resolved = self.resolve(&literal).await;
                let project = self.resolve(&self.project).await;
                let mut inside_project =
                    literal.starts_with(&self.project) && resolved.starts_with(&project);
                for dir in &self.additional_dirs {
                    if inside_project {
                        break;
                    }
                    inside_project =
                        literal.starts_with(dir) && resolved.starts_with(self.resolve(dir).await);
                }
                Facts::Path {
                    given: path.to_string_lossy().into_owned(),
                    literal,
                    resolved,
                    access: *access,
                    inside_project,
                }
            }
            PermissionTarget::Url { url } => Facts::Url(url.clone()),
            PermissionTarget::Opaque => Facts::Opaque,
        }
    }

    /// The path with symlinks resolved: the longest existing ancestor is
    /// canonicalized and the rest appended (a new file does not exist yet).
    async fn resolve(&self, path: &Path) -> PathBuf {
        let Some(fs) = &self.fs else {
            return path.to_path_buf();
        };
        let mut existing = path.to_path_buf();
        let mut tail = Vec::new();
        let mut hops = 0;
        loop {
            // A link whose target does not exist yet cannot be
            // canonicalized, but a write through it lands at the target:
            // follow it by hand (a bounded number of times).
            if hops < MAX_LINK_HOPS
                && fs.canonicalize(&existing).await.is_err()
                && let Ok(meta) = fs.symlink_metadata(&existing).await
                && meta.kind == riot_protocol::FileKind::Symlink
                && let Ok(target) = fs.read_link(&existing).await
            {
                hops += 1;
                let parent = existing.parent().map(Path::to_path_buf).unwrap_or_default();
                existing = paths::normalize(&parent.join(target));
                continue;
            }
            if let Ok(real) = fs.canonicalize(&existing).await {
                let stripped = paths::strip_verbatim(&real.to_string_lossy()).to_owned();
                let mut out = PathBuf::from(stripped);
                for part in tail.iter().rev() {
                    out.push(part);
                }
                return paths::normalize(&out);
            }
            match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) => {
                    tail.push(name.to_owned());
                    existing = parent.to_path_buf();
                }
                _ => return path.to_path_buf(),
            }
        }
    }

    fn chain(
        &self,
        q: &PermissionQuery,
        hook: Option<&HookDecision>,
        facts: &Facts,
        rules: &RuleSet,
    ) -> Step {
        let tool = q.tool_name.as_str();
        let describe = describe(q, facts);

        if let Some(HookDecision::Deny { hook, reason }) = hook {
            return Step::Final(deny(
                DecisionReason::Hook {
                    detail: reason.clone(),
                    hook: hook.clone(),
                },
                format!("A PreToolUse hook blocked this call: {reason}"),
            ));
        }

        // 1. Deny rules, whole-tool or content, in every mode.
        let deny_rule = match facts {
            Facts::Bash(analysis) => rules
                .whole_tool(RuleBehavior::Deny, tool)
                .map(|r| (r, false))
                .or_else(|| self.bash_content_rule(rules, RuleBehavior::Deny, tool, analysis)),
            _ => rules
                .whole_tool(RuleBehavior::Deny, tool)
                .or_else(|| self.content_rule(rules, RuleBehavior::Deny, tool, facts))
                .map(|r| (r, false)),
        };
        if let Some((rule, via_unknown)) = deny_rule {
            let reason = rule_reason(rule);
            let assumed = if via_unknown {
                " (part of the command is only known when it runs, so Riot assumes the rule matches)"
            } else {
                ""
            };
            let message = format!(
                "Permission to {describe} was denied by the rule `{}` from {}{assumed}. Do not retry it; choose another approach or ask the user.",
                rule.pattern,
                source_label(rule.source)
            );
            return Step::Final(deny(reason, message));
        }

        if let Some(HookDecision::Ask { hook, reason }) = hook {
            return Step::Final(ask(
                DecisionReason::Hook {
                    detail: reason.clone(),
                    hook: hook.clone(),
                },
                format!("A PreToolUse hook asks before {describe}: {reason}"),
            ));
        }

        // 2. Whole-tool ask rule.
        if let Some(rule) = rules.whole_tool(RuleBehavior::Ask, tool) {
            return Step::Final(ask_rule(rule, &describe));
        }

        // 3. The tool's own verdict. Its Allow is not final: the safety
        // checks below still run (a tool cannot wave a call past them).
        let mut parked: Option<(DecisionReason, String)> = None;
        let mut tool_allow: Option<DecisionReason> = None;
        match &q.tool_verdict {
            PermissionResult::Deny { reason, message } => {
                return Step::Final(deny(reason.clone(), message.clone()));
            }
            PermissionResult::Ask { reason, message } => {
                let waived_safety = q.mode == PermissionMode::Unattended
                    && matches!(reason, DecisionReason::Safety { .. });
                if self.names_the_host(rules, tool, facts, reason) {
                    // A fetch from a local address, and an allow rule names
                    // that host (docs/web.md): the rules below decide.
                } else if reason.yields_to_bypass() || waived_safety {
                    parked = Some((reason.clone(), message.clone()));
                } else {
                    return Step::Final(ask(reason.clone(), message.clone()));
                }
            }
            PermissionResult::Allow { reason, .. } => tool_allow = Some(reason.clone()),
            PermissionResult::Passthrough => {}
        }

        // 4. Content ask rules and safety checks: Ask even in bypass.
        if let Some(rule) = self.content_rule(rules, RuleBehavior::Ask, tool, facts) {
            return Step::Final(ask_rule(rule, &describe));
        }
        if q.mode != PermissionMode::Unattended
            && let Some(finding) = self.safety_finding(facts)
        {
            return Step::Final(ask(
                DecisionReason::Safety {
                    detail: finding.clone(),
                },
                format!("Riot wants to {describe}. Safety check: {finding}"),
            ));
        }

        // 5. Bypass and unattended allow what got this far.
        if matches!(q.mode, PermissionMode::Bypass | PermissionMode::Unattended) {
            return Step::Final(allow(DecisionReason::Mode {
                detail: format!(
                    "{} mode allows calls no rule or safety check stopped",
                    q.mode
                ),
                mode: q.mode,
            }));
        }

        // 6. Allow rules, a hook's allow, the tool's own allow. Plan mode is
        // read-only until the plan is approved: no allow makes it write.
        if q.mode == PermissionMode::Plan && !modes::is_read_only(q, facts) {
            return self.mode_default(q, facts, describe);
        }
        let allow_rule = rules
            .whole_tool(RuleBehavior::Allow, tool)
            .or_else(|| self.allow_content_rule(rules, tool, facts));
        if let Some(rule) = allow_rule {
            return Step::Final(allow(rule_reason(rule)));
        }
        if let Some(HookDecision::Allow { hook, reason }) = hook {
            return Step::Final(allow(DecisionReason::Hook {
                detail: reason.clone(),
                hook: hook.clone(),
            }));
        }
        if let Some(reason) = tool_allow {
            return Step::Final(allow(reason));
        }

        // 7. Parked consent, the classifier, the mode default.
        if let Some((reason, message)) = parked {
            if q.mode == PermissionMode::Auto {
                return Step::Classify { describe };
            }
            return Step::Final(ask(reason, message));
        }
        self.mode_default(q, facts, describe)
    }

    /// Whether a URL tool's safety question (a loopback or private
    /// address) is answered by an allow rule naming the URL's host
    /// (`WebFetch(domain:…)`); no other rule, and no mode, answers it.
    fn names_the_host(
        &self,
        rules: &RuleSet,
        tool: &str,
        facts: &Facts,
        reason: &DecisionReason,
    ) -> bool {
        matches!(facts, Facts::Url(_))
            && matches!(reason, DecisionReason::Safety { .. })
            && self
                .content_rule(rules, RuleBehavior::Allow, tool, facts)
                .is_some_and(|rule| {
                    rule.pattern
                        .content
                        .as_deref()
                        .is_some_and(|c| c.trim_start().starts_with("domain:"))
                })
    }

    /// A deny or ask content rule: matched generously (a wildcard may cross
    /// anything), because over-matching a deny only narrows.
    fn content_rule<'r>(
        &self,
        rules: &'r RuleSet,
        behavior: RuleBehavior,
        tool: &str,
        facts: &Facts,
    ) -> Option<&'r PermissionRule> {
        match facts {
            Facts::Bash(analysis) => self
                .bash_content_rule(rules, behavior, tool, analysis)
                .map(|(rule, _)| rule),
            Facts::Path {
                literal, resolved, ..
            } => [literal, resolved].into_iter().find_map(|path| {
                rules.content(
                    behavior,
                    tool,
                    Subject::Path {
                        path,
                        project: &self.project,
                        home: self.home.as_deref(),
                    },
                )
            }),
            Facts::Url(url) => rules.content(behavior, tool, Subject::Url(url)),
            Facts::Opaque => None,
        }
    }

    /// A deny or ask rule matching a shell command, and whether it matched
    /// only because part of the command is unknown until it runs (which
    /// is assumed to match: fail closed).
    fn bash_content_rule<'r>(
        &self,
        rules: &'r RuleSet,
        behavior: RuleBehavior,
        tool: &str,
        analysis: &CommandAnalysis,
    ) -> Option<(&'r PermissionRule, bool)> {
        let mut texts = vec![analysis.source.trim().to_owned()];
        let mut hole_texts = Vec::new();
        for sub in &analysis.subcommands {
            if sub.ast_verified {
                texts.push(sub.match_text());
                texts.extend(sub.stripped_match_text());
                texts.extend(sub.runner_stripped_match_text());
                for text in sub.deny_match_texts() {
                    if text.contains(crate::bash::HOLE) {
                        hole_texts.push(text);
                    } else {
                        texts.push(text);
                    }
                }
            } else {
                // Untrusted split: try every word as a start.
                let argv = sub.argv();
                for start in 0..argv.len() {
                    texts.push(argv[start..].join(" "));
                }
            }
        }
        let matched = |text: &String| {
            rules.content(
                behavior,
                tool,
                Subject::Command {
                    text,
                    ast_split: true,
                },
            )
        };
        if let Some(rule) = texts.iter().find_map(matched) {
            return Some((rule, false));
        }
        if let Some(rule) = self.path_rule_on_arguments(rules, behavior, analysis) {
            return Some((rule, false));
        }
        hole_texts.iter().find_map(matched).map(|rule| (rule, true))
    }

    /// Deny and ask rules on files hold against the shell too: with
    /// `Read(./secrets/**)` denied, `cat secrets/key` is denied. Every
    /// argument and redirect target is tried as a path (relative to the
    /// project, `~/` to the home directory); over-matching only narrows.
    fn path_rule_on_arguments<'r>(
        &self,
        rules: &'r RuleSet,
        behavior: RuleBehavior,
        analysis: &CommandAnalysis,
    ) -> Option<&'r PermissionRule> {
        let words = analysis.subcommands.iter().flat_map(|sub| {
            sub.words
                .iter()
                .skip(1)
                .map(|w| w.text.as_str())
                .chain(sub.redirect_writes.iter().map(String::as_str))
        });
        for word in words {
            let value = word.split_once('=').map_or(word, |(_, v)| v);
            if value.is_empty() || value.starts_with('-') {
                continue;
            }
            let path = match paths::expand_home(value, self.home.as_deref()) {
                Some(expanded) => expanded,
                None => self.project.join(value),
            };
            let path = paths::normalize(&path);
            let subject = Subject::Path {
                path: &path,
                project: &self.project,
                home: self.home.as_deref(),
            };
            let found = rules
                .content(behavior, "Read", subject)
                .or_else(|| rules.content(behavior, "Edit", subject));
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// An allow content rule covers the call only when it covers all of it:
    /// every subcommand of an AST-verified command (read-only ones count as
    /// covered, a redirect into a file does not), both the literal and the
    /// resolved path.
    fn allow_content_rule<'r>(
        &self,
        rules: &'r RuleSet,
        tool: &str,
        facts: &Facts,
    ) -> Option<&'r PermissionRule> {
        match facts {
            Facts::Bash(analysis) => {
                if analysis.structure.is_some() || analysis.subcommands.is_empty() {
                    // An empty command can only match `Bash()`.
                    return match analysis.source.trim().is_empty() {
                        true => rules.content(
                            RuleBehavior::Allow,
                            tool,
                            Subject::Command {
                                text: "",
                                ast_split: true,
                            },
                        ),
                        false => None,
                    };
                }
                let mut quoted = None;
                for sub in &analysis.subcommands {
                    let by_rule = if sub.redirect_writes.is_empty() && !sub.words.is_empty() {
                        let mut texts = vec![sub.match_text()];
                        texts.extend(sub.stripped_match_text());
                        texts.iter().find_map(|text| {
                            rules.content(
                                RuleBehavior::Allow,
                                tool,
                                Subject::Command {
                                    text,
                                    ast_split: sub.ast_verified,
                                },
                            )
                        })
                    } else {
                        None
                    };
                    match by_rule {
                        Some(rule) => {
                            quoted.get_or_insert(rule);
                        }
                        None if sub.is_read_only() => {}
                        None => return None,
                    }
                }
                quoted
            }
            Facts::Path {
                literal, resolved, ..
            } => {
                let subject = |path| Subject::Path {
                    path,
                    project: &self.project,
                    home: self.home.as_deref(),
                };
                let rule = rules.content(RuleBehavior::Allow, tool, subject(literal))?;
                rules.content(RuleBehavior::Allow, tool, subject(resolved))?;
                Some(rule)
            }
            Facts::Url(url) => rules.content(RuleBehavior::Allow, tool, Subject::Url(url)),
            Facts::Opaque => None,
        }
    }

    /// Safety checks (§9.2): dangerous shell constructs, sensitive paths by
    /// component (credentials for reads too), path shapes on the literal
    /// and the resolved path. A command's run-time-only findings count
    /// unless a protecting sandbox enforces them.
    fn safety_finding(&self, facts: &Facts) -> Option<String> {
        match facts {
            Facts::Bash(analysis) => analysis
                .dangerous()
                .or_else(|| {
                    analysis
                        .runtime_unknown()
                        .filter(|_| !self.protecting_sandbox)
                })
                .map(str::to_owned),
            Facts::Path { given, .. } if paths::shape_problem(given).is_some() => {
                paths::shape_problem(given)
            }
            Facts::Path {
                literal,
                resolved,
                access,
                ..
            } => {
                let literal_s = literal.to_string_lossy();
                let resolved_s = resolved.to_string_lossy();
                let resolved_s = paths::strip_verbatim(&resolved_s);
                if let Some(problem) = paths::shape_problem(&literal_s) {
                    return Some(problem);
                }
                if let Some(problem) = paths::shape_problem(resolved_s) {
                    return Some(format!("{problem} (after resolving links: {resolved_s})"));
                }
                for (path, via) in [(literal_s.as_ref(), ""), (resolved_s, " (through a link)")] {
                    if let Some(s) =
                        paths::classify_for(path, self.home.as_deref(), self.riot_home.as_deref())
                        && (s.applies_to_reads() || *access == PathAccess::Write)
                    {
                        return Some(format!("{}{via}", s.detail()));
                    }
                }
                None
            }
            Facts::Url(_) | Facts::Opaque => None,
        }
    }
}

#[async_trait]
impl PermissionPolicy for Policy {
    async fn decide(&self, query: &PermissionQuery) -> PermissionResult {
        self.decide_with_hook(query, None).await
    }

    fn remember(&self, rule: PermissionRule) {
        self.rules
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(rule);
    }

    fn answered_by_person(&self) {
        self.reset_classifier_streak();
    }

    fn suggest_rule(&self, query: &PermissionQuery, asked: &PermissionResult) -> Option<String> {
        crate::suggested_rule(asked, query, &self.project)
    }
}

fn describe(q: &PermissionQuery, facts: &Facts) -> String {
    match facts {
        Facts::Bash(a) => format!("run `{}`", a.source.trim()),
        Facts::Path {
            resolved, access, ..
        } => {
            let verb = match access {
                PathAccess::Read => "read",
                PathAccess::Write => "write",
            };
            format!("{verb} {} ({})", resolved.display(), q.tool_name)
        }
        Facts::Url(url) => format!("fetch {url}"),
        Facts::Opaque => format!("use {}", q.tool_name),
    }
}
