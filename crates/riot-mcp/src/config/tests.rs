#![allow(clippy::disallowed_methods)] // tests write and read fixture files in a temp dir

use std::collections::BTreeMap;
use std::path::Path;

use riot_runtime::RealFs;

use super::*;

fn parse_text(text: &str) -> ParsedServers {
    parse(Path::new("/home/u/.riot/mcp.json"), text, ConfigScope::User)
}

#[test]
fn stdio_and_http_servers_parse_with_every_field() {
    let parsed = parse_text(
        r#"{"mcpServers": {
            "github": {"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "${GH}"}, "cwd": "tools"},
            "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
            "alias": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "disabled": true},
            "typed": {"type": "stdio", "command": "srv"},
            "bare-url": {"url": "http://localhost:1/mcp"}
        }}"#,
    );
    assert_eq!(parsed.errors, vec![]);
    assert_eq!(parsed.warnings, Vec::<String>::new());
    let by_name: BTreeMap<_, _> = parsed
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s))
        .collect();
    assert_eq!(
        by_name["github"].transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into()],
            env: [("TOKEN".to_owned(), "${GH}".to_owned())].into(),
            cwd: Some("tools".into()),
        }
    );
    assert_eq!(
        by_name["docs"].transport,
        Transport::Http {
            url: "https://example.com/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer x".to_owned())].into(),
        }
    );
    assert!(by_name["alias"].disabled);
    assert_eq!(by_name["alias"].transport.kind(), "http");
    assert_eq!(by_name["typed"].transport.kind(), "stdio");
    assert_eq!(by_name["bare-url"].transport.kind(), "http");
    assert!(!by_name["github"].disabled);
    assert_eq!(by_name["github"].scope, ConfigScope::User);
    assert_eq!(
        by_name["github"].path.as_deref(),
        Some(Path::new("/home/u/.riot/mcp.json"))
    );
}

#[test]
fn a_bad_entry_is_an_error_naming_file_and_server_and_the_others_still_load() {
    let parsed = parse_text(
        r#"{"mcpServers": {
            "good": {"command": "srv"},
            "weird": {"type": "websocket", "url": "ws://x"},
            "old": {"type": "sse", "url": "http://x/sse"},
            "noargs": {"command": "srv", "args": "--flag"},
            "nothing": {},
            "bad.name": {"command": "srv"},
            "ftp": {"type": "http", "url": "ftp://x"},
            "hdr": {"url": "http://x", "headers": {"X-A": "line\nbreak"}}
        }}"#,
    );
    let names: Vec<_> = parsed.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let errors: Vec<String> = parsed.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "/home/u/.riot/mcp.json: MCP server `weird`: unknown `type` `websocket`; use \"stdio\" or \"http\"",
            "/home/u/.riot/mcp.json: MCP server `old`: the deprecated SSE transport is not supported; use the server's streamable HTTP endpoint with \"type\": \"http\"",
            "/home/u/.riot/mcp.json: MCP server `noargs`: `args` must be an array of strings",
            "/home/u/.riot/mcp.json: MCP server `nothing`: needs `command` (a stdio server) or `url` (an HTTP server)",
            "/home/u/.riot/mcp.json: MCP server `bad.name`: server name `bad.name` may contain only letters, digits, `_` and `-` (it becomes part of tool names such as `mcp__bad_name__echo`)",
            "/home/u/.riot/mcp.json: MCP server `ftp`: `url` must start with http:// or https:// (got `ftp://x`)",
            "/home/u/.riot/mcp.json: MCP server `hdr`: `headers`: the value of `X-A` contains characters HTTP does not allow (e.g. a newline)",
        ]
    );
}

