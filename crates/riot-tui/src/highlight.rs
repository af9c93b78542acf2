//! Code blocks highlighted with syntect (Sublime Text grammars, pure-Rust
//! regexes). The grammars load on the first highlighted block, not at
//! start.
//!
//! The grammar's scopes are sorted into a few kinds — keywords, strings,
//! comments, numbers and names being defined — each drawn in one of the
//! terminal's own sixteen colours, so a block follows the person's
//! palette (light or dark) like the rest of the UI. Everything else
//! (identifiers, operators, punctuation) is the terminal's default
//! colour. Few kinds keep changes of colour rare, and every change is a
//! sequence written to the terminal: on dense code, a colour per scope
//! wrote more escape bytes than text.

use std::str::FromStr;
use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{
    Color as Tag, ScopeSelectors, StyleModifier, Theme, ThemeItem, ThemeSettings,
};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

/// What a run of code is, as far as its colour goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Keyword,
    String,
    Comment,
    Number,
    Definition,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Plain,
        Kind::Keyword,
        Kind::String,
        Kind::Comment,
        Kind::Number,
        Kind::Definition,
    ];

    /// The scope selectors of a kind (TextMate's, most specific wins).
    fn selectors(self) -> &'static str {
        match self {
            Kind::Plain => "keyword.operator",
            Kind::Keyword => "keyword, storage, constant.language",
            Kind::String => "string, constant.character",
            Kind::Comment => "comment",
            Kind::Number => "constant.numeric",
            Kind::Definition => {
                "entity.name.function, entity.name.type, entity.name.struct, entity.name.enum, entity.name.class, entity.name.trait"
            }
        }
    }

    /// The colour a kind is drawn in; `None` is the terminal's default.
    fn color(self) -> Option<Color> {
        match self {
            Kind::Plain => None,
            Kind::Keyword => Some(Color::Magenta),
            Kind::String => Some(Color::Green),
            Kind::Comment => Some(Color::DarkGray),
            Kind::Number => Some(Color::Yellow),
            Kind::Definition => Some(Color::Blue),
        }
    }

    /// The kind a syntect colour stands for in [`kinds`].
    fn from_tag(tag: Tag) -> Kind {
        Kind::ALL
            .get(usize::from(tag.r))
            .copied()
            .unwrap_or(Kind::Plain)
    }

    fn tag(self) -> Tag {
        let index = Kind::ALL.iter().position(|k| *k == self).unwrap_or(0);
        Tag {
            r: u8::try_from(index).unwrap_or(0),
            g: 0,
            b: 0,
            a: 0xFF,
        }
    }
}

/// A syntect theme whose "colours" name a [`Kind`]: syntect does the
/// selector matching and scoring, this module the colouring.
fn kinds() -> Theme {
    let scopes = Kind::ALL
        .iter()
        .filter_map(|kind| {
            Some(ThemeItem {
                scope: ScopeSelectors::from_str(kind.selectors()).ok()?,
                style: StyleModifier {
                    foreground: Some(kind.tag()),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
    Theme {
        settings: ThemeSettings {
            foreground: Some(Kind::Plain.tag()),
            ..ThemeSettings::default()
        },
        scopes,
        ..Theme::default()
    }
}

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        theme: kinds(),
    })
}

/// The lines of `code` coloured by the grammar named by `lang` (a
/// fence's info string: `rust`, `py`, `sh`…), or `None` when no grammar
/// knows it. Runs of no particular kind are in `plain`. A line is
/// coloured from itself and the lines before it only; should the grammar
/// fail on one, it and the lines after it are in `plain`.
pub fn highlight(code: &str, lang: &str, plain: Style) -> Option<Vec<Line<'static>>> {
    let lang = lang.split([' ', ',', '{']).next().unwrap_or("").trim();
    if lang.is_empty() {
        return None;
    }
    let assets = assets();
    let syntax = assets
        .syntaxes
        .find_syntax_by_token(lang)
        .or_else(|| assets.syntaxes.find_syntax_by_extension(lang))?;
    let mut h = HighlightLines::new(syntax, &assets.theme);
    let mut out = Vec::new();
    let mut failed = false;
    for line in LinesWithEndings::from(code) {
        let ranges = match h.highlight_line(line, &assets.syntaxes) {
            Ok(ranges) if !failed => ranges,
            _ => {
                failed = true;
                let text = line.trim_end_matches(['\n', '\r']).to_owned();
                out.push(Line::from(Span::styled(text, plain)));
                continue;
            }
        };
        let mut spans: Vec<Span<'static>> = Vec::new();
        for (style, text) in ranges {
            let text = text.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                continue;
            }
            let style = match Kind::from_tag(style.foreground).color() {
                Some(color) => plain.fg(color),
                None => plain,
            };
            match spans.last_mut() {
                // Spaces take the colour of the text before them, which
                // then goes on: a colour shows on no space, and every
                // change of colour is written to the terminal.
                Some(last) if text.chars().all(char::is_whitespace) || last.style == style => {
                    last.content.to_mut().push_str(text);
                }
                _ => spans.push(Span::styled(text.to_owned(), style)),
            }
        }
        out.push(Line::from(spans));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(line: &Line<'_>) -> Vec<(String, Option<Color>)> {
        line.spans
            .iter()
            .map(|s| (s.content.to_string(), s.style.fg))
            .collect()
    }

    #[test]
    fn a_known_language_is_coloured_by_kind_and_an_unknown_one_is_not() {
        let lines = highlight("fn main() {}\nlet x = 1;\n", "rust", Style::new()).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            runs(&lines[0]),
            [
                ("fn ".to_owned(), Some(Color::Magenta)),
                ("main".to_owned(), Some(Color::Blue)),
                ("() {}".to_owned(), None),
            ]
        );
        assert_eq!(
            runs(&lines[1]),
            [
                ("let".to_owned(), Some(Color::Magenta)),
                (" x = ".to_owned(), None),
                ("1".to_owned(), Some(Color::Yellow)),
                (";".to_owned(), None),
            ]
        );
        assert!(highlight("x", "no-such-language", Style::new()).is_none());
        assert!(highlight("x", "", Style::new()).is_none());
    }

    #[test]
    fn strings_and_comments_have_their_own_colours_in_other_grammars() {
        let lines = highlight("x = 'a'  # note\n", "py", Style::new()).unwrap();
        assert_eq!(
            runs(&lines[0]),
            [
                ("x = ".to_owned(), None),
                ("'a'  ".to_owned(), Some(Color::Green)),
                ("# note".to_owned(), Some(Color::DarkGray)),
            ]
        );
    }

    #[test]
    fn plain_runs_keep_the_blocks_own_style() {
        let plain = Style::new().fg(Color::Gray);
        let lines = highlight("x + 1\n", "py", plain).unwrap();
        assert_eq!(
            runs(&lines[0]),
            [
                ("x + ".to_owned(), Some(Color::Gray)),
                ("1".to_owned(), Some(Color::Yellow)),
            ]
        );
    }
}
