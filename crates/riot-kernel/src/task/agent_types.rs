//! Agent types: the built-ins and `agents/*.md` files, their front
//! matter checked, gathered into a session's [`AgentCatalog`].

use std::path::{Path, PathBuf};

use riot_extensions::extension_files::{self, Layout, Origin};
use riot_extensions::frontmatter::{self, FrontMatterError, ToolList};
use riot_protocol::permission::UnknownMode;
use riot_protocol::{FileSystem, PermissionMode};
use serde::Deserialize;

/// The tools a read-only agent may be given.
const READ_ONLY_TOOLS: [&str; 3] = ["Read", "Glob", "Grep"];
/// `explore`'s tools: the read-only ones and the shell, whose commands the
/// read-only policy limits to those that change nothing.
const EXPLORE_TOOLS: [&str; 4] = ["Read", "Glob", "Grep", "Bash"];

/// One agent type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// `None`: every tool a subagent may have.
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    pub mode: Option<PermissionMode>,
    /// The agent's instructions (the file's body).
    pub instructions: String,
    pub origin: Origin,
}

impl AgentDefinition {
    /// Whether everything this agent can do only reads.
    pub fn is_read_only(&self) -> bool {
        self.name == "explore"
            || self
                .tools
                .as_ref()
                .is_some_and(|t| t.iter().all(|n| READ_ONLY_TOOLS.contains(&n.as_str())))
    }
}

fn builtin_agents() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general-purpose".into(),
            description: "Researches complex questions and carries out multi-step tasks on its own, with every tool. Use it for work that would fill your context with searching and reading.".into(),
            tools: None,
            model: None,
            mode: None,
            instructions: "You are a general-purpose agent working on a task given by another agent. Use the tools to do the task completely; search broadly when you do not know where something is.".into(),
            origin: Origin::Builtin,
        },
        AgentDefinition {
            name: "explore".into(),
            description: "Explores the codebase read-only: finds files, reads code and answers questions about it. Use it to search and read in parallel without changing anything.".into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|t| (*t).to_owned()).collect()),
            model: None,
            mode: None,
            instructions: "You are a read-only exploration agent. Find and read what the task needs with Glob, Grep, Read and read-only shell commands (ls, git log, …). You cannot change files or run commands that change anything; do not try.".into(),
            origin: Origin::Builtin,
        },
    ]
}

#[derive(Debug, Default, Deserialize)]
struct AgentFront {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolList>,
    model: Option<String>,
    #[serde(rename = "permission-mode", alias = "permissionMode")]
    permission_mode: Option<String>,
}

/// The agent types of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
}

impl AgentCatalog {
    /// The built-in types only.
    pub fn builtin() -> Self {
        Self {
            agents: builtin_agents(),
        }
    }

    /// The built-ins, then the project's files (only when `trusted`), then
    /// the user's; notices for the person.
    pub async fn discover(
        fs: &dyn FileSystem,
        home: &Path,
        project_root: &Path,
        trusted: bool,
    ) -> (Self, Vec<String>) {
        let mut catalog = Self::builtin();
        let mut notices = Vec::new();
        let found = extension_files::find(
            fs,
            home,
            project_root,
            trusted,
            "agents",
            "agent definition",
            Layout::Markdown { max_depth: 1 },
        )
        .await;
        notices.extend(found.notice);
        for place in found.places {
            catalog
                .load(fs, place.entries, place.origin, &mut notices)
                .await;
        }
        (catalog, notices)
    }

    async fn load(
        &mut self,
        fs: &dyn FileSystem,
        files: Vec<PathBuf>,
        origin: Origin,
        notices: &mut Vec<String>,
    ) {
        for file in files {
            let Some(text) = extension_files::read_text(fs, &file, "agent", notices).await else {
                continue;
            };
            match parse_agent(&text, &file, origin) {
                Ok(agent) => {
                    if let Some(existing) = self.get(&agent.name) {
                        if existing.origin == Origin::Builtin {
                            notices.push(format!(
                                "agent {} skipped: `{}` is built in",
                                file.display(),
                                agent.name
                            ));
                        }
                        continue;
                    }
                    self.agents.push(agent);
                }
                Err(reason) => notices.push(format!("agent {}: {reason}; skipped", file.display())),
            }
        }
    }

    /// Every agent type, built-ins first.
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// The type called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }
}

