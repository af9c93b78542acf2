//! Side requests (a summary, an image description, a fetched page's
//! answer, the auto-mode classifier's verdict): one request, its reply's
//! text collected, and the usage it cost — also when it failed part way.
//! No caller keeps a meter of its own: the session's cost meter wraps the
//! provider every side request goes through, and is the one count of side
//! usage (`riot exec`'s `side_usage` reads it).

use futures::StreamExt;
use riot_protocol::{AssistantBlock, ModelRequest, Provider, ProviderError, ProviderEvent, Usage};
use tokio_util::sync::CancellationToken;

/// What a side request cost, and its text or why it failed.
#[derive(Debug)]
pub struct SideReply {
    pub result: Result<String, ProviderError>,
    pub usage: Usage,
}

/// Sends `request` to `provider` and collects the text of the reply.
pub async fn side_text(
    provider: &dyn Provider,
    request: ModelRequest,
    cancel: CancellationToken,
) -> SideReply {
    let mut stream = provider.stream(request, cancel);
    let mut text = String::new();
    let mut usage = Usage::default();
    while let Some(event) = stream.next().await {
        match event {
            Ok(ProviderEvent::Block(AssistantBlock::Text { text: t })) => text.push_str(&t),
            Ok(ProviderEvent::Usage(u)) => usage.merge_cumulative(&u),
            Ok(_) => {}
            Err(e) => {
                return SideReply {
                    result: Err(e),
                    usage,
                };
            }
        }
    }
    SideReply {
        result: Ok(text),
        usage,
    }
}
