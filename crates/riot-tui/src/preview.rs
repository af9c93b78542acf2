//! What a permission question shows about the call it asks about, built
//! from the question's own payload — [`PermissionRequestDetail::preview`],
//! the one the web UI and ACP show too — or, where the input says it all,
//! from the input: an edit's or a write's diff with line numbers and
//! context, a new file's lines and count, a notebook cell before and
//! after, a command or the text typed into a terminal, an MCP tool's
//! server, name and arguments, a fetch's prompt (its URL is the
//! question's path). The question shows what fits above its answer keys
//! and says how much it left out ([`fit`]); `v` shows every row
//! ([`view_rows`]).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use riot_protocol::{DiffHunk, DiffLineKind, PermissionRequestDetail, UiPayload};
use serde_json::Value;

use crate::theme::Theme;
use crate::wrap::hard_wrap;
use crate::wrap::plural;

/// The key that shows a whole preview (free among the question's keys).
pub const VIEW_KEY: char = 'v';

/// One line of a preview's body: it is wrapped, never cut short, and its
/// continuation rows are indented by `indent` columns.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyLine {
    pub line: Line<'static>,
    pub indent: usize,
}

/// What a question shows about its call (made once, when it arrives).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preview {
    /// Always shown: what the body is ("new file, 300 lines").
    pub head: Vec<Line<'static>>,
    /// Shown as far as there is room; the rest is counted.
    pub body: Vec<BodyLine>,
}

/// The preview of the call `detail` asks about.
pub fn of(detail: &PermissionRequestDetail, theme: Theme) -> Preview {
    let dim = theme.dim();
    let head = |text: String| vec![Line::from(Span::styled(text, dim))];
    match &detail.preview {
        Some(UiPayload::FileDiff {
            created: true,
            hunks,
            ..
        }) => {
            let lines: u64 = hunks.iter().map(|h| h.new_lines).sum();
            Preview {
                head: head(format!("new file, {}", plural(lines, "line", "lines"))),
                body: diff_lines(hunks, theme),
            }
        }
        Some(UiPayload::FileDiff { hunks, .. }) if hunks.is_empty() => Preview {
            head: head("no change: the file already has exactly this content".to_owned()),
            body: Vec::new(),
        },
        Some(UiPayload::FileDiff { hunks, .. }) => {
            let (added, removed) = counts(hunks);
            let mut summary = format!("+{added} −{removed}");
            if hunks.len() > 1 {
                summary.push_str(&format!(" in {} places", hunks.len()));
            }
            Preview {
                head: head(summary),
                body: diff_lines(hunks, theme),
            }
        }
        Some(UiPayload::NotebookCellDiff { cell_id, hunks, .. }) => {
            let (added, removed) = counts(hunks);
            let summary = match (added, removed) {
                (n, 0) => format!("new cell {cell_id}, {}", plural(n, "line", "lines")),
                (0, n) => format!("cell {cell_id} deleted, {}", plural(n, "line", "lines")),
                (a, r) => format!("cell {cell_id} before and after: +{a} −{r}"),
            };
            Preview {
                head: head(summary),
                body: diff_lines(hunks, theme),
            }
        }
        // A payload this face has no question view for: what the input says.
        Some(_) | None => from_input(detail, theme),
    }
}

impl Preview {
    /// Whether there is anything to show (and so to view whole).
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.body.is_empty()
    }
}

/// Added and removed lines of `hunks`.
fn counts(hunks: &[DiffHunk]) -> (u64, u64) {
    let count = |kind| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == kind)
            .count() as u64
    };
    (count(DiffLineKind::Added), count(DiffLineKind::Removed))
}

