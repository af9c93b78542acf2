//! Image files pasted into the composer. A terminal delivers a file
//! dragged onto it as a paste of its path — quoted (`'/tmp/my shot.png'`),
//! with backslash-escaped spaces (`/tmp/my\ shot.png`) or as a `file://`
//! URL — so a paste that is nothing but paths of image files is taken as
//! images to attach. Pure: whether each path really is an image is the
//! host's to say ([`crate::run::Host::image`]).

use riot_protocol::ImageSource;

/// What a pasted path turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PastedImage {
    /// An image file, read and checked, ready to send.
    Image(ImageSource),
    /// A file that is not an image Riot can send; the reason follows its
    /// name ("is not a valid image/png image (…)").
    Refused(String),
    /// No such file (the paste was text that looks like a path).
    NotAFile,
}

/// The file name extensions taken as images (the formats Read sends).
const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// Whether `path` names a PNG, JPEG, GIF or WebP file by its extension.
pub fn has_image_extension(path: &str) -> bool {
    file_name(path).rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && IMAGE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    })
}

/// The last component of `path`, as shown in `[image: NAME]`.
pub fn file_name(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// One pasted word as a path: a `file://` URL becomes its (decoded) path.
fn as_path(word: &str) -> Option<String> {
    if word.starts_with("file:") {
        let url = url::Url::parse(word).ok()?;
        if url.scheme() != "file" {
            return None;
        }
        return url
            .to_file_path()
            .ok()
            .and_then(|p| p.to_str().map(str::to_owned));
    }
    // Another URL is text, not a path.
    (!word.contains("://")).then(|| word.to_owned())
}

/// The image files a paste names, in order, when the paste is nothing but
/// paths of PNG, JPEG, GIF or WebP files (one or more, separated by
/// whitespace or newlines; quoted, backslash-escaped or `file://` URLs);
/// `None` for anything else, which stays text.
pub fn image_paths(pasted: &str) -> Option<Vec<String>> {
    let pasted = pasted.trim();
    if pasted.is_empty() {
        return None;
    }
    // Some terminals end each dropped file with a newline: split per line,
    // then as a shell would within a line.
    let mut paths = Vec::new();
    for line in pasted.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let words = shell_words::split(line).ok()?;
        for word in words {
            let path = as_path(&word)?;
            if !has_image_extension(&path) {
                return None;
            }
            paths.push(path);
        }
    }
    (!paths.is_empty()).then_some(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(pasted: &str) -> Option<Vec<String>> {
        image_paths(pasted)
    }

    #[test]
    fn a_plain_absolute_path_is_an_image_to_attach() {
        assert_eq!(
            paths("/home/me/shot.png"),
            Some(vec!["/home/me/shot.png".into()])
        );
        assert_eq!(
            paths("  ~/Desktop/a.JPG \n"),
            Some(vec!["~/Desktop/a.JPG".into()])
        );
        assert_eq!(paths("shots/a.webp"), Some(vec!["shots/a.webp".into()]));
    }

    #[test]
    fn quoted_and_escaped_paths_lose_their_quoting() {
        assert_eq!(
            paths("'/tmp/my shot.png'"),
            Some(vec!["/tmp/my shot.png".into()])
        );
        assert_eq!(
            paths("\"/tmp/my shot.gif\""),
            Some(vec!["/tmp/my shot.gif".into()])
        );
        assert_eq!(
            paths(r"/tmp/Screen\ Shot\ (2).jpeg"),
            Some(vec!["/tmp/Screen Shot (2).jpeg".into()])
        );
    }

    #[test]
    fn a_file_url_is_decoded_to_its_path() {
        assert_eq!(
            paths("file:///tmp/my%20shot.png"),
            Some(vec!["/tmp/my shot.png".into()])
        );
        assert_eq!(
            paths("file://localhost/tmp/a%C3%A9.png"),
            Some(vec!["/tmp/aé.png".into()])
        );
        assert_eq!(paths("https://example.com/a.png"), None);
    }

    #[test]
    fn several_dropped_files_are_all_attached_in_order() {
        assert_eq!(
            paths("'/tmp/a b.png' /tmp/c.jpg"),
            Some(vec!["/tmp/a b.png".into(), "/tmp/c.jpg".into()])
        );
        assert_eq!(
            paths("file:///tmp/a.png\r\nfile:///tmp/b.gif\r\n"),
            Some(vec!["/tmp/a.png".into(), "/tmp/b.gif".into()])
        );
    }

    #[test]
    fn anything_else_stays_text() {
        for text in [
            "",
            "   ",
            "look at /tmp/shot.png",
            "/tmp/notes.txt",
            "/tmp/shot.png /tmp/notes.md",
            "/tmp/png",
            "/tmp/.png",
            "'/tmp/unclosed.png",
            "fn main() {}\n",
            "shot.png?",
        ] {
            assert_eq!(paths(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_name_shown_is_the_last_component() {
        assert_eq!(file_name("/tmp/my shot.png"), "my shot.png");
        assert_eq!(file_name("shot.png"), "shot.png");
        assert!(has_image_extension("/a/b.JPEG"));
        assert!(!has_image_extension("/a.png/b"));
    }
}
