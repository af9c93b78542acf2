//! The question in the live area: a permission question (its title, what
//! the call does, its preview and choices) or a question request being
//! answered.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use riot_protocol::{PermissionRequestDetail, QuestionRequest};

use crate::app::{App, Asking, choices};
use crate::preview;
use crate::theme::Theme;
use crate::wrap::{hard_wrap, wrap};

/// The question on screen in `room` rows: a permission question's preview
/// gets what its other rows leave.
pub(super) fn question_rows(
    app: &App,
    asking: &Asking,
    width: usize,
    room: usize,
) -> Vec<Line<'static>> {
    let theme = app.theme;
    match asking {
        Asking::Permission {
            detail,
            selected,
            preview: shown,
            ..
        } => permission_rows(detail, *selected, shown, width, room, theme),
        Asking::Questions {
            request,
            index,
            selected,
            checked,
            text,
            ..
        } => {
            let answering = Answering {
                index: *index,
                selected: *selected,
                checked,
                text,
            };
            questions_rows(request, &answering, width, theme)
        }
    }
}

/// The rows of a permission question in `room` rows: its title, what the
/// call does, the preview in what the other rows leave, the choices and
/// the keys.
fn permission_rows(
    detail: &PermissionRequestDetail,
    selected: usize,
    shown: &preview::Preview,
    width: usize,
    room: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let bar = || Span::styled("│ ", theme.question());
    let mut rows = Vec::new();
    rows.push(Line::from(Span::styled(
        format!("╭ Allow {}?", detail.tool_name),
        theme.question(),
    )));
    rows.extend(wrap(
        &Line::from(Span::styled(
            detail.describe.clone(),
            ratatui::style::Style::new().add_modifier(Modifier::BOLD),
        )),
        width,
        &[bar()],
        &[bar()],
    ));
    // The resolved path (or URL); a command is the preview's.
    if detail.command.is_none()
        && let Some(path) = detail.path.as_ref().filter(|p| **p != detail.describe)
    {
        rows.extend(hard_wrap(
            &Line::from(Span::styled(path.clone(), theme.code())),
            width,
            &[bar()],
            &[bar()],
        ));
    }
    // The rows after the preview, first, to know its room.
    let after = permission_choice_rows(detail, selected, width, theme);
    let (preview_rows, _) = preview::fit(
        shown,
        width,
        &[bar()],
        room.saturating_sub(rows.len() + after.len() + 1),
        theme,
    );
    rows.extend(preview_rows);
    rows.extend(after);
    let mut keys = if detail.suggested_rule.is_some() {
        "╰ y yes · a always · n or esc no · ↑↓ enter".to_owned()
    } else {
        "╰ y yes · n or esc no · ↑↓ enter".to_owned()
    };
    if !shown.is_empty() {
        keys.push_str(&format!(" · {} view all", preview::VIEW_KEY));
    }
    rows.push(Line::from(Span::styled(keys, theme.dim())));
    rows
}

/// The rows of a permission question below its preview: why it is asked,
/// then its choices with the one `selected` marked.
fn permission_choice_rows(
    detail: &PermissionRequestDetail,
    selected: usize,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let bar = || Span::styled("│ ", theme.question());
    let mut after = Vec::new();
    let reason = detail.reason.detail();
    if !reason.is_empty() {
        after.extend(wrap(
            &Line::from(Span::styled(reason.to_owned(), theme.dim())),
            width,
            &[bar()],
            &[bar()],
        ));
    }
    for (i, choice) in choices(detail).iter().enumerate() {
        let chosen = i == selected;
        let style = if chosen {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        let mark = if chosen { "› " } else { "  " };
        after.extend(wrap(
            &Line::from(vec![
                Span::styled(format!("{mark}{}. ", i + 1), style),
                Span::styled(choice.label(), style),
                Span::styled(format!(" ({})", choice.keys()), theme.dim()),
            ]),
            width,
            &[bar()],
            &[bar(), Span::raw("     ")],
        ));
    }
    after
}

/// Where the person is in answering a question request.
struct Answering<'a> {
    /// The question being answered.
    index: usize,
    selected: usize,
    checked: &'a [bool],
    /// A free-text answer being typed.
    text: &'a str,
}

/// The rows of the question being answered: its title (with its number
/// among several), the question, the answer being typed or the options,
/// and the keys.
fn questions_rows(
    request: &QuestionRequest,
    answering: &Answering<'_>,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let bar = || Span::styled("│ ", theme.question());
    let mut rows = Vec::new();
    let index = answering.index;
    let total = request.questions.len();
    let Some(q) = request.questions.get(index) else {
        return rows;
    };
    let title = match (&q.header, total) {
        (Some(h), 1) => format!("╭ {h}"),
        (Some(h), n) => format!("╭ {h} ({}/{n})", index + 1),
        (None, 1) => "╭ Question".to_owned(),
        (None, n) => format!("╭ Question {}/{n}", index + 1),
    };
    rows.push(Line::from(Span::styled(title, theme.question())));
    rows.extend(wrap(
        &Line::from(Span::styled(
            q.question.clone(),
            ratatui::style::Style::new().add_modifier(Modifier::BOLD),
        )),
        width,
        &[bar()],
        &[bar()],
    ));
    if q.options.is_empty() {
        rows.push(Line::from(vec![
            bar(),
            Span::styled("› ", theme.user()),
            Span::raw(answering.text.to_owned()),
        ]));
    }
    for (i, option) in q.options.iter().enumerate() {
        let chosen = i == answering.selected;
        let style = if chosen {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        let mark = if chosen { "› " } else { "  " };
        let check = if q.multi_select {
            if answering.checked.get(i).copied().unwrap_or(false) {
                "[x] "
            } else {
                "[ ] "
            }
        } else {
            ""
        };
        let mut spans = vec![
            Span::styled(format!("{mark}{}. {check}", i + 1), style),
            Span::styled(option.label.clone(), style),
        ];
        if let Some(d) = &option.description {
            spans.push(Span::styled(format!(" — {d}"), theme.dim()));
        }
        rows.extend(wrap(
            &Line::from(spans),
            width,
            &[bar()],
            &[bar(), Span::raw("     ")],
        ));
    }
    let keys = if q.options.is_empty() {
        "╰ type the answer · enter send · esc decline"
    } else if q.multi_select {
        "╰ ↑↓ move · space pick · enter done · esc decline"
    } else {
        "╰ ↑↓ move · enter choose · esc decline"
    };
    rows.push(Line::from(Span::styled(keys, theme.dim())));
    rows
}
