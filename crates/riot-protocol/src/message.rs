//! Conversation messages and their content blocks.
//!
//! The canonical shape follows Anthropic's content blocks (docs/design.md §4);
//! every other wire format is an adapter in `riot-providers`. `System`
//! messages are notes for people (warnings, notices) and never reach a
//! provider request (INV-7, checked by [`crate::invariants`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{MessageId, ToolUseId};
use crate::ui::UiPayload;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User(UserMessage),
    Assistant(AssistantMessage),
    System(SystemMessage),
}

impl Message {
    /// The message's id, whatever its role.
    pub fn id(&self) -> &MessageId {
        match self {
            Message::User(m) => &m.id,
            Message::Assistant(m) => &m.id,
            Message::System(m) => &m.id,
        }
    }

    /// A user message holding one text block typed by the person.
    pub fn user_text(id: MessageId, text: impl Into<String>) -> Self {
        Message::User(UserMessage {
            id,
            content: vec![UserBlock::Text { text: text.into() }],
            origin: MessageOrigin::Person,
        })
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Message::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The user message, if this is one.
    pub fn as_user(&self) -> Option<&UserMessage> {
        match self {
            Message::User(m) => Some(m),
            _ => None,
        }
    }
}

/// Where a user-role message came from. Providers send them all the same;
/// faces show them differently and compaction keeps person-typed ones verbatim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageOrigin {
    /// Typed by the person (a prompt or a queued message).
    #[default]
    Person,
    /// Tool results for the preceding assistant message.
    ToolResults,
    /// Riot asking the model to continue after an output-token limit.
    Continuation,
    /// Context Riot appended (memory files, changed files, a new day).
    Context,
    /// A compaction summary standing in for earlier history.
    Summary,
    /// Text produced by a hook (a Stop hook's reason, extra context).
    Hook,
}

impl MessageOrigin {
    fn is_person(&self) -> bool {
        *self == MessageOrigin::Person
    }
}

/// A user-role message: the person's text, tool results, attachments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserMessage {
    pub id: MessageId,
    pub content: Vec<UserBlock>,
    #[serde(default, skip_serializing_if = "MessageOrigin::is_person")]
    pub origin: MessageOrigin,
}

impl UserMessage {
    /// The tool results this message carries, in order.
    pub fn tool_results(&self) -> impl Iterator<Item = (&ToolUseId, bool)> {
        self.content.iter().filter_map(|b| match b {
            UserBlock::ToolResult {
                tool_use_id,
                is_error,
                ..
            } => Some((tool_use_id, *is_error)),
            _ => None,
        })
    }
}

/// A model reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssistantMessage {
    pub id: MessageId,
    pub content: Vec<AssistantBlock>,
    /// The model that produced this reply.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// The person stopped the reply while it streamed; what arrived is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl AssistantMessage {
    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let AssistantBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls of this reply, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = ToolUseRef<'_>> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolUse { id, name, input } => Some(ToolUseRef { id, name, input }),
            _ => None,
        })
    }

    /// Whether the loop goes round again: decided only by the presence of
    /// `tool_use` blocks, never by `stop_reason` (docs/design.md §5.5).
    pub fn has_tool_use(&self) -> bool {
        self.tool_uses().next().is_some()
    }
}

/// A borrowed view of one `tool_use` block.
#[derive(Debug, Clone, Copy)]
pub struct ToolUseRef<'a> {
    pub id: &'a ToolUseId,
    pub name: &'a str,
    pub input: &'a Value,
}

/// A note for people; never sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemMessage {
    pub id: MessageId,
    pub text: String,
    pub level: SystemLevel,
}

/// How prominently a face shows a [`SystemMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SystemLevel {
    Info,
    Warning,
    Error,
}

/// Why the model stopped producing output, as the provider reported it.
/// Informational only: the loop never decides on it (docs/design.md §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    PauseTurn,
    /// A reason this version of Riot does not know.
    #[serde(other)]
    Other,
}

/// A content block of a user-role message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserBlock {
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    ToolResult {
        tool_use_id: ToolUseId,
        content: Vec<ToolResultContent>,
        is_error: bool,
        /// For faces and the transcript only; no provider request contains it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ui: Option<ToolResultUi>,
    },
    /// Text Riot attaches for the model (a memory file, a mentioned file).
    Attachment {
        title: String,
        text: String,
    },
}

