//! What is typed into a terminal: named keys as the bytes a terminal
//! sends, and the typed text as the command lines a shell would read.

/// `input` with its named keys turned into the bytes a terminal sends.
/// A `<…>` that names no key is typed as it stands.
pub fn encode_keys(input: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find('<') {
        out.extend_from_slice(&rest.as_bytes()[..start]);
        let after = &rest[start..];
        match after
            .find('>')
            .and_then(|end| key_bytes(&after[1..end]).map(|k| (k, end)))
        {
            Some((bytes, end)) => {
                out.extend_from_slice(&bytes);
                rest = &after[end + 1..];
            }
            None => {
                out.push(b'<');
                rest = &after[1..];
            }
        }
    }
    out.extend_from_slice(rest.as_bytes());
    out
}

/// The bytes of the key called `name`, if it names one.
fn key_bytes(name: &str) -> Option<Vec<u8>> {
    let fixed: &[u8] = match name.to_ascii_lowercase().as_str() {
        "enter" | "cr" | "return" => b"\r",
        "tab" => b"\t",
        "esc" | "escape" => b"\x1b",
        "backspace" | "bs" => b"\x7f",
        "space" => b" ",
        "lt" => b"<",
        "up" => b"\x1b[A",
        "down" => b"\x1b[B",
        "right" => b"\x1b[C",
        "left" => b"\x1b[D",
        "home" => b"\x1b[H",
        "end" => b"\x1b[F",
        "delete" | "del" => b"\x1b[3~",
        "pageup" => b"\x1b[5~",
        "pagedown" => b"\x1b[6~",
        other => {
            let letter = other.strip_prefix("c-")?;
            let [c] = letter.as_bytes() else {
                return None;
            };
            return c.is_ascii_lowercase().then(|| vec![c - b'a' + 1]);
        }
    };
    Some(fixed.to_vec())
}

/// What the shell analysis judges for a write: the typed text as the
/// command lines it would be at a shell prompt (Enter ends a line; other
/// keys and control characters are dropped).
pub fn typed_as_command(input: &str) -> String {
    String::from_utf8_lossy(&encode_keys(input))
        .chars()
        .filter_map(|c| match c {
            '\r' | '\n' => Some('\n'),
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}
