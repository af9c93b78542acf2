//! Where the plain-file extension points live (docs/design.md §13): for a
//! kind such as `skills`, `commands` or `agents`, the project's
//! `.riot/<kind>/`, then its `.claude/<kind>/` — read only once the person
//! trusts the project — then the user's `<riot home>/<kind>/`. Skills are
//! also read from the cross-agent `.agents/skills/` ([`find_skills`]): the
//! project's between `.riot/` and `.claude/`, the person's
//! `~/.agents/skills/` after Riot's own. The first place holding a name
//! wins; built-ins come before or after, as each kind says.

use std::path::{Path, PathBuf};

use riot_protocol::{FileKind, FileSystem};

/// Where an extension was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Project,
    User,
}

impl Origin {
    /// `built-in`, `project` or `user`, for people.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Builtin => "built-in",
            Origin::Project => "project",
            Origin::User => "user",
        }
    }
}

/// How a kind lays out its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `<name>/SKILL.md` folders.
    SkillFolders,
    /// `*.md` files, in sub-folders down to this depth (1: the folder only).
    Markdown { max_depth: usize },
}

/// One place's files, in precedence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub origin: Origin,
    /// The folder the names are relative to.
    pub root: PathBuf,
    /// Sorted: skill folders, or Markdown files.
    pub entries: Vec<PathBuf>,
}

/// The places of one kind, and the notice for an untrusted project's
/// files, which are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub places: Vec<Place>,
    pub notice: Option<String>,
}

/// Finds the files of `kind`; `noun` names one in the notice ("skill").
pub async fn find(
    fs: &dyn FileSystem,
    home: &Path,
    project_root: &Path,
    trusted: bool,
    kind: &str,
    noun: &str,
    layout: Layout,
) -> Found {
    let spot = Spot {
        project_root,
        trusted,
        kind,
        noun,
        layout,
    };
    find_in(fs, &spot, &[".riot", ".claude"], vec![home.join(kind)]).await
}

/// Finds skills: the project's `.riot/skills`, `.agents/skills` and
/// `.claude/skills`, then `<riot home>/skills` and the person's
/// `~/.agents/skills` (`user_home`: `$HOME`, when known).
pub async fn find_skills(
    fs: &dyn FileSystem,
    home: &Path,
    user_home: Option<&Path>,
    project_root: &Path,
    trusted: bool,
) -> Found {
    let spot = Spot {
        project_root,
        trusted,
        kind: "skills",
        noun: "skill",
        layout: Layout::SkillFolders,
    };
    let mut user = vec![home.join("skills")];
    user.extend(user_home.map(|h| h.join(".agents").join("skills")));
    find_in(fs, &spot, &[".riot", ".agents", ".claude"], user).await
}

/// What is looked for, and where the project is.
struct Spot<'a> {
    project_root: &'a Path,
    trusted: bool,
    kind: &'a str,
    noun: &'a str,
    layout: Layout,
}

async fn find_in(
    fs: &dyn FileSystem,
    spot: &Spot<'_>,
    project_dirs: &[&str],
    user_roots: Vec<PathBuf>,
) -> Found {
    let mut places = Vec::new();
    let mut untrusted = 0usize;
    let mut untrusted_in: Vec<String> = Vec::new();
    for dir in project_dirs {
        let root = spot.project_root.join(dir).join(spot.kind);
        let entries = list(fs, &root, spot.layout).await;
        if !spot.trusted {
            if !entries.is_empty() {
                untrusted += entries.len();
                untrusted_in.push(format!("{dir}/{}", spot.kind));
            }
            continue;
        }
        places.push(Place {
            origin: Origin::Project,
            root,
            entries,
        });
    }
    for root in user_roots {
        let entries = list(fs, &root, spot.layout).await;
        places.push(Place {
            origin: Origin::User,
            root,
            entries,
        });
    }
    let notice = (untrusted > 0).then(|| {
        format!(
            "{untrusted} project {}(s) in {} were not loaded because this project is not trusted; rerun with --trust-project to use them.",
            spot.noun,
            either(&untrusted_in)
        )
    });
    Found { places, notice }
}

