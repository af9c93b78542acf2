//! A minimal ACP client over one `riot serve` WebSocket (one JSON-RPC
//! message per text frame), for the tests that drive the server.

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::PATIENCE;

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A minimal ACP client over one WebSocket.
pub struct WsClient {
    pub socket: Socket,
    pub next_id: u64,
}

impl WsClient {
    /// The next JSON-RPC message: every text frame is exactly one.
    pub async fn read(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(PATIENCE, self.socket.next())
                .await
                .expect("riot serve went silent")
                .expect("riot serve closed the WebSocket")
                .unwrap();
            match frame {
                Message::Text(text) => {
                    let message: Value = serde_json::from_str(text.as_str()).unwrap_or_else(|e| {
                        panic!("a frame is not one JSON-RPC message ({e}): {text}")
                    });
                    assert_eq!(message["jsonrpc"], "2.0", "{message}");
                    return message;
                }
                Message::Ping(_) | Message::Pong(_) => {}
                other => panic!("unexpected frame: {other:?}"),
            }
        }
    }

    /// Sends a request; returns the `session/update` payloads that arrived
    /// before its response, and the response.
    pub async fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let (updates, response) = self.exchange(method, params).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        (updates, response["result"].clone())
    }

    /// Sends a request without waiting for its response; its id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.socket
            .send(Message::Text(request.to_string().into()))
            .await
            .unwrap();
        id
    }

    /// Reads what the server still sends until the socket closes; the
    /// response with `id`, if one came.
    pub async fn response_before_close(&mut self, id: u64) -> Option<Value> {
        let mut found = None;
        while let Ok(Some(Ok(frame))) = tokio::time::timeout(PATIENCE, self.socket.next()).await {
            let Message::Text(text) = frame else { continue };
            let message: Value = serde_json::from_str(text.as_str()).unwrap();
            if message["id"] == json!(id) && message.get("method").is_none() {
                found = Some(message);
            }
        }
        found
    }

    /// [`call`](Self::call), returning the whole response (error or not).
    pub async fn exchange(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.send(method, params).await;
        let mut updates = Vec::new();
        loop {
            let message = self.read().await;
            if message["method"] == "session/update" {
                updates.push(message["params"]["update"].clone());
            } else if message["id"] == id {
                return (updates, message);
            } else {
                panic!("unexpected message: {message}");
            }
        }
    }
}