#[test]
fn unknown_keys_are_warnings_not_errors() {
    let parsed = parse_text(r#"{"mcpServers": {"s": {"command": "srv", "autoApprove": []}}}"#);
    assert_eq!(parsed.errors, vec![]);
    assert_eq!(parsed.servers.len(), 1);
    assert_eq!(
        parsed.warnings,
        ["/home/u/.riot/mcp.json: MCP server `s`: unknown key `autoApprove` ignored"]
    );
}

#[test]
fn whole_file_problems_are_one_error_without_a_server() {
    let broken = parse_text("{ not json");
    assert_eq!(broken.servers, vec![]);
    assert_eq!(broken.errors.len(), 1);
    assert_eq!(broken.errors[0].server, None);
    assert!(broken.errors[0].message.starts_with("not valid JSON"));
    let wrong = parse_text(r#"{"mcpServers": []}"#);
    assert!(
        wrong.errors[0]
            .message
            .contains("`mcpServers` must be an object")
    );
    // No `mcpServers` at all: other tools' settings, nothing for us.
    assert_eq!(parse_text(r#"{"other": 1}"#), ParsedServers::default());
}

#[test]
fn to_json_round_trips_through_parse() {
    let servers = [
        ServerConfig::session(
            "a",
            Transport::Stdio {
                command: "srv".into(),
                args: vec!["x".into()],
                env: [("K".to_owned(), "${V}".to_owned())].into(),
                cwd: Some("d".into()),
            },
        ),
        ServerConfig {
            disabled: true,
            ..ServerConfig::session(
                "b",
                Transport::Http {
                    url: "https://h/mcp".into(),
                    headers: [("X-K".to_owned(), "v".to_owned())].into(),
                },
            )
        },
    ];
    for server in servers {
        let text = serde_json::json!({"mcpServers": {server.name.clone(): server.to_json()}});
        let parsed = parse(Path::new("/f"), &text.to_string(), ConfigScope::Session);
        assert_eq!(parsed.errors, vec![]);
        assert_eq!(parsed.servers[0].transport, server.transport);
        assert_eq!(parsed.servers[0].disabled, server.disabled);
    }
}

fn write(dir: &Path, rel: &str, text: &str) {
    std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
    std::fs::write(dir.join(rel), text).unwrap();
}

#[tokio::test]
async fn project_servers_override_user_servers_only_once_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    write(
        &home,
        "mcp.json",
        r#"{"mcpServers": {"shared": {"command": "user-srv"}, "mine": {"command": "m"}}}"#,
    );
    write(
        &project,
        ".mcp.json",
        r#"{"mcpServers": {"shared": {"command": "project-srv"}, "proj": {"url": "http://localhost:1/mcp"}}}"#,
    );
    let trusted = load(&RealFs, &home, &project, true).await;
    let summary: Vec<(String, ConfigScope)> = trusted
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.scope.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("mine".to_owned(), ConfigScope::User),
            ("proj".to_owned(), ConfigScope::Project),
            ("shared".to_owned(), ConfigScope::Project),
        ]
    );
    assert!(matches!(
        &trusted.servers[2].transport,
        Transport::Stdio { command, .. } if command == "project-srv"
    ));
    assert_eq!(trusted.trust_notice(), None);

    let untrusted = load(&RealFs, &home, &project, false).await;
    let names: Vec<_> = untrusted.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["mine", "shared"]);
    assert!(matches!(
        &untrusted.servers[1].transport,
        Transport::Stdio { command, .. } if command == "user-srv"
    ));
    assert_eq!(untrusted.untrusted, ["proj", "shared"]);
    assert_eq!(
        untrusted.trust_notice().unwrap(),
        "Not starting MCP servers from the untrusted project file .mcp.json (proj, shared). Trust the project to start them."
    );

    // Missing files are simply empty.
    let nothing = load(
        &RealFs,
        &tmp.path().join("none"),
        &tmp.path().join("none"),
        true,
    )
    .await;
    assert_eq!(nothing, McpConfig::default());
}

#[tokio::test]
async fn add_and_remove_keep_the_other_keys_of_the_user_file() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    write(
        &home,
        "mcp.json",
        r#"{"$schema": "x", "mcpServers": {"old": {"command": "o", "autoApprove": ["t"]}}}"#,
    );
    let added = ServerConfig::session(
        "web",
        Transport::Http {
            url: "https://example.com/mcp".into(),
            headers: BTreeMap::new(),
        },
    );
    let path = add_server(&RealFs, &home, &added).await.unwrap();
    assert_eq!(path, home.join("mcp.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        r#"{
  "$schema": "x",
  "mcpServers": {
    "old": {
      "command": "o",
      "autoApprove": [
        "t"
      ]
    },
    "web": {
      "type": "http",
      "url": "https://example.com/mcp"
    }
  }
}
"#
    );
    let again = add_server(&RealFs, &home, &added).await.unwrap_err();
    assert!(
        matches!(again, EditError::Exists { ref name, .. } if name == "web"),
        "{again}"
    );
    let bad = ServerConfig::session("a b", added.transport.clone());
    assert!(matches!(
        add_server(&RealFs, &home, &bad).await,
        Err(EditError::Name(_))
    ));

    assert!(remove_server(&RealFs, &home, "old").await.unwrap());
    assert!(!remove_server(&RealFs, &home, "old").await.unwrap());
    let root: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        root,
        serde_json::json!({"$schema": "x", "mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp"}}})
    );
}

#[tokio::test]
async fn add_creates_the_file_and_refuses_to_overwrite_a_broken_one() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("new-home");
    let server = ServerConfig::session(
        "s",
        Transport::Stdio {
            command: "srv".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        },
    );
    add_server(&RealFs, &home, &server).await.unwrap();
    let loaded = load_file(&RealFs, &home.join(USER_FILE), ConfigScope::User).await;
    assert!(loaded.exists);
    assert_eq!(loaded.parsed.servers[0].transport, server.transport);

    write(&home, "mcp.json", "{ broken");
    let err = add_server(&RealFs, &home, &server).await.unwrap_err();
    assert!(matches!(err, EditError::Invalid { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(home.join("mcp.json")).unwrap(),
        "{ broken"
    );
}
