//! The names MCP tools get in Riot: `mcp__<server>__<tool>`.
//!
//! Model APIs accept tool names of `[A-Za-z0-9_-]{1,64}`. Server names are
//! chosen by the person and validated when the configuration is read
//! ([`valid_server_name`]), so they pass through unchanged and permission
//! rules such as `mcp__github__*` mean what they say. Tool names come from
//! the server: a name that is already clean and short enough is kept as it
//! is; any other is cleaned (each other character becomes `_`), shortened
//! to fit, and given `_` plus eight hex digits of a hash of the original
//! name. The result depends only on the server and tool names (no list
//! order, no other tools), and two different tools of a server never share
//! a name unless their 32-bit hashes collide.

/// Longest tool name model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Longest server name: leaves room for a readable tool part.
pub const MAX_SERVER_NAME: usize = 32;

/// Why a server name cannot be used, worded for the person; `None` if it
/// can.
pub fn valid_server_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a server name must not be empty".into());
    }
    if name.len() > MAX_SERVER_NAME {
        return Some(format!(
            "server name `{name}` is longer than {MAX_SERVER_NAME} characters; choose a shorter one"
        ));
    }
    if !name.bytes().all(is_name_byte) {
        return Some(format!(
            "server name `{name}` may contain only letters, digits, `_` and `-` (it becomes part of tool names such as `mcp__{}__echo`)",
            clean(name)
        ));
    }
    if name.contains("__") {
        return Some(format!(
            "server name `{name}` must not contain `__` (it separates the server from the tool in `mcp__<server>__<tool>`)"
        ));
    }
    None
}

/// The Riot name of `tool` on `server` (a valid server name).
pub fn tool_name(server: &str, tool: &str) -> String {
    let prefix = format!("mcp__{server}__");
    let plain = format!("{prefix}{tool}");
    let clean_and_short =
        !tool.is_empty() && tool.bytes().all(is_name_byte) && plain.len() <= MAX_TOOL_NAME;
    if clean_and_short {
        return plain;
    }
    let suffix = format!("_{:08x}", fnv1a32(tool.as_bytes()));
    let room = MAX_TOOL_NAME
        .saturating_sub(prefix.len())
        .saturating_sub(suffix.len());
    let part: String = clean(tool).chars().take(room).collect();
    format!("{prefix}{part}{suffix}")
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Each character outside `[A-Za-z0-9_-]` becomes `_`.
fn clean(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a, 32 bits: stable across builds and platforms (unlike std's
/// `DefaultHasher`), which is what a name used in permission rules needs.
fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_short_names_pass_through() {
        assert_eq!(
            tool_name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(tool_name("fs", "list-directory"), "mcp__fs__list-directory");
    }

    #[test]
    fn other_characters_are_replaced_and_the_original_is_hashed() {
        let dotted = tool_name("srv", "files.read");
        // A literal: names appear in permission rules, so the hash must
        // never change (docs/mcp.md shows this example).
        assert_eq!(dotted, "mcp__srv__files_read_feef3122");
        // The clean spelling of the same name is a different tool.
        assert_ne!(dotted, tool_name("srv", "files_read"));
        assert_ne!(tool_name("srv", "a.b"), tool_name("srv", "a/b"));
        let unicode = tool_name("srv", "résumé");
        assert!(unicode.starts_with("mcp__srv__r_sum__"), "{unicode}");
        assert!(unicode.bytes().all(is_name_byte));
    }

    #[test]
    fn long_names_are_capped_at_64_and_stay_distinct() {
        let a = "x".repeat(80) + "a";
        let b = "x".repeat(80) + "b";
        let (na, nb) = (tool_name("server", &a), tool_name("server", &b));
        assert_eq!(na.len(), MAX_TOOL_NAME);
        assert_eq!(nb.len(), MAX_TOOL_NAME);
        assert_ne!(na, nb);
        assert!(na.starts_with("mcp__server__xxxx"));
        // Deterministic: the same input always gives the same name.
        assert_eq!(na, tool_name("server", &a));
        // Exactly 64 is still plain.
        let fits = "y".repeat(MAX_TOOL_NAME - "mcp__s__".len());
        assert_eq!(tool_name("s", &fits), format!("mcp__s__{fits}"));
    }

    #[test]
    fn an_empty_tool_name_still_gets_a_valid_name() {
        let name = tool_name("s", "");
        assert_eq!(name, format!("mcp__s___{:08x}", fnv1a32(b"")));
    }

    #[test]
    fn server_names_are_validated_with_a_reason() {
        assert_eq!(valid_server_name("github"), None);
        assert_eq!(valid_server_name("my-server_2"), None);
        let dotted = valid_server_name("github.com").unwrap();
        assert!(dotted.contains("only letters, digits"), "{dotted}");
        assert!(dotted.contains("mcp__github_com__echo"), "{dotted}");
        assert!(
            valid_server_name("a__b")
                .unwrap()
                .contains("must not contain `__`")
        );
        assert!(valid_server_name("").unwrap().contains("empty"));
        assert!(
            valid_server_name(&"s".repeat(33))
                .unwrap()
                .contains("longer than 32")
        );
    }
}
