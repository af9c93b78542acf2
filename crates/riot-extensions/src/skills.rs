//! Skills (docs/design.md §13): a folder with a `SKILL.md` that teaches a
//! workflow. Only the list (name and description) is in the model's
//! context, in the `Skill` tool's description; the body is read when the
//! model loads the skill, and files bundled beside it are read on demand
//! with the ordinary tools.
//!
//! Where skills come from, the first of a name winning:
//!
//! 1. the project's `.riot/skills/<name>/SKILL.md`,
//! 2. the project's `.agents/skills/<name>/SKILL.md` (the folder every
//!    agent reads),
//! 3. the project's `.claude/skills/<name>/SKILL.md`,
//! 4. the user's `<riot home>/skills/<name>/SKILL.md`,
//! 5. the person's `~/.agents/skills/<name>/SKILL.md`,
//! 6. the built-in skills (`commit`, `review`, `debug`, `office`).
//!
//! Riot's own folders come first, then the cross-agent one, then another
//! agent's.
//!
//! Project skills are read only from a trusted project (§13, a rule). A
//! file with bad front matter is skipped with a notice naming the file and
//! line; the session goes on.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use riot_protocol::{
    FileKind, FileSystem, PromptContext, Tool, ToolContext, ToolOutcome, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::extension_files::{self, Origin};
use crate::frontmatter::{self, FrontMatterError, ToolList};

/// Longest skill name (the common SKILL.md convention).
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Bundled files listed when a skill loads (the rest are summarised).
const MAX_LISTED_FILES: usize = 50;

/// One skill of the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The tools the skill expects to use (front matter `allowed-tools`).
    /// Advisory: permission rules still decide every call.
    pub allowed_tools: Vec<String>,
    pub origin: Origin,
    /// The skill's folder (`None` for built-ins).
    pub dir: Option<PathBuf>,
    builtin_text: Option<&'static str>,
}

#[derive(Debug, Default, Deserialize)]
struct SkillFront {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<ToolList>,
}

const BUILTIN: [(&str, &str); 4] = [
    ("commit", include_str!("../skills/commit/SKILL.md")),
    ("review", include_str!("../skills/review/SKILL.md")),
    ("debug", include_str!("../skills/debug/SKILL.md")),
    ("office", include_str!("../skills/office/SKILL.md")),
];

/// Why a SKILL.md cannot be used; the message starts with the file line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// The front matter does not parse.
    #[error(transparent)]
    FrontMatter(#[from] FrontMatterError),
    /// The name is empty, too long or has other characters.
    #[error(
        "line {line}: the name `{name}` must be 1–{MAX_NAME_CHARS} lowercase letters, digits or hyphens"
    )]
    BadName { line: usize, name: String },
    /// No description.
    #[error(
        "line {line}: a `description` is required: it is how the model knows when to use the skill"
    )]
    NoDescription { line: usize },
    /// The description is longer than [`MAX_DESCRIPTION_CHARS`].
    #[error(
        "line {line}: the description has {chars} characters; at most {MAX_DESCRIPTION_CHARS} are allowed"
    )]
    LongDescription { line: usize, chars: usize },
}

/// Checks a SKILL.md and makes its catalog entry.
fn parse_skill(
    text: &str,
    dir_name: &str,
    origin: Origin,
    dir: Option<PathBuf>,
) -> Result<Skill, SkillError> {
    let (front, _body) = frontmatter::parse::<SkillFront>(text)?;
    let name = front.name.unwrap_or_else(|| dir_name.to_owned());
    let name = name.trim().to_owned();
    let bad_name = name.is_empty()
        || name.chars().count() > MAX_NAME_CHARS
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if bad_name {
        return Err(SkillError::BadName {
            line: frontmatter::line_of(text, "name"),
            name,
        });
    }
    let description = front.description.unwrap_or_default().trim().to_owned();
    if description.is_empty() {
        return Err(SkillError::NoDescription {
            line: frontmatter::line_of(text, "description"),
        });
    }
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(SkillError::LongDescription {
            line: frontmatter::line_of(text, "description"),
            chars,
        });
    }
    Ok(Skill {
        name,
        description,
        allowed_tools: front.allowed_tools.unwrap_or_default().0,
        origin,
        dir,
        builtin_text: None,
    })
}

/// The skills of a session, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    skills: Vec<Skill>,
}

