//! The rule "allow always" would add (docs/design.md §9: "allow always"
//! turns into a session or project rule that actually sticks).
//!
//! A rule is only offered when it would stick: an allow rule cannot get
//! past a deny or ask rule, a hook or a safety finding (step 6 comes after
//! them), so when the question's reason does not yield to bypass, no rule
//! is offered and the person can only allow once. Otherwise "don't ask
//! again" would ask again.

use std::path::Path;

use riot_protocol::{PathAccess, PermissionQuery, PermissionResult, PermissionTarget};

use crate::bash::analyze_command;
use crate::rules::url_host;

/// The narrowest rule that would allow this call next time, if one would
/// stick. `project` makes in-project paths relative (`Edit(./src/a.rs)`).
pub fn suggested_rule(
    result: &PermissionResult,
    query: &PermissionQuery,
    project: &Path,
) -> Option<String> {
    let PermissionResult::Ask { reason, .. } = result else {
        return None;
    };
    if !reason.yields_to_bypass() {
        return None;
    }
    let tool = &query.tool_name;
    match &query.target {
        PermissionTarget::Command { command } => {
            let analysis = analyze_command(command);
            // Only a single, fully literal command: a rule for a compound
            // line would not match its parts.
            match analysis.subcommands.as_slice() {
                [only]
                    if analysis.is_verified()
                        && only.is_literal()
                        && only.redirect_writes.is_empty() =>
                {
                    let text = only
                        .stripped_match_text()
                        .unwrap_or_else(|| only.match_text());
                    Some(format!("{tool}({text})"))
                }
                _ => None,
            }
        }
        PermissionTarget::Path { path, access } => {
            let family = match access {
                PathAccess::Read => "Read",
                PathAccess::Write => "Edit",
            };
            let shown = match path.strip_prefix(project) {
                Ok(rel) => format!("./{}", rel.display()),
                Err(_) => path.display().to_string(),
            };
            Some(format!("{family}({shown})"))
        }
        PermissionTarget::Url { url } => url_host(url).map(|host| format!("{tool}(domain:{host})")),
        PermissionTarget::Opaque => Some(tool.clone()),
    }
}
