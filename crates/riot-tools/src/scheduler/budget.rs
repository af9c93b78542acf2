//! Result budgets (ARCHITECTURE §6.1, §1.4): an over-budget result is
//! written in full to a file and the model gets the path, a head and tail
//! preview, and the statement of what was cut.

use riot_protocol::{ResultBudget, ToolCallResult, ToolEnv, ToolResultContent, ToolUseId};

/// Characters of preview at each end, at most.
pub const PREVIEW_CHARS: usize = 2_000;

fn text_chars(content: &[ToolResultContent]) -> usize {
    content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text { text } => text.chars().count(),
            ToolResultContent::Image { .. } => 0,
        })
        .sum()
}

/// Applies `budget` to a result's content.
pub async fn apply(
    env: &ToolEnv,
    id: &ToolUseId,
    budget: ResultBudget,
    content: Vec<ToolResultContent>,
) -> Vec<ToolResultContent> {
    let ResultBudget::Limit(limit) = budget else {
        return content;
    };
    let total = text_chars(&content);
    if total <= limit {
        return content;
    }
    let full: String = content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Text { text } => Some(text.as_str()),
            ToolResultContent::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let preview = PREVIEW_CHARS.min(limit / 4).max(1);
    let head: String = full.chars().take(preview).collect();
    let tail: String = {
        let skip = total.saturating_sub(preview);
        full.chars().skip(skip.max(preview)).collect()
    };
    let omitted = total - head.chars().count() - tail.chars().count();
    let file = env
        .spill_dir
        .join(format!("{}.txt", safe_name(id.as_str())));
    let saved = async {
        env.fs.create_dir_all(&env.spill_dir).await?;
        env.fs.write_atomic(&file, full.as_bytes()).await
    }
    .await;
    let where_ = match saved {
        Ok(()) => format!(
            "so it was saved in full to {path}. To see the rest, Read {path} with offset/limit or Grep it",
            path = file.display()
        ),
        Err(e) => format!("and saving it to a file failed ({e}), so only this preview exists"),
    };
    let text = format!(
        "This result is {total} characters, over the {limit}-character budget, {where_}. Shown below: the first {h} and the last {t} characters; {omitted} characters in between are not shown.\n\n--- first {h} characters ---\n{head}\n[… {omitted} characters omitted …]\n--- last {t} characters ---\n{tail}",
        h = head.chars().count(),
        t = tail.chars().count(),
    );
    let mut out = vec![ToolResultContent::text(text)];
    out.extend(
        content
            .into_iter()
            .filter(|c| matches!(c, ToolResultContent::Image { .. })),
    );
    out
}

/// The aggregate budget of one assistant message's results
/// (ARCHITECTURE §10, layer 2): parallel calls that each fit their own
/// budget can still flood the context together.
pub const MESSAGE_BUDGET_CHARS: usize = 200_000;

/// Tracks what one message's results have used; results past the
/// aggregate are spilled like an over-budget result, with what is left
/// (at least a preview's worth) as their limit.
#[derive(Debug)]
pub struct MessageBudget {
    limit: usize,
    used: usize,
}

impl MessageBudget {
    pub fn new(limit: usize) -> Self {
        Self { limit, used: 0 }
    }

    /// Lets a result through, spilling it if it does not fit what is left.
    pub async fn admit(&mut self, env: &ToolEnv, mut result: ToolCallResult) -> ToolCallResult {
        let size = text_chars(&result.content);
        let left = self.limit.saturating_sub(self.used);
        if size > left {
            let limit = left.max(4 * PREVIEW_CHARS);
            let content = std::mem::take(&mut result.content);
            result.content = apply(
                env,
                &result.tool_use_id,
                ResultBudget::Limit(limit),
                content,
            )
            .await;
        }
        self.used += text_chars(&result.content);
        result
    }
}

/// Tool-use ids come from providers; keep only filename-safe characters.
fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
