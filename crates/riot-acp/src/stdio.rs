//! `riot acp`'s transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! Built on the SDK's [`Lines`] rather than its `Stdio` so that a
//! connection closed by the agent (`_riot/shutdown`, SIGTERM) flushes
//! every accepted message before the process exits, without waiting for
//! the client to close stdin. Stdin and stdout are served by plain
//! threads: a blocked read must never keep the runtime (and the process)
//! from ending, and a slow client must not block a runtime worker.

use std::io::{BufRead, Write};

use agent_client_protocol::Lines;
use futures::channel::{mpsc, oneshot};
use futures::{Sink, Stream};

/// One line to write, and where to say it was written and flushed.
type Outgoing = (String, oneshot::Sender<std::io::Result<()>>);

/// The transport over this process's stdin and stdout.
pub(crate) fn stdio_lines() -> Lines<
    impl Sink<String, Error = std::io::Error> + Send + 'static,
    impl Stream<Item = std::io::Result<String>> + Send + 'static,
> {
    Lines::new(stdout_sink(), stdin_stream())
}

/// Lines of stdin; ends at end of file. The reading thread is not joined:
/// it may stay blocked in `read` until the process exits.
fn stdin_stream() -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    let (tx, rx) = mpsc::unbounded();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match stdin.read_until(b'\n', &mut buf) {
                Ok(0) => break,
                Ok(_) => {
                    while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                        buf.pop();
                    }
                    let line = String::from_utf8(std::mem::take(&mut buf)).map_err(|e| {
                        std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error())
                    });
                    let failed = line.is_err();
                    if tx.unbounded_send(line).is_err() || failed {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.unbounded_send(Err(e));
                    break;
                }
            }
        }
    });
    rx
}

/// Writes each line and a newline to stdout and flushes; a send completes
/// once the line is out, so the SDK's drain means the bytes were written.
fn stdout_sink() -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    let (tx, rx) = std::sync::mpsc::channel::<Outgoing>();
    std::thread::spawn(move || {
        let mut stdout = std::io::stdout().lock();
        while let Ok((line, done)) = rx.recv() {
            let written = stdout
                .write_all(line.as_bytes())
                .and_then(|()| stdout.write_all(b"\n"))
                .and_then(|()| stdout.flush());
            let _ = done.send(written);
        }
    });
    futures::sink::unfold(tx, async |tx, line: String| {
        let (done_tx, done_rx) = oneshot::channel();
        tx.send((line, done_tx))
            .map_err(|_| std::io::Error::other("the stdout writer stopped"))?;
        done_rx
            .await
            .map_err(|_| std::io::Error::other("the stdout writer stopped"))??;
        Ok(tx)
    })
}