/// A preview from the call's input: the command, the text typed into a
/// terminal, an MCP call, a fetch's prompt.
fn from_input(detail: &PermissionRequestDetail, theme: Theme) -> Preview {
    let dim = theme.dim();
    let code = theme.code();
    let field = |name: &str| detail.input.get(name).and_then(Value::as_str);
    let text_lines = |text: &str, first: &str, rest: &str| -> Vec<BodyLine> {
        text.lines()
            .enumerate()
            .map(|(i, l)| {
                let lead = if i == 0 { first } else { rest };
                BodyLine {
                    line: Line::from(vec![
                        Span::styled(lead.to_owned(), dim),
                        Span::styled(untab(l), code),
                    ]),
                    indent: crate::wrap::width(lead),
                }
            })
            .collect()
    };
    if let Some(command) = &detail.command {
        return Preview {
            head: Vec::new(),
            body: text_lines(command, "$ ", "  "),
        };
    }
    if detail.tool_name == "Terminal" && field("action") == Some("write") {
        let name = field("name").unwrap_or("");
        return Preview {
            head: vec![Line::from(Span::styled(
                format!("typed into the terminal {name}:"),
                dim,
            ))],
            body: text_lines(field("input").unwrap_or(""), "", ""),
        };
    }
    if let Some(rest) = detail.tool_name.strip_prefix("mcp__") {
        // Server names never hold `__` (riot-mcp's naming), tool names may.
        let (server, tool) = rest.split_once("__").unwrap_or((rest, ""));
        let arguments = serde_json::to_string_pretty(&detail.input)
            .unwrap_or_else(|_| detail.input.to_string());
        return Preview {
            head: vec![Line::from(Span::styled(
                format!("MCP server {server} · tool {tool} · arguments:"),
                dim,
            ))],
            body: text_lines(&arguments, "", ""),
        };
    }
    if detail.tool_name == "WebFetch"
        && let Some(prompt) = field("prompt")
    {
        return Preview {
            head: Vec::new(),
            body: text_lines(prompt, "prompt: ", "        "),
        };
    }
    Preview::default()
}

/// Tabs as four spaces: a terminal cell holds no tab.
fn untab(text: &str) -> String {
    text.replace('\t', "    ")
}

/// `hunks` as diff lines — `  12 - old`, `  12 + new`, `  13   kept` —
/// removed lines numbered in the old file, the others in the new one,
/// `⋮` between hunks (the lines between them are unchanged).
pub fn diff_lines(hunks: &[DiffHunk], theme: Theme) -> Vec<BodyLine> {
    let dim = theme.dim();
    let last = hunks
        .iter()
        .map(|h| (h.old_start + h.old_lines).max(h.new_start + h.new_lines))
        .max()
        .unwrap_or(0);
    let digits = last.to_string().len().max(4);
    let mut out = Vec::new();
    for (i, hunk) in hunks.iter().enumerate() {
        if i > 0 {
            out.push(BodyLine {
                line: Line::from(Span::styled(format!("{:>digits$}", "⋮"), dim)),
                indent: 0,
            });
        }
        let (mut old, mut new) = (hunk.old_start, hunk.new_start);
        for line in &hunk.lines {
            let (mark, number, style): (char, u64, Style) = match line.kind {
                DiffLineKind::Context => {
                    old += 1;
                    new += 1;
                    (' ', new - 1, dim)
                }
                DiffLineKind::Added => {
                    new += 1;
                    ('+', new - 1, theme.added())
                }
                DiffLineKind::Removed => {
                    old += 1;
                    ('-', old - 1, theme.removed())
                }
            };
            out.push(BodyLine {
                line: Line::from(vec![
                    Span::styled(format!("{number:>digits$} "), dim),
                    Span::styled(format!("{mark} {}", untab(&line.text)), style),
                ]),
                indent: digits + 3,
            });
        }
    }
    out
}

