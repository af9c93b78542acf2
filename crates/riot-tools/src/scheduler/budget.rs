//! Result budgets (docs/design.md §6.1, §1.4): an over-budget result is
//! written in full to a file and the model gets the path, a head and tail
//! preview, and the statement of what was cut.

use riot_protocol::{ResultBudget, ToolCallResult, ToolEnv, ToolResultContent, ToolUseId};

/// Characters of preview at each end, at most.
pub const PREVIEW_CHARS: usize = 2_000;
/// A spill file holds at most this many bytes: the result's start, cut at
/// a character boundary. A tool that returns hundreds of megabytes does
/// not get them written to disk again.
pub const SPILL_MAX_BYTES: usize = 1024 * 1024;

fn text_chars(content: &[ToolResultContent]) -> usize {
    content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                text.chars().count()
            }
            ToolResultContent::Image { .. } => 0,
        })
        .sum()
}

/// The text blocks (a document's text among them), as they are joined (by
/// `\n`) for the spill file.
fn texts(content: &[ToolResultContent]) -> impl DoubleEndedIterator<Item = &str> {
    content.iter().filter_map(|c| match c {
        ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
            Some(text.as_str())
        }
        ToolResultContent::Image { .. } => None,
    })
}

/// The joined text's start, at most `max_bytes` long (cut at a character
/// boundary), without joining the rest.
fn joined_head(content: &[ToolResultContent], max_bytes: usize) -> String {
    let mut out = String::new();
    for (i, text) in texts(content).enumerate() {
        let pieces = if i > 0 { ["\n", text] } else { ["", text] };
        for piece in pieces {
            let room = max_bytes - out.len();
            if piece.len() <= room {
                out.push_str(piece);
            } else {
                let mut cut = room;
                while !piece.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.push_str(&piece[..cut]);
                return out;
            }
        }
    }
    out
}

/// The joined text's last `n` characters, without joining the rest.
fn joined_tail(content: &[ToolResultContent], n: usize) -> String {
    let blocks: Vec<&str> = texts(content).collect();
    let mut parts: Vec<&str> = Vec::new();
    let mut left = n;
    'blocks: for (i, text) in blocks.iter().enumerate().rev() {
        let pieces = if i > 0 { [*text, "\n"] } else { [*text, ""] };
        for piece in pieces {
            if left == 0 {
                break 'blocks;
            }
            let count = piece.chars().count();
            if count <= left {
                parts.push(piece);
                left -= count;
            } else {
                let start = piece
                    .char_indices()
                    .nth(count - left)
                    .map_or(piece.len(), |(at, _)| at);
                parts.push(&piece[start..]);
                left = 0;
            }
        }
    }
    parts.iter().rev().copied().collect()
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
    // The file joins the text blocks with `\n`.
    let joined_chars = total + texts(&content).count().saturating_sub(1);
    let saved_text = joined_head(&content, SPILL_MAX_BYTES);
    let saved_chars = saved_text.chars().count();
    let preview = PREVIEW_CHARS.min(limit / 4).max(1);
    let head: String = saved_text.chars().take(preview).collect();
    let head_chars = head.chars().count();
    let tail = joined_tail(&content, preview.min(total - head_chars));
    let tail_chars = tail.chars().count();
    let omitted = total - head_chars - tail_chars;
    let file = env
        .spill_dir
        .join(format!("{}.txt", safe_name(id.as_str())));
    let saved = async {
        env.fs.create_dir_all(&env.spill_dir).await?;
        env.fs.write_atomic(&file, saved_text.as_bytes()).await
    }
    .await;
    drop(saved_text);
    let where_ = match saved {
        Ok(()) if saved_chars == joined_chars => format!(
            "so it was saved in full to {path}. To see the rest, Read {path} with offset/limit or Grep it",
            path = file.display()
        ),
        Ok(()) => format!(
            "so its first {saved_chars} characters were saved to {path} (a spill file holds at most {SPILL_MAX_BYTES} bytes; the other {lost} characters were not kept). To see more, Read {path} with offset/limit or Grep it",
            path = file.display(),
            lost = joined_chars - saved_chars,
        ),
        Err(e) => format!("and saving it to a file failed ({e}), so only this preview exists"),
    };
    let text = format!(
        "This result is {total} characters, over the {limit}-character budget, {where_}. Shown below: the first {head_chars} and the last {tail_chars} characters; {omitted} characters in between are not shown.\n\n--- first {head_chars} characters ---\n{head}\n[… {omitted} characters omitted …]\n--- last {tail_chars} characters ---\n{tail}",
    );
    // Images stay; a document goes with its text, which the preview and
    // the spill file now stand for.
    let mut out = vec![ToolResultContent::text(text)];
    out.extend(
        content
            .into_iter()
            .filter(|c| matches!(c, ToolResultContent::Image { .. })),
    );
    out
}

