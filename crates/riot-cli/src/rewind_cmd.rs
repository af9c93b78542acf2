//! `riot sessions checkpoints ID [--json]` and `riot sessions rewind ID
//! --to N [--files-only | --conversation-only] [--force] [--json]` / `--undo`
//! (docs/rewind.md).

use riot_kernel::Kernel;
use riot_kernel::checkpoints::RewindWhat;
use riot_protocol::SessionId;

use crate::out::{errln, outln};
use crate::world;
use riot_kernel::error::EXIT_USAGE;

fn kernel() -> Result<Kernel, world::WorldError> {
    let env = world::environment();
    let home = world::riot_home(&env)?;
    Ok(Kernel::new(world::capabilities(), home))
}

fn fail(command: &str, message: &str, code: i32) -> i32 {
    errln!("riot {command}: {message}");
    code
}

/// `riot sessions checkpoints ID [--json]`: the session's user messages,
/// numbered as `rewind --to` takes them, with the files each turn changed.
pub async fn checkpoints(id: &str, json_out: bool) -> i32 {
    let kernel = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("sessions checkpoints", &e.to_string(), e.exit_code()),
    };
    let points = match kernel.rewind_points(&SessionId::new(id)).await {
        Ok(points) => points,
        Err(e) => return fail("sessions checkpoints", &e.to_string(), e.exit_code()),
    };
    if json_out {
        outln!("{}", serde_json::to_string(&points).unwrap_or_default());
        return 0;
    }
    if points.is_empty() {
        outln!("Session {id} has no user message yet.");
        return 0;
    }
    for p in &points {
        let text: String = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = if text.chars().count() > 70 {
            format!("{}…", text.chars().take(69).collect::<String>())
        } else {
            text
        };
        outln!("{:>3}  {text}", p.number);
        if p.files.is_empty() {
            outln!("     no files changed");
        } else {
            outln!("     changed: {}", p.files.join(", "));
        }
        if p.unfinished > 0 {
            outln!(
                "     {} call(s) were interrupted before their end was recorded",
                p.unfinished
            );
        }
        if !p.in_history {
            outln!("     before a compaction or /clear: rewind with --files-only");
        }
    }
    0
}

/// `riot sessions rewind ID --to N [...]` or `--undo`.
pub async fn rewind(
    id: &str,
    to: Option<u32>,
    files_only: bool,
    conversation_only: bool,
    force: bool,
    undo: bool,
    json_out: bool,
) -> i32 {
    let kernel = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("sessions rewind", &e.to_string(), e.exit_code()),
    };
    let id = SessionId::new(id);
    let what = match (files_only, conversation_only) {
        (true, false) => RewindWhat::FilesOnly,
        (false, true) => RewindWhat::ConversationOnly,
        _ => RewindWhat::Both,
    };
    let outcome = match (to, undo) {
        (None, true) => kernel.undo_rewind(&id, force).await,
        (Some(to), false) => kernel.rewind(&id, to, what, force).await,
        _ => {
            return fail(
                "sessions rewind",
                "give either --to N (the user message to rewind to, from `riot sessions checkpoints ID`) or --undo",
                EXIT_USAGE,
            );
        }
    };
    match outcome {
        Ok(outcome) => {
            if json_out {
                outln!("{}", serde_json::to_string(&outcome).unwrap_or_default());
            } else {
                outln!("{}", outcome.describe(undo));
            }
            0
        }
        Err(e) => fail("sessions rewind", &e.to_string(), e.exit_code()),
    }
}
