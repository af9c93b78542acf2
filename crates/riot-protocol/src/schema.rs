//! The list of wire types whose JSON Schemas are committed under
//! `schemas/` (docs/testing.md L1). `gen-schema` writes them; CI regenerates
//! and fails on a diff; the UI's TypeScript types are generated from them.

use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};

use crate::{
    AgentEvent, Message, ModelRequest, PermissionAnswer, PermissionMode, PermissionResult,
    TerminalReason, TerminalUpdate, UiPayload, Usage,
};

/// `(file stem, schema)` for every committed wire type, in a stable order.
pub fn wire_schemas() -> Vec<(&'static str, Schema)> {
    vec![
        ("agent_event", schema_for::<AgentEvent>()),
        ("message", schema_for::<Message>()),
        ("terminal_reason", schema_for::<TerminalReason>()),
        ("usage", schema_for::<Usage>()),
        ("ui_payload", schema_for::<UiPayload>()),
        ("permission_mode", schema_for::<PermissionMode>()),
        ("permission_result", schema_for::<PermissionResult>()),
        ("permission_answer", schema_for::<PermissionAnswer>()),
        ("model_request", schema_for::<ModelRequest>()),
        ("terminal_update", schema_for::<TerminalUpdate>()),
    ]
}

fn schema_for<T: JsonSchema>() -> Schema {
    SchemaGenerator::new(SchemaSettings::draft2020_12()).into_root_schema_for::<T>()
}
