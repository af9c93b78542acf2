#![allow(clippy::disallowed_methods)] // reads the real `/proc`

//! What a terminal's foreground process group runs, as `/proc` shows it.

use std::path::Path;

use riot_protocol::TerminalForeground;

/// The processes of process group `group` as `proc` (a `/proc`) shows
/// them: each one's command name and its executable's file name, without
/// repeats, in pid order. [`TerminalForeground::Unknown`] when none could
/// be read.
pub(super) fn group_programs(proc: &Path, group: i32) -> TerminalForeground {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return TerminalForeground::Unknown;
    };
    // In pid order: the group's leader, when alive, comes first.
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    let mut names: Vec<String> = Vec::new();
    for pid in pids {
        let dir = proc.join(pid.to_string());
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`: the command name may hold spaces
        // and parentheses, so the fields start after the last `)`.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let Some((_, comm)) = head.split_once('(') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // A zombie has ended; it reads nothing.
        let in_group = fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(group);
        if !in_group || fields.first() == Some(&"Z") {
            continue;
        }
        let exe = std::fs::read_link(dir.join("exe")).ok().and_then(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            // A replaced executable reads `name (deleted)`.
            Some(name.trim_end_matches(" (deleted)").to_owned())
        });
        for name in std::iter::once(comm.to_owned()).chain(exe) {
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    if names.is_empty() {
        TerminalForeground::Unknown
    } else {
        TerminalForeground::Programs(names)
    }
}