/// `line`'s rows at `width` after `lead`.
fn rows_of(line: &BodyLine, width: usize, lead: &[Span<'static>]) -> Vec<Line<'static>> {
    let mut rest = lead.to_vec();
    rest.push(Span::raw(" ".repeat(line.indent)));
    hard_wrap(&line.line, width, lead, &rest)
}

/// `preview` in at most `room` rows of `width` columns, each after
/// `lead`: the head, then as many whole body lines as fit. When some do
/// not, the last row says how many are left and that `v` shows them.
/// The rows, and whether lines were left out.
pub fn fit(
    preview: &Preview,
    width: usize,
    lead: &[Span<'static>],
    room: usize,
    theme: Theme,
) -> (Vec<Line<'static>>, bool) {
    let mut rows: Vec<Line<'static>> = Vec::new();
    for line in &preview.head {
        rows.extend(hard_wrap(line, width, lead, lead));
    }
    // Wrapped only as far as the room goes: a long file costs no more.
    let mut bodies: Vec<Vec<Line<'static>>> = Vec::new();
    let mut used = rows.len();
    for line in &preview.body {
        let wrapped = rows_of(line, width, lead);
        used += wrapped.len();
        bodies.push(wrapped);
        if used > room {
            break;
        }
    }
    if used <= room && bodies.len() == preview.body.len() {
        rows.extend(bodies.into_iter().flatten());
        return (rows, false);
    }
    // One row is the count of what is left.
    let budget = room.saturating_sub(rows.len() + 1);
    let mut used = 0;
    let mut shown = 0;
    for body in &bodies {
        if used + body.len() > budget {
            break;
        }
        used += body.len();
        shown += 1;
    }
    rows.extend(bodies.into_iter().take(shown).flatten());
    let left = preview.body.len() - shown;
    let mut cut = lead.to_vec();
    cut.push(Span::styled(
        format!(
            "… {left} more {} — press {VIEW_KEY} to view all",
            if left == 1 { "line" } else { "lines" }
        ),
        theme.warning(),
    ));
    rows.push(Line::from(cut));
    (rows, true)
}

/// Every row of `preview` at `width`, after `lead`: what the view that
/// shows all of it scrolls through.
pub fn view_rows(preview: &Preview, width: usize, lead: &[Span<'static>]) -> Vec<Line<'static>> {
    let mut rows = Vec::new();
    for line in &preview.head {
        rows.extend(hard_wrap(line, width, lead, lead));
    }
    for line in &preview.body {
        rows.extend(rows_of(line, width, lead));
    }
    rows
}

#[cfg(test)]
mod tests {
    use riot_protocol::{DecisionReason, DiffLine, ToolUseId};
    use serde_json::json;

    use super::*;

    fn text(rows: &[Line<'_>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn line(kind: DiffLineKind, text: &str) -> DiffLine {
        DiffLine {
            kind,
            text: text.into(),
        }
    }

    fn detail(tool: &str, input: Value, preview: Option<UiPayload>) -> PermissionRequestDetail {
        PermissionRequestDetail {
            tool_use_id: ToolUseId::new("t1"),
            tool_name: tool.into(),
            describe: format!("{tool} something"),
            input,
            path: None,
            command: None,
            reason: DecisionReason::Consent {
                detail: "asks".into(),
            },
            message: "Allow?".into(),
            suggested_rule: None,
            preview,
        }
    }

    /// Two hunks of one file: line 12 changed with three lines of context
    /// around it, and further down line 40 removed.
    fn two_hunks() -> Vec<DiffHunk> {
        vec![
            DiffHunk {
                old_start: 9,
                old_lines: 7,
                new_start: 9,
                new_lines: 7,
                lines: vec![
                    line(DiffLineKind::Context, "a"),
                    line(DiffLineKind::Context, "b"),
                    line(DiffLineKind::Context, "c"),
                    line(DiffLineKind::Removed, "old();"),
                    line(DiffLineKind::Added, "new();"),
                    line(DiffLineKind::Context, "d"),
                    line(DiffLineKind::Context, "e"),
                    line(DiffLineKind::Context, "f"),
                ],
            },
            DiffHunk {
                old_start: 37,
                old_lines: 4,
                new_start: 37,
                new_lines: 3,
                lines: vec![
                    line(DiffLineKind::Context, "x"),
                    line(DiffLineKind::Context, "y"),
                    line(DiffLineKind::Context, "z"),
                    line(DiffLineKind::Removed, "gone"),
                ],
            },
        ]
    }

    #[test]
    fn a_diff_numbers_each_line_with_its_context_and_marks_changes() {
        let theme = Theme::from_no_color(None);
        let lines = diff_lines(&two_hunks(), theme);
        let rows: Vec<Line<'_>> = lines.iter().map(|l| l.line.clone()).collect();
        assert_eq!(
            text(&rows),
            [
                "   9   a",
                "  10   b",
                "  11   c",
                "  12 - old();",
                "  12 + new();",
                "  13   d",
                "  14   e",
                "  15   f",
                "   ⋮",
                "  37   x",
                "  38   y",
                "  39   z",
                "  40 - gone",
            ]
        );
        // Removed and added lines in the theme's colours, context dim.
        assert_eq!(rows[3].spans[1].style, theme.removed());
        assert_eq!(rows[4].spans[1].style, theme.added());
        assert_eq!(rows[0].spans[1].style, theme.dim());
    }

    #[test]
    fn a_new_file_is_its_line_count_and_its_lines() {
        let content: Vec<String> = (1..=300).map(|i| format!("line {i}")).collect();
        let hunk = DiffHunk {
            old_start: 0,
            old_lines: 0,
            new_start: 1,
            new_lines: 300,
            lines: content
                .iter()
                .map(|t| line(DiffLineKind::Added, t))
                .collect(),
        };
        let write = detail(
            "Write",
            json!({}),
            Some(UiPayload::FileDiff {
                path: "big.txt".into(),
                created: true,
                hunks: vec![hunk],
            }),
        );
        let preview = of(&write, Theme::plain());
        let lead = [Span::raw("│ ")];
        let (rows, cut) = fit(&preview, 40, &lead, 5, Theme::plain());
        assert!(cut);
        assert_eq!(
            text(&rows),
            [
                "│ new file, 300 lines",
                "│    1 + line 1",
                "│    2 + line 2",
                "│    3 + line 3",
                "│ … 297 more lines — press v to view all",
            ]
        );
        // Everything fits: nothing is cut and nothing is said about it.
        let (all, cut) = fit(&preview, 40, &lead, 400, Theme::plain());
        assert!(!cut);
        assert_eq!(all.len(), 301);
        let every = view_rows(&preview, 40, &lead);
        assert_eq!(text(&every).last().unwrap(), "│  300 + line 300");
    }

    #[test]
    fn a_long_line_wraps_whole_and_a_line_that_does_not_fit_is_counted() {
        let hunk = DiffHunk {
            old_start: 1,
            old_lines: 1,
            new_start: 1,
            new_lines: 3,
            lines: vec![
                line(DiffLineKind::Removed, "short"),
                line(DiffLineKind::Added, "0123456789abcdefghij"),
                line(DiffLineKind::Added, "tail"),
                line(DiffLineKind::Added, "end"),
            ],
        };
        let edit = detail(
            "Edit",
            json!({}),
            Some(UiPayload::FileDiff {
                path: "a.txt".into(),
                created: false,
                hunks: vec![hunk],
            }),
        );
        let preview = of(&edit, Theme::plain());
        // 20 columns: the long added line takes two rows, indented under
        // its text; the last two lines do not fit and are counted.
        let (rows, cut) = fit(&preview, 20, &[], 5, Theme::plain());
        assert!(cut);
        assert_eq!(
            text(&rows),
            [
                "+3 −1",
                "   1 - short",
                "   1 + 0123456789abc",
                "       defghij",
                "… 2 more lines — press v to view all",
            ]
        );
    }

    #[test]
    fn commands_mcp_calls_typed_text_and_fetches_show_what_their_input_says() {
        let mut bash = detail("Bash", json!({"command": "make\nmake install"}), None);
        bash.command = Some("make\nmake install".into());
        let shown = |d: &PermissionRequestDetail| {
            let p = of(d, Theme::plain());
            let (rows, _) = fit(&p, 80, &[], 100, Theme::plain());
            text(&rows)
        };
        assert_eq!(shown(&bash), ["$ make", "  make install"]);
        let mcp = detail(
            "mcp__github__create_issue",
            json!({"title": "Bug", "labels": ["x"]}),
            None,
        );
        assert_eq!(
            shown(&mcp),
            [
                "MCP server github · tool create_issue · arguments:",
                "{",
                "  \"title\": \"Bug\",",
                "  \"labels\": [",
                "    \"x\"",
                "  ]",
                "}",
            ]
        );
        let typed = detail(
            "Terminal",
            json!({"action": "write", "name": "py", "input": "print(1)<Enter>"}),
            None,
        );
        assert_eq!(
            shown(&typed),
            ["typed into the terminal py:", "print(1)<Enter>"]
        );
        let fetch = detail(
            "WebFetch",
            json!({"url": "https://example.com/", "prompt": "the title\nand the date"}),
            None,
        );
        assert_eq!(shown(&fetch), ["prompt: the title", "        and the date"]);
    }

    #[test]
    fn a_notebook_cell_shows_before_and_after() {
        let cell = detail(
            "NotebookEdit",
            json!({}),
            Some(UiPayload::NotebookCellDiff {
                path: "nb.ipynb".into(),
                cell_id: "c1".into(),
                hunks: vec![DiffHunk {
                    old_start: 1,
                    old_lines: 2,
                    new_start: 1,
                    new_lines: 2,
                    lines: vec![
                        line(DiffLineKind::Context, "import os"),
                        line(DiffLineKind::Removed, "print(1)"),
                        line(DiffLineKind::Added, "print(2)"),
                    ],
                }],
            }),
        );
        let (rows, _) = fit(&of(&cell, Theme::plain()), 80, &[], 100, Theme::plain());
        assert_eq!(
            text(&rows),
            [
                "cell c1 before and after: +1 −1",
                "   1   import os",
                "   2 - print(1)",
                "   2 + print(2)",
            ]
        );
    }
}