/// The catalog and what a person should be told about it.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    pub catalog: SkillCatalog,
    pub notices: Vec<String>,
}

impl SkillCatalog {
    /// The built-in skills only.
    pub fn builtin() -> Self {
        let mut skills: Vec<Skill> = BUILTIN
            .iter()
            .filter_map(|(dir, text)| {
                let mut skill = parse_skill(text, dir, Origin::Builtin, None).ok()?;
                skill.builtin_text = Some(text);
                Some(skill)
            })
            .collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        Self { skills }
    }

    /// Finds the skills of a session in `project_root` (project skills
    /// only when `trusted`), Riot's `home` and the person's home directory
    /// `user_home` (`$HOME`), over the built-ins.
    pub async fn discover(
        fs: &dyn FileSystem,
        home: &Path,
        user_home: Option<&Path>,
        project_root: &Path,
        trusted: bool,
    ) -> Discovered {
        let mut found: Vec<Skill> = Vec::new();
        let mut notices = Vec::new();
        let places = extension_files::find_skills(fs, home, user_home, project_root, trusted).await;
        notices.extend(places.notice);
        for place in places.places {
            load_dir(fs, place.entries, place.origin, &mut found, &mut notices).await;
        }
        for skill in Self::builtin().skills {
            if !found.iter().any(|s| s.name == skill.name) {
                found.push(skill);
            }
        }
        found.sort_by(|a, b| a.name.cmp(&b.name));
        Discovered {
            catalog: Self { skills: found },
            notices,
        }
    }

    /// Every skill, by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The list the model sees: one line per skill.
    pub fn listing(&self) -> String {
        self.skills
            .iter()
            .map(|s| format!("- {}: {}", s.name, one_line(&s.description)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

async fn load_dir(
    fs: &dyn FileSystem,
    dirs: Vec<PathBuf>,
    origin: Origin,
    found: &mut Vec<Skill>,
    notices: &mut Vec<String>,
) {
    for dir in dirs {
        let file = dir.join("SKILL.md");
        let Some(text) = extension_files::read_text(fs, &file, "skill", notices).await else {
            continue;
        };
        let dir_name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match parse_skill(&text, &dir_name, origin, Some(dir.clone())) {
            Ok(skill) => {
                if let Some(earlier) = found.iter().find(|s| s.name == skill.name) {
                    tracing::info!(
                        skill = %skill.name,
                        shadowed = %file.display(),
                        by = earlier.origin.as_str(),
                        "a skill of the same name takes precedence"
                    );
                } else {
                    found.push(skill);
                }
            }
            Err(reason) => notices.push(format!("skill {}: {reason}; skipped", file.display())),
        }
    }
}

/// Input of the Skill tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The name of the skill to load, as listed in this tool's description.
    pub skill: String,
}

/// The Skill tool: loads a skill's instructions into the conversation.
#[derive(Debug, Clone)]
pub struct SkillTool {
    pub catalog: SkillCatalog,
}

#[async_trait]
impl Tool for SkillTool {
    type Input = SkillInput;

    fn name(&self) -> &str {
        "Skill"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(SkillInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        format!(
            "Loads a skill: instructions for a kind of task, written by the person, the project or Riot. \
When a task matches a skill's description, load it before you start and follow it; the result is the skill's instructions and the files bundled with it.\n\n\
Available skills:\n{}\n\n\
How it differs from the other tools: it reads instructions, not project files, and changes nothing.\n\n\
NEVER:\n- load a skill that is not in the list above;\n- load the same skill twice in one task — its instructions are already in the conversation;\n- treat a skill's `allowed-tools` as permission: every call is still checked.",
            self.catalog.listing()
        )
    }

    fn describe(&self, input: &SkillInput) -> String {
        format!("Load skill {}", input.skill)
    }

    /// Only Riot's own skill files are read; nothing changes.
    fn is_read_only(&self, _input: &SkillInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &SkillInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &SkillInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if self.catalog.get(&input.skill).is_none() {
            let names: Vec<&str> = self
                .catalog
                .skills()
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            return Err(ValidationError::rejected(format!(
                "There is no skill `{}`. Available skills: {}.",
                input.skill,
                names.join(", ")
            )));
        }
        Ok(())
    }

    async fn call(&self, input: SkillInput, ctx: &ToolContext) -> ToolOutcome {
        let Some(skill) = self.catalog.get(&input.skill) else {
            return ToolOutcome::failed(format!("There is no skill `{}`.", input.skill));
        };
        let fs = ctx.env.fs.as_ref();
        let text = match (skill.builtin_text, &skill.dir) {
            (Some(text), _) => text.to_owned(),
            (None, Some(dir)) => match fs.read(&dir.join("SKILL.md")).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => {
                    return ToolOutcome::failed(format!(
                        "The skill `{}` could not be read from {}: {e}",
                        skill.name,
                        dir.display()
                    ));
                }
            },
            (None, None) => String::new(),
        };
        let body = match frontmatter::parse::<SkillFront>(&text) {
            Ok((_, body)) => body.trim().to_owned(),
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "The skill `{}` changed on disk and its front matter is now invalid ({e}).",
                    skill.name
                ));
            }
        };
        let mut out = match &skill.dir {
            Some(dir) => format!(
                "Skill `{}` ({} skill in {}):\n\n{body}\n",
                skill.name,
                skill.origin.as_str(),
                dir.display()
            ),
            None => format!("Skill `{}` (built-in):\n\n{body}\n", skill.name),
        };
        if !skill.allowed_tools.is_empty() {
            out.push_str(&format!(
                "\nThis skill expects to use: {}. Permission rules still decide each call.\n",
                skill.allowed_tools.join(", ")
            ));
        }
        if let Some(dir) = &skill.dir {
            let files = bundled_files(fs, dir).await;
            if !files.is_empty() {
                out.push_str("\nFiles bundled with the skill (read them when the instructions refer to them):\n");
                for f in files.iter().take(MAX_LISTED_FILES) {
                    out.push_str(&format!("- {}\n", f.display()));
                }
                if files.len() > MAX_LISTED_FILES {
                    out.push_str(&format!(
                        "- … and {} more under {}\n",
                        files.len() - MAX_LISTED_FILES,
                        dir.display()
                    ));
                }
            }
        }
        ToolOutcome::text(out, None)
    }
}

