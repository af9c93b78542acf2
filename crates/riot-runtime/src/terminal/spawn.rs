//! Starting a terminal's program in a pseudo-terminal, with the threads
//! that read its output and wait for its exit.

use std::io::Read;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use portable_pty::PtySize;
use riot_protocol::{TerminalError, TerminalExit, TerminalSpec};
use tokio::sync::watch;

use crate::group::GroupGuard;
use crate::plain::PlainText;

use super::screen::Scrolled;
use super::{
    Core, OUTPUT_KEEP_BYTES, PtyTerminals, State, Term, lock, pty_command, terminal_process,
};

/// How long the exit waits, once the program has ended, for its last
/// output to be read: a process it left behind that still holds the
/// terminal keeps the output open, and must not keep the exit unreported.
const DRAIN_WAIT: Duration = Duration::from_millis(500);

impl PtyTerminals {
    /// Starts `spec`'s program in a new pseudo-terminal, with the threads
    /// that read its output and wait for its exit.
    pub(super) fn spawn_term(&self, spec: &TerminalSpec) -> Result<Arc<Term>, TerminalError> {
        let spawn_err = |e: &dyn std::fmt::Display| TerminalError::Spawn(e.to_string());
        let rows =
            std::num::NonZeroU16::new(spec.size.rows.max(2)).unwrap_or(std::num::NonZeroU16::MIN);
        let cols =
            std::num::NonZeroU16::new(spec.size.cols.max(10)).unwrap_or(std::num::NonZeroU16::MIN);
        let size = PtySize {
            rows: rows.get(),
            cols: cols.get(),
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = portable_pty::native_pty_system()
            .openpty(size)
            .map_err(|e| spawn_err(&e))?;
        let mut child = pair
            .slave
            .spawn_command(pty_command(&match &self.wrapper {
                Some(wrap) if !spec.outside_sandbox => wrap(terminal_process(spec)),
                _ => terminal_process(spec),
            }))
            .map_err(|e| spawn_err(&e))?;
        drop(pair.slave);
        let pid = child.process_id();
        // setsid made the child a group leader: its group id is its pid.
        let guard = GroupGuard::new(pid);
        let killer = child.clone_killer();
        let mut reader = pair.master.try_clone_reader().map_err(|e| spawn_err(&e))?;
        let writer = pair.master.take_writer().map_err(|e| spawn_err(&e))?;

        let (tick, _) = watch::channel(0u64);
        let core = Arc::new(Core {
            name: spec.name.clone(),
            state: Mutex::new(State {
                screen: vt100::Parser::new_with_callbacks(rows, cols, 0, Scrolled::default()),
                plain: vte::Parser::new(),
                text: PlainText::default(),
                typed: Vec::new(),
                exit: None,
            }),
            tick,
        });

        // The reader says when it has read everything the terminal gave,
        // so the exit is reported after the program's last output.
        let drained = Arc::new((Mutex::new(false), Condvar::new()));
        let reader_done = Arc::clone(&drained);
        let reading = Arc::clone(&core);
        std::thread::Builder::new()
            .name(format!("riot-term-read-{}", spec.name))
            .spawn(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            {
                                let mut state = lock(&reading.state);
                                let State {
                                    screen,
                                    plain,
                                    text,
                                    ..
                                } = &mut *state;
                                screen.process(&buf[..n]);
                                plain.advance(text, &buf[..n]);
                                text.cap(OUTPUT_KEEP_BYTES);
                            }
                            reading.tick.send_modify(|t| *t += 1);
                        }
                    }
                }
                let (done, read_all) = &*reader_done;
                *lock(done) = true;
                read_all.notify_all();
            })
            .map_err(|e| spawn_err(&e))?;

        let waiting = Arc::clone(&core);
        std::thread::Builder::new()
            .name(format!("riot-term-wait-{}", spec.name))
            .spawn(move || {
                let exit = match child.wait() {
                    Ok(status) => match status.signal() {
                        Some(signal) => TerminalExit {
                            code: None,
                            signal: signal_number(signal),
                        },
                        None => TerminalExit {
                            code: i32::try_from(status.exit_code()).ok(),
                            signal: None,
                        },
                    },
                    Err(_) => TerminalExit {
                        code: None,
                        signal: None,
                    },
                };
                let (done, read_all) = &*drained;
                let _ = read_all.wait_timeout_while(lock(done), DRAIN_WAIT, |done| !*done);
                lock(&waiting.state).exit = Some(exit);
                waiting.tick.send_modify(|t| *t += 1);
            })
            .map_err(|e| spawn_err(&e))?;

        Ok(Arc::new(Term {
            core,
            command: spec.command.clone(),
            outside_sandbox: spec.outside_sandbox && self.wrapper.is_some(),
            pid,
            writer: Arc::new(Mutex::new(writer)),
            master: Mutex::new(pair.master),
            killer: Mutex::new(killer),
            guard,
        }))
    }
}

fn signal_number(name: &str) -> Option<i32> {
    // portable-pty reports the signal by its description.
    [
        ("Hangup", libc::SIGHUP),
        ("Interrupt", libc::SIGINT),
        ("Killed", libc::SIGKILL),
        ("Terminated", libc::SIGTERM),
        ("Quit", libc::SIGQUIT),
        ("Aborted", libc::SIGABRT),
        ("Segmentation fault", libc::SIGSEGV),
    ]
    .iter()
    .find(|(n, _)| name.starts_with(n))
    .map(|(_, s)| *s)
}