/// A content block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantBlock {
    Text {
        text: String,
    },
    /// Visible reasoning. The signature (Anthropic) or encrypted content
    /// (OpenAI Responses) is bound to `model` and is dropped on a switch.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        model: String,
        /// The provider's own id for this reasoning item, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item_id: Option<String>,
    },
    RedactedThinking {
        data: String,
        model: String,
    },
    ToolUse {
        id: ToolUseId,
        name: String,
        input: Value,
    },
    /// A web search the provider ran during the reply (a
    /// [`crate::ServerTool::WebSearch`]): nothing for Riot to run, shown
    /// like WebSearch's results.
    WebSearch {
        /// The provider's id for the search.
        id: String,
        query: String,
        /// What it found; empty when it failed.
        results: Vec<crate::WebResult>,
        /// Why it failed, in the provider's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The provider's own blocks for the search, sent back as they
        /// came on the wire that made them (Anthropic's `server_tool_use`
        /// and `web_search_tool_result`, whose encrypted content lets the
        /// model read the pages again); left out on any other wire.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        replay: Vec<Value>,
    },
}

/// A provider's web search as faces show it: like a finished WebSearch
/// call, with the same `WebResults` payload.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchShown {
    /// The provider's id for the search (the call's id in faces).
    pub id: String,
    /// What the result says: the pages, or why the search failed.
    pub text: String,
    pub failed: bool,
    /// The call's line and the pages, as a tool result carries them.
    pub ui: ToolResultUi,
}

impl AssistantBlock {
    /// How faces show this block when it is a provider's web search.
    pub fn search_shown(&self) -> Option<SearchShown> {
        let AssistantBlock::WebSearch {
            id,
            query,
            results,
            error,
            ..
        } = self
        else {
            return None;
        };
        let text = match error {
            Some(why) => format!("The web search failed: {why}."),
            None if results.is_empty() => format!("Web search for \"{query}\": no results."),
            None => {
                let mut text = format!("Web search results for \"{query}\":\n");
                for (i, r) in results.iter().enumerate() {
                    let title = if r.title.is_empty() { &r.url } else { &r.title };
                    text.push_str(&format!("\n{}. {title}\n   {}\n", i + 1, r.url));
                }
                text
            }
        };
        Some(SearchShown {
            id: id.clone(),
            text,
            failed: error.is_some(),
            ui: ToolResultUi {
                describe: format!("Search the web for \"{query}\""),
                // A failed search shows its reason, not an empty list.
                payload: error.is_none().then(|| crate::UiPayload::WebResults {
                    query: query.clone(),
                    results: results.clone(),
                }),
                duration_ms: 0,
            },
        })
    }
}

/// Content of a tool result as the model reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolResultContent {
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    /// A PDF holding the pages a Read returned (`application/pdf`). A model
    /// that cannot take documents, or a request already at its document
    /// limits, gets `text` in its place: the same pages as extracted text.
    Document {
        source: ImageSource,
        /// How many pages the PDF holds.
        pages: u32,
        text: String,
    },
}

impl ToolResultContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResultContent::Text { text: text.into() }
    }

    /// A document block: a PDF (base64 `data`) of `pages` pages, with the
    /// same pages as `text` for models that cannot take it.
    pub fn pdf(data: impl Into<String>, pages: u32, text: impl Into<String>) -> Self {
        ToolResultContent::Document {
            source: ImageSource {
                media_type: "application/pdf".to_owned(),
                data: data.into(),
            },
            pages,
            text: text.into(),
        }
    }
}

/// Inline file data: an image, or the PDF of a document block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageSource {
    /// e.g. `image/png`, or `application/pdf` for a document.
    pub media_type: String,
    /// Base64 (standard alphabet, padded).
    pub data: String,
}

/// What faces need to redraw a finished tool call when a session is
/// reloaded; kept in the transcript, stripped from every provider request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResultUi {
    pub describe: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<UiPayload>,
    pub duration_ms: u64,
}
