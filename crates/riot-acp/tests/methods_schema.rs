//! `schemas/riot_methods.json` is the `_riot/...` methods' types as the
//! Rust code has them, and covers exactly the methods the agent
//! advertises.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // reads a committed file

use std::collections::BTreeSet;

use riot_acp::methods::{riot_methods_schema, schema_method_names};

#[test]
fn the_committed_schema_is_the_rust_types_schema() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/riot_methods.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo run -p riot-acp --bin gen-riot-schema`",
            path.display()
        )
    });
    let current = serde_json::to_string_pretty(&riot_methods_schema()).unwrap() + "\n";
    assert!(
        committed == current,
        "{} is stale; run `cargo run -p riot-acp --bin gen-riot-schema`",
        path.display()
    );
}

#[test]
fn every_advertised_method_has_a_schema_and_every_schema_a_method() {
    let meta = riot_acp::ext::capabilities_meta();
    let riot = &meta["riot"];
    let advertised: BTreeSet<String> = ["requests", "notifications"]
        .iter()
        .flat_map(|k| riot[*k].as_array().unwrap().iter())
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    let schema: BTreeSet<String> = schema_method_names().into_iter().collect();
    assert_eq!(advertised, schema);
}

#[test]
fn a_request_has_params_and_a_result_and_a_notification_params() {
    let schema = riot_methods_schema();
    let properties = schema.get("properties").unwrap();
    let shape = |method: &str| -> Vec<String> {
        let mut keys: Vec<String> = properties[method]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    assert_eq!(shape("_riot/queue"), ["params", "result"]);
    assert_eq!(
        properties["_riot/queue"]["properties"]["result"]["$ref"],
        "#/$defs/QueueResponse"
    );
    assert_eq!(shape("_riot/queue_update"), ["params"]);
    assert_eq!(
        properties["_riot/terminal"]["properties"]["params"]["$ref"],
        "#/$defs/TerminalNotification"
    );
}
