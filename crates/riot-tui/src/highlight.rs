//! Code blocks highlighted with syntect (Sublime Text grammars, pure-Rust
//! regexes). The grammars load on the first highlighted block, not at
//! start.

use std::sync::OnceLock;

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove("base16-ocean.dark")?;
            Some(Assets { syntaxes, theme })
        })
        .as_ref()
}

/// The lines of `code` in the colours of the grammar named by `lang` (a
/// fence's info string: `rust`, `py`, `sh`…), or `None` when no grammar
/// knows it. A line is coloured from itself and the lines before it only;
/// should the grammar fail on one, it and the lines after it are in
/// `plain`.
pub fn highlight(code: &str, lang: &str, plain: Style) -> Option<Vec<Line<'static>>> {
    let lang = lang.split([' ', ',', '{']).next().unwrap_or("").trim();
    if lang.is_empty() {
        return None;
    }
    let assets = assets()?;
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
            let fg = style.foreground;
            let style = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
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

    #[test]
    fn a_known_language_is_coloured_and_an_unknown_one_is_not() {
        let lines = highlight("fn main() {}\nlet x = 1;\n", "rust", Style::new()).unwrap();
        assert_eq!(lines.len(), 2);
        let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "fn main() {}");
        assert!(lines[0].spans.len() > 1, "{:?}", lines[0]);
        assert!(highlight("x", "no-such-language", Style::new()).is_none());
        assert!(highlight("x", "", Style::new()).is_none());
    }
}
