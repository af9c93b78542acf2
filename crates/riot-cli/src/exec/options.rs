//! `riot exec`'s options as the kernel takes them: Claude Code's headless
//! flag names folded into Riot's own (`--allowedTools` into `--allow`,
//! `--dangerously-skip-permissions` into `--permission-mode bypass`), and
//! the combinations that cannot work refused with the fix.

use riot_config::FlagLayer;
use riot_protocol::PermissionMode;

use crate::cli::{ExecOptions, InputFormat, OutputFormat, SharedOptions};

/// Options of `riot exec` that cannot work as given; each says the fix.
/// A usage error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// `--dangerously-skip-permissions` with another `--permission-mode`.
    #[error(
        "--dangerously-skip-permissions means --permission-mode bypass, but --permission-mode {mode} was given too; drop one of them"
    )]
    SkipPermissionsWithMode {
        /// The other mode given.
        mode: PermissionMode,
    },
    /// `--system-prompt` or `--append-system-prompt` with blank text.
    #[error("{flag} needs the text of the instructions")]
    NoInstructions {
        /// The flag given blank.
        flag: &'static str,
    },
    /// `--input-format stream-json` without a streaming output format.
    #[error(
        "--input-format stream-json answers each message as it comes; add --output-format stream-json (or events)"
    )]
    StreamInputNeedsStreamOutput,
    /// `--input-format stream-json` with a PROMPT argument.
    #[error(
        "with --input-format stream-json the prompts come on stdin as JSON lines; drop the PROMPT argument"
    )]
    StreamInputWithPrompt,
    /// `--include-partial-messages` without `--output-format stream-json`.
    #[error(
        "--include-partial-messages adds stream_event lines to --output-format stream-json; add that, or drop it"
    )]
    PartialWithoutStream,
}

/// Splits a Claude Code tool list — `"Bash(git log:*),Read"` or `"Bash(git
/// log:*) Read"` — into rules. Commas and spaces inside parentheses belong
/// to the rule.
pub fn split_rules(list: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' if depth == 0 => rules.push(std::mem::take(&mut current)),
            c if c.is_whitespace() && depth == 0 => rules.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    rules.push(current);
    rules
        .into_iter()
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .collect()
}

/// The configuration layer of this run's flags.
pub fn flag_layer(
    shared: &SharedOptions,
    options: &ExecOptions,
) -> Result<FlagLayer, OptionsError> {
    let mut flags = crate::cli::flag_layer(shared);
    flags
        .allow
        .extend(options.allowed_tools.iter().flat_map(|l| split_rules(l)));
    flags
        .deny
        .extend(options.disallowed_tools.iter().flat_map(|l| split_rules(l)));
    if options.dangerously_skip_permissions {
        match shared.permission_mode {
            None | Some(PermissionMode::Bypass) => {
                flags.permission_mode = Some(PermissionMode::Bypass);
            }
            Some(mode) => return Err(OptionsError::SkipPermissionsWithMode { mode }),
        }
    }
    for (flag, text) in [
        ("--system-prompt", &options.system_prompt),
        ("--append-system-prompt", &options.append_system_prompt),
    ] {
        if text.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(OptionsError::NoInstructions { flag });
        }
    }
    flags.system_prompt.clone_from(&options.system_prompt);
    flags
        .append_system_prompt
        .clone_from(&options.append_system_prompt);
    Ok(flags)
}

/// Refuses combinations of formats that cannot work, with the fix.
pub fn check(options: &ExecOptions, prompt: Option<&str>) -> Result<(), OptionsError> {
    let streams = matches!(
        options.output_format,
        OutputFormat::StreamJson | OutputFormat::Events
    );
    if options.input_format == InputFormat::StreamJson {
        if !streams {
            return Err(OptionsError::StreamInputNeedsStreamOutput);
        }
        if prompt.is_some() {
            return Err(OptionsError::StreamInputWithPrompt);
        }
    }
    // `events` has every delta already: the flag changes nothing there.
    if options.include_partial_messages && !streams {
        return Err(OptionsError::PartialWithoutStream);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_on_commas_and_spaces_outside_parentheses() {
        assert_eq!(
            split_rules("Bash(git log:*),Read"),
            ["Bash(git log:*)", "Read"]
        );
        assert_eq!(
            split_rules("Bash(git log:*) Read"),
            ["Bash(git log:*)", "Read"]
        );
        assert_eq!(
            split_rules(" Bash(npm run test:*), Edit(src/a,b.rs) ,,WebFetch"),
            ["Bash(npm run test:*)", "Edit(src/a,b.rs)", "WebFetch"]
        );
        assert_eq!(split_rules("Bash(echo (a, b))"), ["Bash(echo (a, b))"]);
        assert!(split_rules(" , ").is_empty());
    }

    fn shared(mode: Option<PermissionMode>) -> SharedOptions {
        SharedOptions {
            cwd: None,
            provider: None,
            base_url: None,
            model: None,
            api_key_env: None,
            permission_mode: mode,
            allow: vec!["Glob".into()],
            ask: Vec::new(),
            deny: Vec::new(),
            max_turns: None,
            trust_project: false,
        }
    }

    #[test]
    fn claude_codes_flags_become_riots() {
        let options = ExecOptions {
            allowed_tools: vec!["Bash(git log:*),Read".into(), "Grep".into()],
            disallowed_tools: vec!["Bash(rm:*) Write".into()],
            dangerously_skip_permissions: true,
            system_prompt: Some("Be brief.".into()),
            append_system_prompt: Some("Use British spelling.".into()),
            ..ExecOptions::default()
        };
        let flags = flag_layer(&shared(None), &options).unwrap();
        assert_eq!(flags.allow, ["Glob", "Bash(git log:*)", "Read", "Grep"]);
        assert_eq!(flags.deny, ["Bash(rm:*)", "Write"]);
        assert_eq!(flags.permission_mode, Some(PermissionMode::Bypass));
        assert_eq!(flags.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(
            flags.append_system_prompt.as_deref(),
            Some("Use British spelling.")
        );

        let clash = flag_layer(&shared(Some(PermissionMode::Plan)), &options)
            .unwrap_err()
            .to_string();
        assert!(clash.contains("--permission-mode plan"), "{clash}");
        assert!(flag_layer(&shared(Some(PermissionMode::Bypass)), &options).is_ok());

        let blank = ExecOptions {
            system_prompt: Some(" ".into()),
            ..ExecOptions::default()
        };
        assert_eq!(
            flag_layer(&shared(None), &blank).unwrap_err().to_string(),
            "--system-prompt needs the text of the instructions"
        );
    }

    #[test]
    fn formats_that_cannot_work_together_are_refused() {
        let stream_in = ExecOptions {
            input_format: InputFormat::StreamJson,
            ..ExecOptions::default()
        };
        assert!(
            check(&stream_in, None)
                .unwrap_err()
                .to_string()
                .contains("--output-format stream-json")
        );
        let both = ExecOptions {
            output_format: OutputFormat::StreamJson,
            ..stream_in.clone()
        };
        assert_eq!(check(&both, None), Ok(()));
        assert!(
            check(&both, Some("hi"))
                .unwrap_err()
                .to_string()
                .contains("drop the PROMPT")
        );
        let partial = ExecOptions {
            include_partial_messages: true,
            output_format: OutputFormat::Json,
            ..ExecOptions::default()
        };
        assert!(check(&partial, None).is_err());
        let events = ExecOptions {
            output_format: OutputFormat::Events,
            ..partial
        };
        assert_eq!(check(&events, None), Ok(()));
    }
}
