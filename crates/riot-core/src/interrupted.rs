//! What the loop says for a tool call that never ran or was stopped: one
//! text shared by the loop (orphans, stops), the invariant check that
//! repairs a runner's missing results, and the scripted doubles.

use riot_protocol::{ToolResultContent, ToolUseId, UserBlock};

/// Text of the synthesized result for a call that never ran or was stopped.
pub const INTERRUPTED_RESULT: &str = "Interrupted by user: this tool call did not complete.";

/// The `tool_result` block that answers `tool_use_id` with
/// [`INTERRUPTED_RESULT`], as an error.
pub fn interrupted_result(tool_use_id: ToolUseId) -> UserBlock {
    UserBlock::ToolResult {
        tool_use_id,
        content: vec![ToolResultContent::text(INTERRUPTED_RESULT)],
        is_error: true,
        ui: None,
    }
}
