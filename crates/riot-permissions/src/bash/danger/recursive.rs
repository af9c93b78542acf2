//! Recursive readers (`grep -r`, `rg --hidden`, `ag -u`): the directory
//! trees they print, handed to the policy to look for secret files in.

use crate::bash::pending::PendingTree;
use crate::bash::resolve::Scope;
use crate::bash::{CommandAnalysis, Context, Word};
use crate::paths;

/// `grep -r`, `rg --hidden`/`-uu`, `ag -u` print every file under a
/// directory: the policy looks for secret files there.
pub(super) fn recursive_reader(
    name: &str,
    args: &[Word],
    text: &str,
    analysis: &mut CommandAnalysis,
    scope: &Scope,
    ctx: &Context,
) {
    let values: Vec<&str> = args.iter().filter_map(|w| w.resolved.as_deref()).collect();
    // Letters of a short-flag bundle up to the first that takes a value
    // (`rg -trust` is `-t rust`, no `-u`).
    let value_letters: &[char] = match name {
        "rg" => &[
            't', 'T', 'g', 'e', 'f', 'm', 'A', 'B', 'C', 'j', 'M', 'r', 'E', 'd',
        ],
        _ => &['e', 'f', 'm', 'A', 'B', 'C', 'd', 'D'],
    };
    let short_has = |v: &str, letters: &[char]| {
        if !v.starts_with('-') || v.starts_with("--") {
            return false;
        }
        for c in v[1..].chars() {
            if letters.contains(&c) {
                return true;
            }
            if value_letters.contains(&c) {
                return false;
            }
        }
        false
    };
    let recursive = match name {
        "grep" | "egrep" | "fgrep" => {
            values.iter().any(|v| {
                short_has(v, &['r', 'R'])
                    || matches!(
                        *v,
                        "--recursive" | "--dereference-recursive" | "--directories=recurse"
                    )
            }) || values
                .windows(2)
                .any(|w| matches!(w[0], "-d" | "--directories") && w[1] == "recurse")
        }
        "rg" => values.iter().any(|v| {
            short_has(v, &['u', '.'])
                || *v == "--hidden"
                || v.starts_with("--no-ignore")
                || *v == "--unrestricted"
        }),
        "ag" => values.iter().any(|v| {
            short_has(v, &['u', 'U'])
                || matches!(*v, "--unrestricted" | "--hidden" | "--skip-vcs-ignores")
        }),
        _ => false,
    };
    if !recursive {
        return;
    }
    // Name filters that keep to files no secret file is named like.
    let mut filters = Vec::new();
    let mut it = values.iter();
    let mut positional = Vec::new();
    let mut pattern_given = false;
    while let Some(v) = it.next() {
        match *v {
            "-e" | "--regexp" | "-f" | "--file" => {
                pattern_given = true;
                it.next();
            }
            _ if v.starts_with("--regexp=") || v.starts_with("--file=") => pattern_given = true,
            _ if (v.starts_with("-e") || v.starts_with("-f")) && v.len() > 2 => {
                pattern_given = true;
            }
            "-g" | "--glob" | "--include" => {
                if let Some(f) = it.next() {
                    filters.push(f.to_string());
                }
            }
            _ if v.starts_with("--include=") || v.starts_with("--glob=") => {
                filters.push(v.split_once('=').map_or("", |(_, f)| f).to_owned());
            }
            "-t"
            | "-T"
            | "--type"
            | "--type-not"
            | "-m"
            | "-A"
            | "-B"
            | "-C"
            | "--max-count"
            | "--context"
            | "-d"
            | "--directories"
            | "--exclude"
            | "--exclude-dir"
            | "-G"
            | "--file-search-regex" => {
                it.next();
            }
            _ if v.starts_with('-') => {}
            _ => positional.push(*v),
        }
    }
    let protect = crate::bash::pending::Protect {
        home: ctx.home.as_deref(),
        riot_home: ctx.riot_home.as_deref(),
    };
    if !filters.is_empty()
        && filters.iter().all(|f| {
            !f.starts_with('!')
                && crate::bash::pending::could_reach_by_name(f, &protect)
                    .is_none_or(|s| !s.applies_to_reads())
        })
    {
        return;
    }
    let roots: Vec<&str> = if pattern_given {
        positional
    } else {
        positional.into_iter().skip(1).collect()
    };
    let roots = if roots.is_empty() { vec!["."] } else { roots };
    for root in roots {
        let absolute: Vec<String> = if root.starts_with('/') {
            vec![root.to_owned()]
        } else {
            scope
                .cwds
                .iter()
                .map(|cwd| match cwd {
                    Some(c) => paths::normalize(&c.join(root))
                        .to_string_lossy()
                        .into_owned(),
                    None => root.to_owned(),
                })
                .collect()
        };
        for root in absolute {
            analysis.pending_trees.push(PendingTree {
                command: text.to_owned(),
                root,
            });
        }
    }
}
