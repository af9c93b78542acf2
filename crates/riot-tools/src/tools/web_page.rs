//! What a fetched body becomes for the model: HTML as Markdown (htmd:
//! scripts, styles, navigation and forms dropped), JSON and text as they
//! are, anything else described. Charsets through `encoding_rs`: the
//! `Content-Type` parameter, a byte-order mark, an HTML `<meta>` charset,
//! else UTF-8.

use encoding_rs::{Encoding, UTF_8};

/// A body made readable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    /// Markdown, text, or a one-line description of a type not shown.
    pub text: String,
    /// The HTML `<title>`.
    pub title: Option<String>,
    /// Whether `text` is the content (false: a description).
    pub shown: bool,
}

/// How a body is treated, from its `Content-Type` (or a sniff without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Other,
}

fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    let Some(ct) = content_type else {
        let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
        return if head.contains("<html") || head.contains("<!doctype html") {
            Kind::Html
        } else if std::str::from_utf8(body).is_ok() {
            Kind::Text
        } else {
            Kind::Other
        };
    };
    let mime = mime_of(ct);
    if mime == "text/html" || mime == "application/xhtml+xml" {
        Kind::Html
    } else if mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
        )
    {
        Kind::Text
    } else {
        Kind::Other
    }
}

fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a `Content-Type`.
fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']))
    })
}

/// A `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">` in
/// the first 2 KiB of an HTML page.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(at) = rest.find("<meta") {
        rest = &rest[at + 5..];
        let tag = rest.split('>').next().unwrap_or("");
        if let Some(pos) = tag.find("charset=") {
            let value: String = tag[pos + 8..]
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
                .collect();
            if let Some(enc) = Encoding::for_label(value.as_bytes()) {
                return Some(enc);
            }
        }
    }
    None
}

/// `body` decoded as text.
fn decode(content_type: Option<&str>, body: &[u8], html: bool) -> String {
    let encoding = Encoding::for_bom(body)
        .map(|(enc, _)| enc)
        .or_else(|| {
            content_type
                .and_then(charset_param)
                .and_then(|label| Encoding::for_label(label.as_bytes()))
        })
        .or_else(|| if html { meta_charset(body) } else { None })
        .unwrap_or(UTF_8);
    encoding.decode(body).0.into_owned()
}

/// The text of a page's `<title>`.
fn title_of(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = html[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let title = title
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    (!title.is_empty()).then_some(title)
}

/// HTML to Markdown, without what a reader does not need.
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "head", "script", "style", "noscript", "template", "nav", "form", "button", "input",
            "select", "textarea", "iframe", "svg", "canvas",
        ])
        .build();
    match converter.convert(html) {
        Ok(markdown) => markdown.trim().to_owned(),
        // htmd fails only on I/O it never does for a string; keep the text.
        Err(_) => html.to_owned(),
    }
}

/// What the model reads of a body with `content_type`.
pub fn readable(content_type: Option<&str>, body: &[u8]) -> PageText {
    match kind_of(content_type, body) {
        Kind::Html => {
            let html = decode(content_type, body, true);
            PageText {
                title: title_of(&html),
                text: html_to_markdown(&html),
                shown: true,
            }
        }
        Kind::Text => PageText {
            text: decode(content_type, body, false),
            title: None,
            shown: true,
        },
        Kind::Other => PageText {
            text: format!(
                "The response is {} ({} bytes), which Riot does not show as text.",
                content_type.map_or("of an unknown type".to_owned(), mime_of),
                body.len()
            ),
            title: None,
            shown: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_realistic_page_keeps_headings_links_code_and_tables_and_drops_scripts() {
        let html = r#"<!doctype html><html><head><title>Serde &amp; you</title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<h1>Getting started</h1>
<p>Read the <a href="https://serde.rs/derive.html">derive guide</a> first.</p>
<h2>Install</h2>
<pre><code>cargo add serde</code></pre>
<ul><li>fast</li><li>generic</li></ul>
<table><thead><tr><th>Format</th><th>Crate</th></tr></thead>
<tbody><tr><td>JSON</td><td>serde_json</td></tr></tbody></table>
<form><input name="q"><button>Search</button></form>
<script>alert("nor this")</script>
</body></html>"#;
        let page = readable(Some("text/html; charset=utf-8"), html.as_bytes());
        assert_eq!(page.title.as_deref(), Some("Serde & you"));
        assert_eq!(
            page.text,
            "# Getting started\n\n\
             Read the [derive guide](https://serde.rs/derive.html) first.\n\n\
             ## Install\n\n\
             ```\ncargo add serde\n```\n\n\
             *   fast\n\
             *   generic\n\n\
             | Format | Crate       |\n\
             | ------ | ----------- |\n\
             | JSON   | serde\\_json |"
        );
    }

    #[test]
    fn latin1_is_decoded_from_the_header_or_the_meta_tag() {
        let body = b"<html><body><p>Caf\xe9 cr\xe8me</p></body></html>";
        let page = readable(Some("text/html; charset=ISO-8859-1"), body);
        assert_eq!(page.text, "Café crème");
        let with_meta =
            b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>na\xefve</p></body></html>";
        assert_eq!(readable(Some("text/html"), with_meta).text, "naïve");
        let http_equiv = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=latin1\"></head><body>\xa9 2026</body></html>";
        assert_eq!(readable(None, http_equiv).text, "© 2026");
    }

    #[test]
    fn json_and_text_pass_through_and_other_types_are_described() {
        let json = br#"{"name": "riot", "tags": ["<b>"]}"#;
        assert_eq!(
            readable(Some("application/json"), json).text,
            r#"{"name": "riot", "tags": ["<b>"]}"#
        );
        assert_eq!(
            readable(Some("text/plain"), b"# not a heading").text,
            "# not a heading"
        );
        let png = readable(Some("image/png"), &[0x89, b'P', b'N', b'G', 0, 1]);
        assert!(!png.shown);
        assert_eq!(
            png.text,
            "The response is image/png (6 bytes), which Riot does not show as text."
        );
    }
}
