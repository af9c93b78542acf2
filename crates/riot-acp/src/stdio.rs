//! `riot acp`'s transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Built on the SDK's [`Lines`] rather than its `Stdio` so that a
//! connection closed by the agent (`_riot/shutdown`, SIGTERM) flushes
//! every accepted message before the process exits, without waiting for
//! the client to close stdin. Stdin and stdout are served by plain
//! threads: a blocked read must never keep the runtime (and the process)
//! from ending, and a slow client must not block a runtime worker.
//!
//! A line that is not UTF-8 or not JSON, or is longer than
//! [`MAX_MESSAGE_BYTES`] (read through without being held), never reaches
//! the SDK: the reading thread answers it with a short parse error
//! ([`frames`](crate::frames)) and reads on.

use std::io::{self, BufRead, Write};

use agent_client_protocol::Lines;
use futures::channel::{mpsc, oneshot};
use futures::{Sink, Stream};

use crate::frames::{self, HEAD_BYTES, MAX_MESSAGE_BYTES, Refusal, Refused};

/// Told once a line has been written and flushed (or failed).
type Written = Box<dyn FnOnce(io::Result<()>) + Send>;

/// One line to write, and what to tell once it is out.
type Outgoing = (String, Written);

/// The transport over this process's stdin and stdout.
pub(crate) fn stdio_lines() -> Lines<
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
> {
    let writer = stdout_writer();
    Lines::new(stdout_sink(writer.clone()), stdin_stream(writer))
}

/// One line of input, without its end of line.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Whole(Vec<u8>),
    /// Longer than the limit: its length and first [`HEAD_BYTES`] bytes.
    TooLong {
        length: usize,
        head: Vec<u8>,
    },
}

/// Reads the next line, holding at most `max` bytes of it; `None` at end
/// of input. A last line without a newline still counts.
fn read_line(input: &mut impl BufRead, max: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    // Set once the line outgrew `max`: its length so far and its head.
    let mut discarded: Option<(usize, Vec<u8>)> = None;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            break;
        }
        any = true;
        let newline = available.iter().position(|b| *b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        if discarded.is_none() && line.len() + chunk.len() > max {
            let mut head = std::mem::take(&mut line);
            let length = head.len();
            head.truncate(HEAD_BYTES);
            discarded = Some((length, head));
        }
        match &mut discarded {
            Some((length, head)) => {
                *length += chunk.len();
                let wanted = HEAD_BYTES.saturating_sub(head.len()).min(chunk.len());
                head.extend_from_slice(&chunk[..wanted]);
            }
            None => line.extend_from_slice(chunk),
        }
        let used = chunk.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    Ok(Some(match discarded {
        Some((length, head)) => Line::TooLong { length, head },
        None => {
            while line.last() == Some(&b'\r') {
                line.pop();
            }
            Line::Whole(line)
        }
    }))
}

/// Reads `input` line by line: JSON lines go to `lines`, every other line
/// is answered through `reply`, which returns once the answer is written
/// (false: it could not be, and reading stops). Ends at end of input, on a
/// read error (passed on), or when nobody takes the lines any more.
fn pump(
    input: &mut impl BufRead,
    max: usize,
    lines: &mpsc::UnboundedSender<io::Result<String>>,
    reply: impl Fn(String) -> bool,
) {
    loop {
        let screened = match read_line(input, max) {
            Ok(None) => return,
            Ok(Some(Line::Whole(bytes))) => frames::screen(bytes),
            Ok(Some(Line::TooLong { length, head })) => {
                Err(Refused::new(Refusal::TooLong, &head, length))
            }
            Err(e) => {
                let _ = lines.unbounded_send(Err(e));
                return;
            }
        };
        let going_on = match screened {
            Ok(line) => lines.unbounded_send(Ok(line)).is_ok(),
            Err(refused) => reply(refused.response()),
        };
        if !going_on {
            return;
        }
    }
}

/// Lines of stdin; ends at end of file. The reading thread is not joined:
/// it may stay blocked in `read` until the process exits. A refused line
/// is answered on `stdout` before the next line is read.
fn stdin_stream(
    stdout: std::sync::mpsc::Sender<Outgoing>,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    let (tx, rx) = mpsc::unbounded();
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        pump(&mut stdin, MAX_MESSAGE_BYTES, &tx, |answer| {
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            let written: Written = Box::new(move |result| {
                let _ = done_tx.send(result);
            });
            stdout.send((answer, written)).is_ok() && matches!(done_rx.recv(), Ok(Ok(())))
        });
    });
    rx
}