/// `a`, `a or b`, `a, b or c`.
fn either(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The text of an extension file, or a notice saying why it was skipped.
pub async fn read_text(
    fs: &dyn FileSystem,
    file: &Path,
    noun: &str,
    notices: &mut Vec<String>,
) -> Option<String> {
    match fs.read(file).await.map(String::from_utf8) {
        Ok(Ok(text)) => Some(text),
        Ok(Err(_)) => {
            notices.push(format!("{noun} {} skipped: not UTF-8 text", file.display()));
            None
        }
        Err(e) => {
            notices.push(format!("{noun} {} skipped: {e}", file.display()));
            None
        }
    }
}

async fn list(fs: &dyn FileSystem, dir: &Path, layout: Layout) -> Vec<PathBuf> {
    match layout {
        Layout::SkillFolders => skill_folders(fs, dir).await,
        Layout::Markdown { max_depth } => markdown_files(fs, dir, max_depth).await,
    }
}

/// What `path` is, following a symbolic link.
async fn kind_of(fs: &dyn FileSystem, path: &Path, kind: FileKind) -> FileKind {
    match kind {
        FileKind::Symlink => fs.metadata(path).await.map_or(FileKind::Other, |m| m.kind),
        other => other,
    }
}

/// The sub-folders of `dir` that hold a `SKILL.md`, sorted.
async fn skill_folders(fs: &dyn FileSystem, dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs.read_dir(dir).await else {
        return Vec::new();
    };
    let mut folders = Vec::new();
    for entry in entries {
        if kind_of(fs, &entry.path, entry.kind).await == FileKind::Dir
            && fs
                .metadata(&entry.path.join("SKILL.md"))
                .await
                .is_ok_and(|m| m.kind == FileKind::File)
        {
            folders.push(entry.path);
        }
    }
    folders.sort();
    folders
}

/// Every `*.md` file under `dir`, `max_depth` levels deep, sorted.
async fn markdown_files(fs: &dyn FileSystem, dir: &Path, max_depth: usize) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), 1usize)];
    while let Some((d, depth)) = pending.pop() {
        let Ok(entries) = fs.read_dir(&d).await else {
            continue;
        };
        for entry in entries {
            match kind_of(fs, &entry.path, entry.kind).await {
                FileKind::Dir if depth < max_depth => pending.push((entry.path, depth + 1)),
                FileKind::File if entry.path.extension().is_some_and(|e| e == "md") => {
                    files.push(entry.path);
                }
                _ => {}
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests write real files

    use std::sync::Arc;

    use super::*;

    fn write(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[tokio::test]
    async fn places_come_in_precedence_order_and_an_untrusted_project_is_counted() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        write(&project.path().join(".riot/commands/git/pr.md"));
        write(
            &project
                .path()
                .join(".riot/commands/git/deep/er/too-deep.md"),
        );
        write(&project.path().join(".claude/commands/b.md"));
        write(&project.path().join(".claude/commands/notes.txt"));
        write(&home.path().join("commands/u.md"));
        let fs: Arc<dyn FileSystem> = Arc::new(riot_runtime::RealFs);
        let layout = Layout::Markdown { max_depth: 3 };

        let found = find(
            fs.as_ref(),
            home.path(),
            project.path(),
            true,
            "commands",
            "command",
            layout,
        )
        .await;
        assert_eq!(found.notice, None);
        let origins: Vec<Origin> = found.places.iter().map(|p| p.origin).collect();
        assert_eq!(origins, [Origin::Project, Origin::Project, Origin::User]);
        assert_eq!(
            found.places[0].entries,
            [project.path().join(".riot/commands/git/pr.md")]
        );
        assert_eq!(
            found.places[1].entries,
            [project.path().join(".claude/commands/b.md")]
        );
        assert_eq!(found.places[2].entries, [home.path().join("commands/u.md")]);

        let found = find(
            fs.as_ref(),
            home.path(),
            project.path(),
            false,
            "commands",
            "command",
            layout,
        )
        .await;
        assert_eq!(found.places.len(), 1);
        assert_eq!(
            found.notice.as_deref(),
            Some(
                "2 project command(s) in .riot/commands or .claude/commands were not loaded because this project is not trusted; rerun with --trust-project to use them."
            )
        );
    }

    #[tokio::test]
    async fn skills_are_also_found_in_the_cross_agent_folders() {
        let riot_home = tempfile::tempdir().unwrap();
        let user_home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        for dir in [".riot", ".agents", ".claude"] {
            write(&project.path().join(dir).join("skills/s/SKILL.md"));
        }
        write(&riot_home.path().join("skills/r/SKILL.md"));
        write(&user_home.path().join(".agents/skills/a/SKILL.md"));
        // `.agents` holds skills only.
        write(&project.path().join(".agents/commands/c.md"));
        let fs = riot_runtime::RealFs;

        let found = find_skills(
            &fs,
            riot_home.path(),
            Some(user_home.path()),
            project.path(),
            true,
        )
        .await;
        assert_eq!(found.notice, None);
        let places: Vec<(Origin, PathBuf, usize)> = found
            .places
            .iter()
            .map(|p| (p.origin, p.root.clone(), p.entries.len()))
            .collect();
        assert_eq!(
            places,
            vec![
                (Origin::Project, project.path().join(".riot/skills"), 1),
                (Origin::Project, project.path().join(".agents/skills"), 1),
                (Origin::Project, project.path().join(".claude/skills"), 1),
                (Origin::User, riot_home.path().join("skills"), 1),
                (Origin::User, user_home.path().join(".agents/skills"), 1),
            ]
        );

        let found = find_skills(
            &fs,
            riot_home.path(),
            Some(user_home.path()),
            project.path(),
            false,
        )
        .await;
        assert_eq!(found.places.len(), 2, "the person's own folders stay");
        assert_eq!(
            found.notice.as_deref(),
            Some(
                "3 project skill(s) in .riot/skills, .agents/skills or .claude/skills were not loaded because this project is not trusted; rerun with --trust-project to use them."
            )
        );

        let commands = find(
            &fs,
            riot_home.path(),
            project.path(),
            true,
            "commands",
            "command",
            Layout::Markdown { max_depth: 3 },
        )
        .await;
        assert!(commands.places.iter().all(|p| p.entries.is_empty()));
    }
}
