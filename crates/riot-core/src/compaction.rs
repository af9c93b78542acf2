//! The context manager (docs/design.md §10): Riot's [`Compactor`].
//!
//! Layers, cheapest first (spilling big results to files happens in the
//! scheduler before results reach the history):
//!
//! - **clear** old tool results to a placeholder, keeping the most recent
//!   few — only when the provider's cache has gone cold (no request for
//!   longer than the cache lifetime, by the injected clock), because
//!   rewriting history breaks the cached prefix;
//! - **summarize** with the model: text only, an analysis that is dropped
//!   and a summary with fixed sections; the person's messages are kept
//!   verbatim by Riot itself, the working set (recently read files, …) is
//!   re-attached, and the model is told to continue where it left off.
//!
//! Compaction never breaks tool pairing: results are replaced, messages are
//! not dropped from the middle, and the summary replaces the whole history.

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{
    AssistantBlock, CacheHints, CompactionStrategy, Message, MessageId, MessageOrigin,
    ModelRequest, Provider, ProviderErrorKind, ToolResultContent, UserBlock, UserMessage,
};
use tokio_util::sync::CancellationToken;

use crate::context::{self, rough_tokens, text_tokens};
use crate::deps::{CompactError, CompactRequest, CompactTrigger, Compaction, Compactor};
use crate::request::{merge_user_runs, strip_for_request};

/// The placeholder an old tool result is replaced with.
pub const CLEARED_RESULT: &str =
    "[Old tool result cleared to save context. Run the tool again if you need it.]";
/// Tool results kept intact when clearing.
pub const KEEP_RECENT_RESULTS: usize = 3;
/// Idle time after which the provider cache is assumed cold (60 min).
pub const CACHE_COLD_AFTER_MS: u64 = 60 * 60 * 1000;
/// Clearing while cold is worth it once old results hold this many tokens.
pub const CLEAR_WORTHWHILE_TOKENS: u64 = 20_000;
/// Attempts at a summary request that itself overflows (each drops the
/// oldest quarter of the history it summarizes).
pub const SUMMARY_ATTEMPTS: usize = 3;

const SUMMARY_INSTRUCTIONS: &str = "Stop working on the task for a moment: the conversation is about to run out of context and will be replaced by your summary. Do not call any tools. Reply with text only, in exactly this form:

<analysis>
Go through the conversation in order and note what matters for continuing the work.
</analysis>
<summary>
1. Intent: what the user asked for, in full.
2. Key concepts: technologies, conventions and decisions that matter.
3. Files and code: every file read or changed, why, and the important snippets.
4. Errors and fixes: what went wrong and how it was resolved.
5. Pending tasks: what is still to do.
6. Current work: exactly what was being done right before this summary.
7. Next step: the next action, quoting the user's latest request where relevant.
</summary>";

const CONTINUE_PREFIX: &str = "This session continues from an earlier conversation that ran out of context. Your summary of it:";

const CONTINUE_SUFFIX: &str = "Continue from where you left off without asking the user anything further: take the next step.";

/// What the working set looks like after a summary: recently read files
/// re-read from disk, the todo list, loaded skills. Implemented by the
/// kernel, which knows the session's files.
#[async_trait]
pub trait WorkingSet: Send + Sync + std::fmt::Debug {
    /// The blocks to re-attach, at most `budget_chars` characters of
    /// file content ([`working_set_chars`]).
    async fn restore(&self, budget_chars: usize) -> Vec<UserBlock>;
}

/// The characters of file content a summary re-attaches: an eighth of the
/// window (at four characters a token), at most 200,000.
pub fn working_set_chars(window: u64) -> usize {
    usize::try_from(window / 2).map_or(200_000, |c| c.min(200_000))
}

/// No working set to restore.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWorkingSet;

#[async_trait]
impl WorkingSet for NoWorkingSet {
    async fn restore(&self, _budget_chars: usize) -> Vec<UserBlock> {
        Vec::new()
    }
}

/// Riot's compactor.
#[derive(Debug)]
pub struct ContextManager {
    provider: Arc<dyn Provider>,
    working_set: Arc<dyn WorkingSet>,
}

impl ContextManager {
    /// Summaries are requested from `provider` (as side requests).
    pub fn new(provider: Arc<dyn Provider>, working_set: Arc<dyn WorkingSet>) -> Self {
        Self {
            provider,
            working_set,
        }
    }

