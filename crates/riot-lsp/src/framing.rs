//! The base protocol of the Language Server Protocol: each JSON-RPC
//! message is preceded by a header block of `Name: value` lines ended by
//! an empty line; `Content-Length` (the body's size in bytes) is the one
//! header that matters, `Content-Type` is accepted and ignored.

use std::io;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest message Riot accepts from a server (a huge workspace's
/// diagnostics fit well inside).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Writes one message with its header.
pub async fn write_message<W: AsyncWrite + Unpin>(out: &mut W, message: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(message).map_err(io::Error::other)?;
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    out.write_all(&frame).await?;
    out.flush().await
}

/// Reads one message; `Ok(None)` at a clean end of the stream (between
/// messages). A body that is not JSON is an `InvalidData` error, which
/// the caller may skip: the framing is intact.
pub async fn read_message<R: AsyncBufRead + Unpin>(input: &mut R) -> io::Result<Option<Value>> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    let mut saw_header = false;
    loop {
        line.clear();
        let n = input.read_line(&mut line).await?;
        if n == 0 {
            return if saw_header {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a message header",
                ))
            } else {
                Ok(None)
            };
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            if saw_header {
                break;
            }
            // Stray blank lines between messages.
            continue;
        }
        saw_header = true;
        let Some((name, value)) = trimmed.split_once(':') else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a header line: {trimmed:?}"),
            ));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value.trim().parse().map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad Content-Length {value:?}"),
                )
            })?;
            length = Some(n);
        }
    }
    let Some(length) = length else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a message header without Content-Length",
        ));
    };
    if length > MAX_MESSAGE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message of {length} bytes is over the {MAX_MESSAGE_BYTES}-byte limit"),
        ));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body).await?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::io::BufReader;

    use super::*;

    #[tokio::test]
    async fn a_written_message_reads_back_and_the_length_counts_bytes() {
        let msg = json!({"jsonrpc": "2.0", "method": "x", "params": {"text": "héllo"}});
        let mut buf = Vec::new();
        write_message(&mut buf, &msg).await.unwrap();
        let body = serde_json::to_vec(&msg).unwrap();
        assert!(buf.starts_with(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()));
        assert_ne!(
            body.len(),
            msg.to_string().chars().count(),
            "é is two bytes"
        );
        let mut r = BufReader::new(buf.as_slice());
        assert_eq!(read_message(&mut r).await.unwrap(), Some(msg));
        assert_eq!(read_message(&mut r).await.unwrap(), None, "clean end");
    }

    #[tokio::test]
    async fn headers_in_any_case_with_content_type_and_back_to_back_messages() {
        let input = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]";
        let mut r = BufReader::new(&input[..]);
        assert_eq!(read_message(&mut r).await.unwrap(), Some(json!({})));
        assert_eq!(read_message(&mut r).await.unwrap(), Some(json!([1, 2, 3])));
        assert_eq!(read_message(&mut r).await.unwrap(), None);
    }

    #[tokio::test]
    async fn broken_frames_are_errors_not_hangs() {
        let mut r = BufReader::new(&b"Content-Type: x\r\n\r\n{}"[..]);
        let err = read_message(&mut r).await.unwrap_err();
        assert_eq!(err.to_string(), "a message header without Content-Length");

        let mut r = BufReader::new(&b"Content-Length: 10\r\n\r\n{}"[..]);
        assert_eq!(
            read_message(&mut r).await.unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );

        let mut r = BufReader::new(&b"Content-Length: 5\r\n"[..]);
        assert_eq!(
            read_message(&mut r).await.unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );

        let huge = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE_BYTES + 1);
        let mut r = BufReader::new(huge.as_bytes());
        assert_eq!(
            read_message(&mut r).await.unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
