//! The web tools of a session (docs/web.md): WebFetch when the kernel has a
//! network, its `prompt` answered by the session's small model.

use std::sync::Arc;

use riot_protocol::DynTool;
use riot_tools::tools::{PageQuestion, WebFetch, WebFetchLimits};

/// The web tools a session declares, in order, after the other session
/// tools: none without a network.
pub fn web_tools(
    web: &Arc<dyn riot_protocol::Web>,
    question: Option<Arc<dyn PageQuestion>>,
) -> Vec<Arc<dyn DynTool>> {
    if !web.available() {
        return Vec::new();
    }
    vec![Arc::new(WebFetch::new(WebFetchLimits::default(), question))]
}
