//! Printing for commands whose output may go to a pipe that is closed
//! early (`riot sessions show ID | head -1`). `println!` panics when the
//! reader has gone (EPIPE: exit 101 and a panic message); [`outln!`] and
//! [`errln!`] stop writing to that stream instead and the command ends as
//! it would have — exit 0 after a successful listing. Any other write
//! error is remembered, and `main` turns a success into exit 1.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `args` and a newline to `stream`, unless it was found closed.
fn line(stream: &mut dyn Write, closed: &AtomicBool, args: fmt::Arguments<'_>) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    let written = stream
        .write_fmt(args)
        .and_then(|()| stream.write_all(b"\n"))
        .and_then(|()| stream.flush());
    if let Err(e) = written {
        closed.store(true, Ordering::Relaxed);
        if e.kind() != io::ErrorKind::BrokenPipe {
            WRITE_FAILED.store(true, Ordering::Relaxed);
        }
    }
}

/// One line on stdout.
pub fn out_line(args: fmt::Arguments<'_>) {
    line(&mut io::stdout().lock(), &STDOUT_CLOSED, args);
}

/// One line on stderr.
pub fn err_line(args: fmt::Arguments<'_>) {
    line(&mut io::stderr().lock(), &STDERR_CLOSED, args);
}

/// Whether writing failed for a reason other than a closed pipe (a full
/// disk): the command's output is incomplete.
pub fn write_failed() -> bool {
    WRITE_FAILED.load(Ordering::Relaxed)
}

/// `println!` that ends quietly on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::out::out_line(format_args!($($arg)*)) };
}

/// `eprintln!` that ends quietly on a closed pipe.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::out::err_line(format_args!($($arg)*)) };
}

pub(crate) use {errln, outln};

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that has gone away after `room` bytes.
    struct Pipe {
        room: usize,
        got: Vec<u8>,
        error: io::ErrorKind,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(self.error.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_stops_the_output_without_failing() {
        let closed = AtomicBool::new(false);
        let mut pipe = Pipe {
            room: 6,
            got: Vec::new(),
            error: io::ErrorKind::BrokenPipe,
        };
        for i in 0..5 {
            line(&mut pipe, &closed, format_args!("line {i}"));
        }
        assert_eq!(pipe.got, b"line 0");
        assert!(closed.load(Ordering::Relaxed));
        assert!(!write_failed(), "a reader going away is not a failure");
    }
}
