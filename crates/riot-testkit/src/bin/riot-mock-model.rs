//! `riot-mock-model --script FILE [--port N]`: the strict mock model
//! server for tests written in other languages. Prints `PORT n` on the
//! first line of stdout, then serves until killed. Recorded requests are
//! at `GET /_mock/requests`.

#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::print_stderr)] // a binary edge: reads its script file, talks on stdio

use std::io::Write;
use std::process::ExitCode;

use riot_testkit::{MockServer, Script};

fn usage() -> ExitCode {
    eprintln!("usage: riot-mock-model --script FILE [--port N]");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut script_path = None;
    let mut port: u16 = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script_path = args.next(),
            "--port" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    let Some(path) = script_path else {
        return usage();
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("riot-mock-model: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let script: Script = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("riot-mock-model: {path} is not a valid script: {e}");
            return ExitCode::from(2);
        }
    };
    let server = match MockServer::start_on(script, port).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("riot-mock-model: cannot listen on port {port}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "PORT {}", server.port());
    let _ = stdout.flush();
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
