//! The built-in slash commands (`/help`, `/cost`, `/clear`, `/compact`,
//! `/model`, `/thinking`, `/mode`, `/rewind`, `/undo`) and the prompt of
//! a command file.

use std::path::PathBuf;
use std::sync::Arc;

use riot_protocol::{AgentEvent, ErrorKind, PermissionMode, TerminalReason};

use super::{Session, failed};

impl Session {
    /// A built-in command's events, `Done` last.
    pub(super) async fn builtin(&mut self, name: &str, args: &str) -> Vec<AgentEvent> {
        let info = |session: &Self, text: String| AgentEvent::Message {
            message: session.system_message(riot_protocol::SystemLevel::Info, text),
        };
        let done = AgentEvent::Done {
            reason: TerminalReason::Completed,
        };
        let ids = Arc::clone(&self.deps.ids);
        let ids = ids.as_ref();
        match name {
            "help" => vec![info(self, self.commands.help(&self.skills)), done],
            "cost" => vec![info(self, crate::cost::describe(&self.cost.total())), done],
            "clear" => {
                self.clear();
                vec![
                    info(self, "Cleared: the conversation starts over.".into()),
                    done,
                ]
            }
            "compact" => {
                let focus = (!args.is_empty()).then(|| args.to_owned());
                match self.compact(focus).await {
                    Ok(mut events) => {
                        events.push(done);
                        events
                    }
                    Err(e) => failed(ids, ErrorKind::Other, format!("Could not compact: {e}")),
                }
            }
            "model" => {
                if args.is_empty() {
                    let fallback = self
                        .state
                        .fallback_model
                        .as_deref()
                        .map(|f| format!(" (fallback: {f})"))
                        .unwrap_or_default();
                    vec![
                        info(self, format!("Model: {}{fallback}", self.state.model)),
                        done,
                    ]
                } else if args.split_whitespace().count() > 1 {
                    failed(
                        ids,
                        ErrorKind::Usage,
                        format!("/model takes one model name, got `{args}`"),
                    )
                } else {
                    self.set_model(args);
                    vec![
                        info(self, format!("Model: {args} from the next request on.")),
                        done,
                    ]
                }
            }
            "thinking" => {
                let model = self.state.model.clone();
                let can_think = self.deps.provider.capabilities(&model).thinking;
                if args.is_empty() {
                    let level = self.thinking();
                    let note = if can_think {
                        String::new()
                    } else {
                        format!(" ({model} cannot think)")
                    };
                    return vec![
                        info(self, format!("Thinking: {}{note}", level.as_str())),
                        done,
                    ];
                }
                match riot_protocol::ThinkingLevel::parse(args) {
                    None => failed(
                        ids,
                        ErrorKind::Usage,
                        format!("/thinking takes off, low, medium or high, not `{args}`"),
                    ),
                    Some(_) if !can_think => failed(
                        ids,
                        ErrorKind::Usage,
                        format!("{model} cannot think; switch to a model that can first"),
                    ),
                    Some(level) => {
                        self.set_thinking(level);
                        vec![
                            info(
                                self,
                                format!("Thinking: {} from the next request on.", level.as_str()),
                            ),
                            done,
                        ]
                    }
                }
            }
            "mode" => {
                if args.is_empty() {
                    return vec![
                        info(self, format!("Permission mode: {}", self.state.mode)),
                        done,
                    ];
                }
                match args.parse::<PermissionMode>() {
                    // Unattended lets safety findings through: it is set in
                    // settings with `unattended_confirmed`, never typed.
                    Ok(PermissionMode::Unattended) => failed(
                        ids,
                        ErrorKind::Usage,
                        "unattended mode can only be set in settings, with \"unattended_confirmed\": true beside it".into(),
                    ),
                    Ok(mode) => {
                        self.set_mode(mode);
                        vec![
                            info(
                                self,
                                format!("Permission mode: {mode} from the next request on."),
                            ),
                            done,
                        ]
                    }
                    Err(e) => failed(ids, ErrorKind::Usage, e.to_string()),
                }
            }
            "rewind" | "undo" => self.rewind_command(name, args).await,
            other => failed(
                ids,
                ErrorKind::Internal,
                format!("the built-in command /{other} has no implementation"),
            ),
        }
    }

    /// A command file's prompt for `args`, read now so an edit applies
    /// without restarting.
    pub(super) async fn command_prompt(
        &self,
        command: &riot_extensions::commands::Command,
        args: &str,
    ) -> Result<String, CommandFileError> {
        let name = || command.name.clone();
        let Some(file) = &command.file else {
            return Err(CommandFileError::NoFile { command: name() });
        };
        let bytes = self
            .fs
            .read(file)
            .await
            .map_err(|source| CommandFileError::Read {
                command: name(),
                path: file.clone(),
                source,
            })?;
        let text = String::from_utf8(bytes).map_err(|_| CommandFileError::NotUtf8 {
            command: name(),
            path: file.clone(),
        })?;
        let (_, body) =
            riot_extensions::frontmatter::parse::<serde_json::Value>(&text).map_err(|source| {
                CommandFileError::FrontMatter {
                    command: name(),
                    path: file.clone(),
                    source,
                }
            })?;
        Ok(riot_extensions::commands::expand(body, args))
    }
}

/// Why a command file's prompt cannot be had (a usage error of the turn).
#[derive(Debug, thiserror::Error)]
pub enum CommandFileError {
    /// The command has no file behind it.
    #[error("/{command} has no file")]
    NoFile { command: String },
    /// The file could not be read.
    #[error("/{command} could not be read from {path}: {source}")]
    Read {
        command: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not UTF-8.
    #[error("/{command}: {path} is not UTF-8 text")]
    NotUtf8 { command: String, path: PathBuf },
    /// Its front matter does not parse.
    #[error("/{command}: {path}: {source}")]
    FrontMatter {
        command: String,
        path: PathBuf,
        #[source]
        source: riot_extensions::frontmatter::FrontMatterError,
    },
}