    async fn summarize(
        &self,
        messages: &[Message],
        request: &CompactRequest,
    ) -> Result<Compaction, CompactError> {
        let before = request.estimate;
        let mut start = 0;
        let mut last_error = String::new();
        for _ in 0..SUMMARY_ATTEMPTS {
            let slice = &messages[start..];
            match self.summary_text(slice, request).await {
                Ok(summary) => {
                    let budget = working_set_chars(request.capabilities.context_window);
                    let out = self.continuation(messages, &summary, budget).await;
                    let after = context::estimate(&request.system, &request.tools, &out, None);
                    return Ok(Compaction {
                        messages: out,
                        before_tokens: before,
                        after_tokens: after,
                        strategy: CompactionStrategy::Summary,
                    });
                }
                Err((kind, message)) => {
                    last_error = message;
                    if kind != ProviderErrorKind::ContextOverflow {
                        break;
                    }
                    // The summary request itself overflowed: summarize less.
                    match later_start(messages, start) {
                        Some(next) => start = next,
                        None => break,
                    }
                }
            }
        }
        Err(CompactError(format!(
            "the summary request failed ({last_error})"
        )))
    }

    async fn summary_text(
        &self,
        messages: &[Message],
        request: &CompactRequest,
    ) -> Result<String, (ProviderErrorKind, String)> {
        let mut instructions = SUMMARY_INSTRUCTIONS.to_owned();
        if let Some(focus) = request.focus.as_deref().filter(|f| !f.trim().is_empty()) {
            instructions.push_str(&format!(
                "\n\nThe user asked the summary to focus on: {focus}"
            ));
        }
        let max_tokens = context::request_max_tokens(&request.capabilities);
        let window = request.capabilities.context_window;
        // The summary request shares the cached prefix of normal requests
        // (system, tools, history) when that fits with room for the
        // summary; in a small window, or when it does not fit, it is sent
        // without the declarations and budgeted on its own.
        let shared_fits = window > context::SMALL_WINDOW
            && request.estimate + text_tokens(&instructions) + u64::from(max_tokens) <= window;
        let (messages, tools, server_tools) = if shared_fits {
            let history = strip_for_request(messages, &request.model);
            // The history usually ends with a user message (results or a
            // prompt): the instructions join it, so roles still alternate.
            let ask = Message::User(UserMessage {
                id: MessageId::new("compaction_request"),
                content: vec![UserBlock::Text { text: instructions }],
                origin: MessageOrigin::Context,
            });
            (
                merge_user_runs(history.into_iter().chain([ask])),
                request.tools.clone(),
                request.server_tools.clone(),
            )
        } else {
            let fixed = text_tokens(&request.system.stable)
                + text_tokens(&request.system.session)
                + text_tokens(&instructions)
                + u64::from(max_tokens);
            let budget = window.saturating_sub(fixed) * 7 / 8;
            let text = format!(
                "{}\n\n{instructions}",
                lean_transcript(
                    messages,
                    usize::try_from(budget.saturating_mul(4)).unwrap_or(usize::MAX)
                )
            );
            let ask = Message::User(UserMessage {
                id: MessageId::new("compaction_request"),
                content: vec![UserBlock::Text { text }],
                origin: MessageOrigin::Context,
            });
            (vec![ask], Vec::new(), Vec::new())
        };
        let model_request = ModelRequest {
            model: request.model.clone(),
            system: request.system.clone(),
            messages,
            tools,
            server_tools,
            max_tokens,
            thinking: None,
            cache: CacheHints {
                session_key: request.session_key.clone(),
                message_breakpoint: true,
                long_ttl: false,
            },
            stream: true,
        };
        let reply = crate::side::side_text(
            self.provider.as_ref(),
            model_request,
            CancellationToken::new(),
        )
        .await;
        let text = reply.result.map_err(|e| (e.kind, e.message))?;
        let summary = extract_summary(&text);
        if summary.trim().is_empty() {
            return Err((
                ProviderErrorKind::Malformed,
                "the model returned no summary".into(),
            ));
        }
        Ok(summary)
    }

    /// The history that replaces everything: one user message with the
    /// summary, each of the person's messages verbatim (also those an
    /// earlier summary carried), the instruction to continue, and the
    /// working set.
    async fn continuation(
        &self,
        messages: &[Message],
        summary: &str,
        working_set_chars: usize,
    ) -> Vec<Message> {
        let mut content = vec![UserBlock::Text {
            text: format!(
                "{CONTINUE_PREFIX}\n\n<summary>\n{}\n</summary>",
                summary.trim()
            ),
        }];
        content.extend(
            persons_words(messages)
                .into_iter()
                .map(|said| UserBlock::Text {
                    text: format!("{VERBATIM_MARK}{said}"),
                }),
        );
        content.push(UserBlock::Text {
            text: CONTINUE_SUFFIX.to_owned(),
        });
        content.extend(self.working_set.restore(working_set_chars).await);
        vec![Message::User(UserMessage {
            id: MessageId::new(format!("summary_{}", messages.len())),
            content,
            origin: MessageOrigin::Summary,
        })]
    }
}

