//! The plumbing every `_riot/...` request shares: [`riot_request!`], which
//! gives a request type its method name and parses its params, and
//! [`DoneResponse`], the result of a request that only acts. Below
//! `ext.rs` (the table of methods) and each module that defines requests
//! (`background.rs`, `queue.rs`, `terminals.rs`), so neither imports the
//! other's way.

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};

/// Implements the JSON-RPC plumbing of a `_riot/...` request: its method
/// name, and params parsed into the request type (left-out params parse
/// as `{}`, so a request whose fields all have defaults may omit them); a
/// parse failure is invalid-params with serde's reason. Used by every
/// `_riot/...` request module of the crate.
macro_rules! riot_request {
    ($request:ty, $method:expr, $response:ty) => {
        impl agent_client_protocol::JsonRpcMessage for $request {
            fn matches_method(method: &str) -> bool {
                method == $method
            }
            fn method(&self) -> &str {
                $method
            }
            fn to_untyped_message(
                &self,
            ) -> Result<agent_client_protocol::UntypedMessage, agent_client_protocol::Error> {
                agent_client_protocol::UntypedMessage::new($method, self)
            }
            fn parse_message(
                method: &str,
                params: &serde_json::Value,
            ) -> Result<Self, agent_client_protocol::Error> {
                if method != $method {
                    return Err(agent_client_protocol::Error::method_not_found());
                }
                let params = if params.is_null() {
                    serde_json::json!({})
                } else {
                    params.clone()
                };
                serde_json::from_value(params).map_err(|e| {
                    agent_client_protocol::Error::invalid_params()
                        .data(serde_json::json!({"error": e.to_string()}))
                })
            }
        }
        impl agent_client_protocol::JsonRpcRequest for $request {
            type Response = $response;
        }
    };
}
pub(crate) use riot_request;

/// The empty result of a request that only acts.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
pub struct DoneResponse {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}
