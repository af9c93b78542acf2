//! Running `riot` under a pseudo-terminal (portable-pty), as a person at a
//! terminal would: stdin, stdout and stderr are all the terminal. The
//! output is read by a thread into a buffer; the child is SIGKILLed and
//! reaped when the handle drops, so a failing test leaves nothing behind.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

use super::{PATIENCE, World, signal};

/// A `riot` running on a pseudo-terminal.
pub struct PtyRiot {
    child: Box<dyn Child + Send + Sync>,
    /// Kept open so the child's terminal stays; dropped after the child.
    _master: Box<dyn portable_pty::MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    exited: Option<u32>,
}

impl World {
    /// `riot ARGS` on an 80×24 pseudo-terminal, with the same hermetic
    /// environment as [`World::bare`].
    pub fn pty(&self, args: &[&str]) -> PtyRiot {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_riot"));
        cmd.args(args);
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            if key.starts_with("RIOT_")
                || key == "ANTHROPIC_API_KEY"
                || key == "OPENAI_API_KEY"
                || key == "XDG_CONFIG_HOME"
            {
                cmd.env_remove(key);
            }
        }
        // As `World::bare`: the OS sandbox off (tests/sandbox.rs covers it).
        cmd.env("RIOT_SANDBOX", "off");
        cmd.env("RIOT_HOME", self.home.path());
        cmd.env("HOME", self.home.path());
        cmd.env("TERM", "xterm-256color");
        cmd.cwd(self.project.path());
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("spawn riot on the pty");
        // Only the child holds the terminal's other end: its exit is EOF.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Linux reports EIO once the last slave descriptor closes.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        PtyRiot {
            child,
            _master: pair.master,
            writer,
            output,
            reader: Some(reader),
            exited: None,
        }
    }
}

impl PtyRiot {
    /// Everything the terminal received so far, as text.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Types `bytes` at the terminal.
    pub fn type_in(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits until the output contains `needle`.
    pub async fn wait_for(&self, needle: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !self.output().contains(needle) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "gave up waiting for {needle:?} in {:?}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits for the exit and for the last of the output; returns the exit
    /// code and the whole output.
    pub async fn finish(mut self) -> (u32, String) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.exit_code();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "riot did not finish in time: {:?}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        self.exited = Some(code);
        if let Some(reader) = self.reader.take() {
            // The child is gone, so the reader meets EOF; wait for it off
            // the runtime's threads.
            tokio::task::spawn_blocking(move || reader.join())
                .await
                .unwrap()
                .unwrap();
        }
        (code, self.output())
    }
}

impl Drop for PtyRiot {
    fn drop(&mut self) {
        if self.exited.is_none() {
            if let Some(pid) = self.child.process_id() {
                signal("KILL", i64::from(pid));
            }
            let _ = self.child.wait();
        }
    }
}

/// What a terminal shows after `raw`: carriage returns move to the start
/// of the row, `ESC [ K` erases to its end, other escape sequences are
/// ignored. Rows are returned without trailing blanks, empty rows kept.
pub fn screen(raw: &str) -> Vec<String> {
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let mut col = 0usize;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        let row = rows.last_mut().unwrap();
        match c {
            '\r' => col = 0,
            '\n' => {
                rows.push(Vec::new());
                col = 0;
            }
            '\x1b' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut last = ' ';
                    for p in chars.by_ref() {
                        if p.is_ascii_alphabetic() || p == '~' {
                            last = p;
                            break;
                        }
                    }
                    if last == 'K' {
                        row.truncate(col);
                    }
                }
            }
            c => {
                if col < row.len() {
                    row[col] = c;
                } else {
                    row.resize(col, ' ');
                    row.push(c);
                }
                col += 1;
            }
        }
    }
    rows.into_iter()
        .map(|r| r.into_iter().collect::<String>().trim_end().to_owned())
        .collect()
}