/// Files under a skill's folder other than its `SKILL.md`, sorted, at most
/// three levels deep.
async fn bundled_files(fs: &dyn FileSystem, dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = pending.pop() {
        let Ok(entries) = fs.read_dir(&d).await else {
            continue;
        };
        for entry in entries {
            match entry.kind {
                FileKind::Dir if depth < 2 => pending.push((entry.path, depth + 1)),
                FileKind::File if entry.path != dir.join("SKILL.md") => files.push(entry.path),
                _ => {}
            }
        }
        if files.len() > 10 * MAX_LISTED_FILES {
            break;
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_skills_parse_and_are_sorted() {
        let catalog = SkillCatalog::builtin();
        let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["commit", "debug", "office", "review"]);
        assert!(catalog.skills().iter().all(|s| s.origin == Origin::Builtin));
        let commit = catalog.get("commit").unwrap();
        assert!(
            commit
                .allowed_tools
                .contains(&"Bash(git commit:*)".to_owned())
        );
        assert!(catalog.listing().starts_with("- commit: Turn the current"));
    }

    #[test]
    fn names_and_descriptions_are_checked_with_the_line() {
        let long = "x".repeat(65);
        let text = format!("---\ndescription: d\nname: {long}\n---\n");
        let err = parse_skill(&text, "dir", Origin::User, None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("line 3: the name"), "{err}");

        let err = parse_skill(
            "---\nname: Bad_Name\ndescription: d\n---\n",
            "d",
            Origin::User,
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`Bad_Name` must be"), "{err}");

        let err = parse_skill("---\nname: ok\n---\nbody", "d", Origin::User, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("line 2: a `description` is required"),
            "{err}"
        );

        let text = format!("---\nname: ok\ndescription: {}\n---\n", "d".repeat(1025));
        let err = parse_skill(&text, "d", Origin::User, None).unwrap_err();
        assert_eq!(
            err,
            SkillError::LongDescription {
                line: 3,
                chars: 1025
            }
        );
        assert_eq!(
            err.to_string(),
            "line 3: the description has 1025 characters; at most 1024 are allowed"
        );

        // The folder name stands in for a missing name.
        let skill = parse_skill(
            "---\ndescription: does things\n---\n",
            "my-skill",
            Origin::User,
            None,
        )
        .unwrap();
        assert_eq!(skill.name, "my-skill");
    }
}