/// The thread that writes each line and a newline to stdout and flushes.
fn stdout_writer() -> std::sync::mpsc::Sender<Outgoing> {
    let (tx, rx) = std::sync::mpsc::channel::<Outgoing>();
    std::thread::spawn(move || {
        let mut stdout = io::stdout().lock();
        while let Ok((line, done)) = rx.recv() {
            let written = stdout
                .write_all(line.as_bytes())
                .and_then(|()| stdout.write_all(b"\n"))
                .and_then(|()| stdout.flush());
            done(written);
        }
    });
    tx
}

/// The SDK's side of stdout: a send completes once the line is out, so
/// the SDK's drain means the bytes were written.
fn stdout_sink(
    writer: std::sync::mpsc::Sender<Outgoing>,
) -> impl Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold(writer, async |writer, line: String| {
        let (done_tx, done_rx) = oneshot::channel();
        let written: Written = Box::new(move |result| {
            let _ = done_tx.send(result);
        });
        writer
            .send((line, written))
            .map_err(|_| io::Error::other("the stdout writer stopped"))?;
        done_rx
            .await
            .map_err(|_| io::Error::other("the stdout writer stopped"))??;
        Ok(writer)
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io::Cursor;

    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut input = Cursor::new(input);
        std::iter::from_fn(|| read_line(&mut input, max).unwrap()).collect()
    }

    #[test]
    fn lines_end_at_newlines_and_a_long_one_keeps_only_its_head() {
        assert_eq!(
            lines(b"ab\r\n\ncd", 8),
            [
                Line::Whole(b"ab".to_vec()),
                Line::Whole(Vec::new()),
                Line::Whole(b"cd".to_vec())
            ]
        );
        assert_eq!(lines(b"12345678\n", 8), [Line::Whole(b"12345678".to_vec())]);
        // A tiny buffer: the line arrives in many pieces.
        let long: Vec<u8> = (0..HEAD_BYTES * 3)
            .map(|i| b'a' + u8::try_from(i % 26).unwrap())
            .collect();
        let mut input = long.clone();
        input.extend_from_slice(b"\nok\n");
        let mut reader = io::BufReader::with_capacity(7, Cursor::new(input));
        assert_eq!(
            read_line(&mut reader, 10).unwrap(),
            Some(Line::TooLong {
                length: long.len(),
                head: long[..HEAD_BYTES].to_vec()
            })
        );
        assert_eq!(
            read_line(&mut reader, 10).unwrap(),
            Some(Line::Whole(b"ok".to_vec()))
        );
        assert_eq!(read_line(&mut reader, 10).unwrap(), None);
        // Outgrown after more than the head was held.
        let mut reader = io::BufReader::with_capacity(7, Cursor::new(long.clone()));
        assert_eq!(
            read_line(&mut reader, HEAD_BYTES * 2).unwrap(),
            Some(Line::TooLong {
                length: long.len(),
                head: long[..HEAD_BYTES].to_vec()
            })
        );
    }

    #[test]
    fn refused_lines_are_answered_and_reading_goes_on() {
        let input = b"\xff\xfe\n{\"a\":1}\nnot json\n0123456789ABC\n[]\n";
        let (tx, mut rx) = mpsc::unbounded();
        let answers = RefCell::new(Vec::new());
        pump(&mut Cursor::new(&input[..]), 12, &tx, |answer| {
            answers.borrow_mut().push(answer);
            true
        });
        drop(tx);
        let mut passed = Vec::new();
        while let Ok(line) = rx.try_recv() {
            passed.push(line.unwrap());
        }
        assert_eq!(passed, ["{\"a\":1}", "[]"]);
        let messages: Vec<String> = answers
            .into_inner()
            .iter()
            .map(|a| {
                let v: serde_json::Value = serde_json::from_str(a).unwrap();
                assert_eq!(v["id"], serde_json::Value::Null);
                assert_eq!(v["error"]["code"], -32700);
                v["error"]["message"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("not valid UTF-8"), "{messages:?}");
        assert!(messages[1].contains("not valid JSON"), "{messages:?}");
        assert!(messages[2].contains("longer than"), "{messages:?}");
        assert!(
            messages[2].ends_with("13 bytes: \"0123456789ABC\""),
            "{messages:?}"
        );
    }
}