/// Why an agent file cannot be used; the message starts with the file
/// line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentFileError {
    /// The front matter does not parse.
    #[error(transparent)]
    FrontMatter(#[from] FrontMatterError),
    /// The name is empty, too long or has other characters.
    #[error("line {line}: the name `{name}` must be 1–64 lowercase letters, digits or hyphens")]
    BadName { line: usize, name: String },
    /// No description.
    #[error("line {line}: a `description` is required: it is how the model picks the agent")]
    NoDescription { line: usize },
    /// A mode only the person may choose (bypass, unattended).
    #[error("line {line}: `permission-mode: {mode}` cannot be set by an agent file")]
    PersonalMode { line: usize, mode: String },
    /// A mode Riot does not know.
    #[error("line {line}: {source}")]
    UnknownMode {
        line: usize,
        #[source]
        source: UnknownMode,
    },
}

fn parse_agent(text: &str, file: &Path, origin: Origin) -> Result<AgentDefinition, AgentFileError> {
    let (front, body) = frontmatter::parse::<AgentFront>(text)?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = front.name.unwrap_or(stem).trim().to_owned();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(AgentFileError::BadName {
            line: frontmatter::line_of(text, "name"),
            name,
        });
    }
    let description = front.description.unwrap_or_default().trim().to_owned();
    if description.is_empty() {
        return Err(AgentFileError::NoDescription {
            line: frontmatter::line_of(text, "description"),
        });
    }
    let mode = match front.permission_mode.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(m) => match m.parse::<PermissionMode>() {
            // A file may narrow what its agent does, never widen it past
            // asking: bypass and unattended are the person's to choose.
            Ok(PermissionMode::Bypass | PermissionMode::Unattended) => {
                return Err(AgentFileError::PersonalMode {
                    line: frontmatter::line_of(text, "permission-mode"),
                    mode: m.to_owned(),
                });
            }
            Ok(mode) => Some(mode),
            Err(source) => {
                return Err(AgentFileError::UnknownMode {
                    line: frontmatter::line_of(text, "permission-mode"),
                    source,
                });
            }
        },
    };
    Ok(AgentDefinition {
        name,
        description,
        tools: front.tools.map(|t| t.0).filter(|t| !t.is_empty()),
        model: front.model.filter(|m| !m.trim().is_empty()),
        mode,
        instructions: body.trim().to_owned(),
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_files_parse_and_are_checked() {
        let file = Path::new("/a/reviewer.md");
        let agent = parse_agent(
            "---\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: small\npermission-mode: plan\n---\nReview carefully.\n",
            file,
            Origin::User,
        )
        .unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(
            agent.tools.as_deref(),
            Some(&["Read".to_owned(), "Grep".to_owned()][..])
        );
        assert_eq!(agent.model.as_deref(), Some("small"));
        assert_eq!(agent.mode, Some(PermissionMode::Plan));
        assert_eq!(agent.instructions, "Review carefully.");
        assert!(agent.is_read_only());

        let err = parse_agent(
            "---\ndescription: d\npermission-mode: bypass\n---\n",
            file,
            Origin::Project,
        )
        .unwrap_err();
        assert_eq!(
            err,
            AgentFileError::PersonalMode {
                line: 3,
                mode: "bypass".into()
            }
        );
        assert!(
            err.to_string()
                .starts_with("line 3: `permission-mode: bypass` cannot be set"),
            "{err}"
        );
        let err = parse_agent("---\nname: x\n---\n", file, Origin::User).unwrap_err();
        assert!(
            err.to_string().contains("a `description` is required"),
            "{err}"
        );
        let err = parse_agent(
            "---\ndescription: d\npermission-mode: sideways\n---\n",
            file,
            Origin::User,
        )
        .unwrap_err();
        assert!(
            matches!(err, AgentFileError::UnknownMode { line: 3, .. }),
            "{err}"
        );
        assert!(err.to_string().starts_with("line 3: "), "{err}");
        let writer = parse_agent(
            "---\ndescription: d\ntools: [Read, Write]\n---\n",
            file,
            Origin::User,
        )
        .unwrap();
        assert!(!writer.is_read_only());
    }

    #[test]
    fn explore_is_read_only_and_general_purpose_is_not() {
        let catalog = AgentCatalog::builtin();
        assert!(catalog.get("explore").unwrap().is_read_only());
        assert!(!catalog.get("general-purpose").unwrap().is_read_only());
    }
}