/// The aggregate budget of one assistant message's results
/// (docs/design.md §10, layer 2): parallel calls that each fit their own
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

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // the test inspects the spill file directly

    use super::*;
    use crate::testing::TempProject;

    fn only_text(content: &[ToolResultContent]) -> &str {
        match content {
            [ToolResultContent::Text { text }] => text,
            other => panic!("one text block expected: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_spill_file_is_capped_and_the_result_says_what_was_not_kept() {
        let p = TempProject::new();
        // 3 MB in two blocks (joined by `\n` in the file), 3 bytes a
        // character: the cap falls inside a character.
        let first = "€".repeat(600_000);
        let second = "€".repeat(399_999) + "END";
        let total = 600_000 + 399_999 + 3;
        let out = apply(
            &p.env,
            &ToolUseId::new("toolu_big"),
            ResultBudget::Limit(50_000),
            vec![
                ToolResultContent::text(first),
                ToolResultContent::text(second),
            ],
        )
        .await;
        let spill = p.path(".riot-spill/toolu_big.txt");
        let saved = std::fs::read(&spill).unwrap();
        // 1 MiB = 3 × 349,525 + 1: the last whole character ends a byte short.
        assert_eq!(saved.len(), SPILL_MAX_BYTES - 1);
        let saved = String::from_utf8(saved).unwrap();
        assert_eq!(saved, "€".repeat(349_525));
        let text = only_text(&out);
        assert!(
            text.starts_with(&format!(
                "This result is {total} characters, over the 50000-character budget, so its first 349525 characters were saved to {path} (a spill file holds at most 1048576 bytes; the other {lost} characters were not kept). To see more, Read {path} with offset/limit or Grep it. Shown below: the first 2000 and the last 2000 characters; {omitted} characters in between are not shown.\n\n--- first 2000 characters ---\n€€€",
                path = spill.display(),
                lost = total + 1 - 349_525,
                omitted = total - 4000,
            )),
            "{}",
            &text[..600]
        );
        assert!(text.ends_with(&format!(
            "€€\n[… {} characters omitted …]\n--- last 2000 characters ---\n{}END",
            total - 4000,
            "€".repeat(1997)
        )));
    }

    #[tokio::test]
    async fn a_result_under_the_spill_cap_is_saved_whole_across_blocks() {
        let p = TempProject::new();
        let out = apply(
            &p.env,
            &ToolUseId::new("t/1"),
            ResultBudget::Limit(40),
            vec![
                ToolResultContent::text("a".repeat(30)),
                ToolResultContent::text("b".repeat(30)),
            ],
        )
        .await;
        let spill = p.path(".riot-spill/t_1.txt");
        let saved = std::fs::read_to_string(&spill).unwrap();
        assert_eq!(saved, format!("{}\n{}", "a".repeat(30), "b".repeat(30)));
        assert_eq!(
            only_text(&out),
            format!(
                "This result is 60 characters, over the 40-character budget, so it was saved in full to {path}. To see the rest, Read {path} with offset/limit or Grep it. Shown below: the first 10 and the last 10 characters; 40 characters in between are not shown.\n\n--- first 10 characters ---\naaaaaaaaaa\n[… 40 characters omitted …]\n--- last 10 characters ---\nbbbbbbbbbb",
                path = spill.display()
            )
        );
    }

    #[tokio::test]
    async fn a_documents_text_counts_and_a_spill_keeps_the_text_not_the_pdf() {
        let p = TempProject::new();
        let document = ToolResultContent::pdf("JVBERi0xLjU=", 1, "d".repeat(30));
        let content = vec![ToolResultContent::text("a".repeat(30)), document.clone()];
        assert_eq!(text_chars(&content), 60);
        let fits = apply(
            &p.env,
            &ToolUseId::new("t2"),
            ResultBudget::Limit(60),
            content.clone(),
        )
        .await;
        assert_eq!(fits, content, "within the budget nothing changes");
        let out = apply(
            &p.env,
            &ToolUseId::new("t2"),
            ResultBudget::Limit(40),
            content,
        )
        .await;
        let saved = std::fs::read_to_string(p.path(".riot-spill/t2.txt")).unwrap();
        assert_eq!(saved, format!("{}\n{}", "a".repeat(30), "d".repeat(30)));
        assert!(
            only_text(&out)
                .starts_with("This result is 60 characters, over the 40-character budget"),
            "{out:?}"
        );
    }
}
