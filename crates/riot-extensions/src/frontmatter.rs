//! YAML front matter of the plain-file extension points (skills, slash
//! commands, agent definitions; docs/design.md §13): an optional block
//! between two `---` lines at the top of a Markdown file. Errors name the
//! file line, so a person can fix the file the notice points at.

use serde::de::DeserializeOwned;

/// A file split into its front matter and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the fences (`None` when the file has no front
    /// matter).
    pub yaml: Option<&'a str>,
    /// The file line (1-based) of the YAML's first line.
    pub yaml_line: usize,
    /// Everything after the closing fence.
    pub body: &'a str,
}

/// Bad front matter, with the file line it was found at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct FrontMatterError {
    pub line: usize,
    pub message: String,
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\r', '\n']).trim_end() == "---"
}

/// Splits `text` at its front matter fences. A BOM and CRLF line ends are
/// accepted; an opening fence without a closing one is an error.
pub fn split(text: &str) -> Result<Split<'_>, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok(Split {
            yaml: None,
            yaml_line: 0,
            body: text,
        });
    };
    if !is_fence(first) {
        return Ok(Split {
            yaml: None,
            yaml_line: 0,
            body: text,
        });
    }
    let start = first.len();
    let mut offset = start;
    for line in lines {
        if is_fence(line) || line.trim_end() == "..." {
            return Ok(Split {
                yaml: Some(&text[start..offset]),
                yaml_line: 2,
                body: &text[offset + line.len()..],
            });
        }
        offset += line.len();
    }
    Err(FrontMatterError {
        line: 1,
        message: "the front matter opened with `---` is never closed by another `---` line".into(),
    })
}

/// Parses the front matter of `text` into `T` (an absent or empty block is
/// `T::default()`), and returns the body.
pub fn parse<T: DeserializeOwned + Default>(text: &str) -> Result<(T, &str), FrontMatterError> {
    let split = split(text)?;
    let Some(yaml) = split.yaml else {
        return Ok((T::default(), split.body));
    };
    if yaml.trim().is_empty() {
        return Ok((T::default(), split.body));
    }
    match serde_yaml_ng::from_str::<T>(yaml) {
        Ok(value) => Ok((value, split.body)),
        Err(e) => {
            let line = e.location().map_or(split.yaml_line, |l| {
                split.yaml_line + l.line().saturating_sub(1)
            });
            // The library appends " at line N column M": the line is ours.
            let message = e.to_string();
            let message = message
                .split(" at line ")
                .next()
                .unwrap_or(&message)
                .to_owned();
            Err(FrontMatterError { line, message })
        }
    }
}

/// The file line of `key:` in the front matter of `text` (for errors about
/// a value that parsed but is not acceptable), else the first YAML line.
pub fn line_of(text: &str, key: &str) -> usize {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .skip(1)
        .take_while(|(_, l)| !is_fence(l))
        .find(|(_, l)| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(2, |(i, _)| i + 1)
}

/// A list of tool rules written either as a YAML list or as one
/// comma-separated string (both shapes are common in the wild).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolList(pub Vec<String>);

impl<'de> serde::Deserialize<'de> for ToolList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Shape {
            One(String),
            Many(Vec<String>),
        }
        let items = match Shape::deserialize(d)? {
            Shape::One(s) => split_rules(&s),
            Shape::Many(v) => v.into_iter().map(|s| s.trim().to_owned()).collect(),
        };
        Ok(ToolList(
            items.into_iter().filter(|s| !s.is_empty()).collect(),
        ))
    }
}

/// Splits `Read, Bash(git add:*), Grep` at the commas outside parentheses.
fn split_rules(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current).trim().to_owned());
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current.trim().to_owned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    struct Meta {
        name: Option<String>,
        description: Option<String>,
        #[serde(rename = "allowed-tools")]
        allowed_tools: Option<ToolList>,
    }

    #[test]
    fn front_matter_and_body_are_split_with_crlf_and_bom() {
        let text = "\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nBody\r\n";
        let (meta, body) = parse::<Meta>(text).unwrap();
        assert_eq!(meta.name.as_deref(), Some("a"));
        assert_eq!(meta.description.as_deref(), Some("b"));
        assert_eq!(body, "Body\r\n");
    }

    #[test]
    fn no_front_matter_is_the_default_and_the_whole_body() {
        let (meta, body) = parse::<Meta>("Just text\n---\n").unwrap();
        assert_eq!(meta, Meta::default());
        assert_eq!(body, "Just text\n---\n");
    }

    #[test]
    fn folded_descriptions_and_both_tool_list_shapes_parse() {
        let text = "---\nname: a\ndescription: >\n  one\n  two\nallowed-tools: Read, Bash(git add:*, x), Grep\n---\n";
        let (meta, _) = parse::<Meta>(text).unwrap();
        assert_eq!(meta.description.as_deref(), Some("one two\n"));
        assert_eq!(
            meta.allowed_tools.unwrap().0,
            ["Read", "Bash(git add:*, x)", "Grep"]
        );
        let text = "---\nallowed-tools:\n  - Read\n  - ' Grep '\n---\n";
        let (meta, _) = parse::<Meta>(text).unwrap();
        assert_eq!(meta.allowed_tools.unwrap().0, ["Read", "Grep"]);
    }

    #[test]
    fn errors_name_the_file_line() {
        let text = "---\nname: a\ndescription: [unclosed\n---\nbody\n";
        let err = parse::<Meta>(text).unwrap_err();
        assert!(err.line >= 3, "{err}");
        assert!(!err.message.contains(" at line "), "{err}");

        let err = parse::<Meta>("---\nname: a\nbody without a fence\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("never closed"), "{err}");

        let err = parse::<Meta>("---\nname: [1, 2]\n---\n").unwrap_err();
        assert_eq!(err.line, 2, "{err}");
    }

    #[test]
    fn line_of_finds_a_key_inside_the_front_matter_only() {
        let text = "---\nname: a\ndescription: b\n---\ndescription: not this\n";
        assert_eq!(line_of(text, "description"), 3);
        assert_eq!(line_of(text, "name"), 2);
        assert_eq!(line_of(text, "missing"), 2);
    }
}