/// Characters of one recent tool result a lean summary request keeps.
const LEAN_RESULT_CHARS: usize = 2_000;

/// The history as one text for a summary request that declares no tools
/// (a small window): tool calls and results written out, results older
/// than the last [`KEEP_RECENT_RESULTS`] cleared and recent ones cut to
/// [`LEAN_RESULT_CHARS`], and — when it is still longer than
/// `budget_chars` — the oldest entries after the first left out, with a
/// line saying how many.
fn lean_transcript(messages: &[Message], budget_chars: usize) -> String {
    let cleared = clear_old_results(messages, KEEP_RECENT_RESULTS);
    let mut entries: Vec<String> = Vec::new();
    for message in &cleared {
        match message {
            Message::System(_) => {}
            Message::User(u) => {
                for block in &u.content {
                    let entry = match block {
                        UserBlock::Text { text } if u.origin == MessageOrigin::Summary => {
                            format!("[earlier summary and context]\n{text}")
                        }
                        UserBlock::Text { text } => format!("[user]\n{text}"),
                        UserBlock::Image { .. } => "[user]\n(an image)".to_owned(),
                        UserBlock::Attachment { title, text } => {
                            format!("[user attached {title}]\n{}", cut(text, LEAN_RESULT_CHARS))
                        }
                        UserBlock::ToolResult {
                            content, is_error, ..
                        } => {
                            let text: Vec<&str> = content
                                .iter()
                                .map(|c| match c {
                                    ToolResultContent::Text { text }
                                    | ToolResultContent::Document { text, .. } => text.as_str(),
                                    ToolResultContent::Image { .. } => "(an image)",
                                })
                                .collect();
                            let label = if *is_error {
                                "tool error"
                            } else {
                                "tool result"
                            };
                            format!("[{label}]\n{}", cut(&text.join("\n"), LEAN_RESULT_CHARS))
                        }
                    };
                    entries.push(entry);
                }
            }
            Message::Assistant(a) => {
                for block in &a.content {
                    match block {
                        AssistantBlock::Text { text } if !text.trim().is_empty() => {
                            entries.push(format!("[assistant]\n{text}"));
                        }
                        AssistantBlock::ToolUse { name, input, .. } => {
                            entries.push(format!("[assistant called {name}]\n{input}"));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    // Leave out the oldest entries after the first (the task as first
    // stated) until the rest fits.
    let size = |e: &[String]| e.iter().map(|x| x.len() + 2).sum::<usize>();
    let mut left_out = 0;
    while entries.len() > 2 && size(&entries) > budget_chars {
        entries.remove(1);
        left_out += 1;
    }
    if left_out > 0 {
        entries.insert(
            1,
            format!("[{left_out} older entries left out to fit the context window]"),
        );
    }
    let mut body = entries.join("\n\n");
    if body.len() > budget_chars {
        body = cut(&body, budget_chars);
    }
    format!(
        "The conversation so far, written out (tool calls and their results as text):\n<transcript>\n{body}\n</transcript>"
    )
}

/// `text` cut to at most `max` bytes on a character boundary, saying so.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… (cut)", &text[..end])
}

/// Marks a person's message carried verbatim through a summary.
pub const VERBATIM_MARK: &str = "Earlier message from the user, verbatim:\n";

/// Everything the person typed, in order: their own messages, and those an
/// earlier summary carried verbatim (so a second compaction keeps them).
fn persons_words(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for u in messages.iter().filter_map(Message::as_user) {
        for block in &u.content {
            let UserBlock::Text { text } = block else {
                continue;
            };
            match u.origin {
                MessageOrigin::Person => out.push(text.clone()),
                MessageOrigin::Summary => {
                    if let Some(said) = text.strip_prefix(VERBATIM_MARK) {
                        out.push(said.to_owned());
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The summary part of a reply: inside `<summary>`, else the whole text
/// without the `<analysis>` section.
pub fn extract_summary(text: &str) -> String {
    if let Some(start) = text.find("<summary>") {
        let rest = &text[start + "<summary>".len()..];
        let end = rest.find("</summary>").unwrap_or(rest.len());
        return rest[..end].trim().to_owned();
    }
    match (text.find("<analysis>"), text.find("</analysis>")) {
        (Some(a), Some(b)) if b > a => {
            format!("{}{}", &text[..a], &text[b + "</analysis>".len()..])
                .trim()
                .to_owned()
        }
        _ => text.trim().to_owned(),
    }
}

/// The next start index at least a quarter further that begins an
/// exchange (a user message that is not tool results), so the slice keeps
/// pairing. `None` if there is none.
fn later_start(messages: &[Message], start: usize) -> Option<usize> {
    let remaining = messages.len() - start;
    let min = start + (remaining / 4).max(1);
    (min..messages.len()).find(
        |&i| matches!(&messages[i], Message::User(u) if u.origin != MessageOrigin::ToolResults),
    )
}

/// Tool results older than the last `keep`, and their rough tokens.
fn clearable(messages: &[Message], keep: usize) -> (usize, u64) {
    let results: Vec<u64> = messages
        .iter()
        .filter_map(Message::as_user)
        .flat_map(|u| u.content.iter())
        .filter_map(|b| match b {
            UserBlock::ToolResult { content, .. } if !is_cleared(content) => Some(
                content
                    .iter()
                    .map(|c| match c {
                        ToolResultContent::Text { text } => (text.len() as u64).div_ceil(4),
                        ToolResultContent::Image { .. } => context::IMAGE_TOKENS,
                        ToolResultContent::Document { pages, text, .. } => {
                            context::document_tokens(*pages, text)
                        }
                    })
                    .sum(),
            ),
            _ => None,
        })
        .collect();
    let old = results.len().saturating_sub(keep);
    (old, results[..old].iter().sum())
}

fn is_cleared(content: &[ToolResultContent]) -> bool {
    matches!(content, [ToolResultContent::Text { text }] if text == CLEARED_RESULT)
}

/// Replaces all but the last `keep` tool results with the placeholder.
pub fn clear_old_results(messages: &[Message], keep: usize) -> Vec<Message> {
    let total = messages
        .iter()
        .filter_map(Message::as_user)
        .flat_map(|u| u.tool_results())
        .count();
    let cutoff = total.saturating_sub(keep);
    let mut seen = 0;
    messages
        .iter()
        .map(|m| match m {
            Message::User(u) => {
                let mut u = u.clone();
                for block in &mut u.content {
                    if let UserBlock::ToolResult { content, .. } = block {
                        if seen < cutoff {
                            *content = vec![ToolResultContent::text(CLEARED_RESULT)];
                        }
                        seen += 1;
                    }
                }
                Message::User(u)
            }
            other => other.clone(),
        })
        .collect()
}

fn cache_cold(request: &CompactRequest) -> bool {
    request
        .last_request_ms
        .is_some_and(|last| request.now_ms.saturating_sub(last) > CACHE_COLD_AFTER_MS)
}

#[async_trait]
impl Compactor for ContextManager {
    fn plan(&self, messages: &[Message], request: &CompactRequest) -> Option<CompactionStrategy> {
        let over = request.estimate > context::threshold(&request.capabilities);
        let (old_results, old_tokens) = clearable(messages, KEEP_RECENT_RESULTS);
        let cold = cache_cold(request);
        match request.trigger {
            CompactTrigger::Reactive => Some(CompactionStrategy::Summary),
            CompactTrigger::Proactive if request.focus.is_some() => {
                Some(CompactionStrategy::Summary)
            }
            CompactTrigger::Proactive if over => {
                // Clearing is enough only if it frees what is needed, and
                // only rewrites history once the cache is cold anyway.
                let threshold = context::threshold(&request.capabilities);
                if cold && old_results > 0 && request.estimate - old_tokens <= threshold {
                    Some(CompactionStrategy::ClearToolResults)
                } else {
                    Some(CompactionStrategy::Summary)
                }
            }
            CompactTrigger::Proactive => (cold && old_tokens >= CLEAR_WORTHWHILE_TOKENS)
                .then_some(CompactionStrategy::ClearToolResults),
        }
    }

    async fn compact(
        &self,
        messages: &[Message],
        request: &CompactRequest,
        strategy: CompactionStrategy,
    ) -> Result<Compaction, CompactError> {
        match strategy {
            CompactionStrategy::ClearToolResults => {
                let out = clear_old_results(messages, KEEP_RECENT_RESULTS);
                let before = request.estimate;
                let freed: u64 = messages.iter().map(rough_tokens).sum::<u64>()
                    - out.iter().map(rough_tokens).sum::<u64>();
                Ok(Compaction {
                    messages: out,
                    before_tokens: before,
                    after_tokens: before.saturating_sub(freed),
                    strategy,
                })
            }
            CompactionStrategy::Summary => self.summarize(messages, request).await,
        }
    }
}

#[cfg(test)]
mod tests;
