//! Where a run's prompts come from: the argument or all of stdin, or
//! JSON lines on stdin; and what a run reads before any session exists.

use std::io::Read;

use riot_config::FlagLayer;
use tokio::io::AsyncBufReadExt;

use crate::cli::{ExecArgs, InputFormat, SharedOptions};

use super::{STDIN_HINT, Terminal, input, options, usage};

/// Why a run has no prompt to send: a usage error, said on stderr.
#[derive(Debug, thiserror::Error)]
pub(super) enum PromptError {
    /// Reading the next JSON line of stdin failed.
    #[error("cannot read stdin: {0}")]
    ReadLine(#[source] std::io::Error),
    /// An input line is not a user message.
    #[error(transparent)]
    Line(#[from] input::InputError),
    /// The JSON lines ended before the first user message.
    #[error("no user message on stdin: send one JSON line per message, as {shape}", shape = input::SHAPE)]
    NoUserMessage,
    /// Reading the prompt (all of stdin) failed.
    #[error("cannot read the prompt from stdin: {0}")]
    ReadAll(#[source] std::io::Error),
    /// Neither the argument nor stdin holds a prompt.
    #[error("no prompt: pass it as an argument or on stdin")]
    NoPrompt,
}

/// Where the prompts come from: the argument or all of stdin, or JSON
/// lines on stdin.
pub(super) enum Prompts {
    One(Option<String>),
    Lines(tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>),
}

impl Prompts {
    /// The next prompt; `Ok(None)` at the end.
    pub(super) async fn next(&mut self) -> Result<Option<String>, PromptError> {
        match self {
            Prompts::One(prompt) => Ok(prompt.take()),
            Prompts::Lines(lines) => loop {
                let line = lines.next_line().await.map_err(PromptError::ReadLine)?;
                let Some(line) = line else { return Ok(None) };
                if let Some(prompt) = input::user_message(&line)? {
                    return Ok(Some(prompt));
                }
            },
        }
    }
}

/// The prompt of `--input-format text`: the argument, or all of stdin.
fn text_prompt(prompt: Option<&str>, terminal: Terminal) -> Result<String, PromptError> {
    let prompt = match prompt {
        Some(p) => p.to_owned(),
        None => {
            if terminal.stdin_is_tty {
                eprintln!("{STDIN_HINT}");
            }
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(PromptError::ReadAll)?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(PromptError::NoPrompt);
    }
    Ok(prompt)
}

/// What a run reads before any session exists: its permission flags, its
/// terminal, and its prompts with the first one already read.
pub(super) struct Input {
    pub(super) flags: FlagLayer,
    pub(super) terminal: Terminal,
    pub(super) prompts: Prompts,
    pub(super) first: String,
}

/// Checks the options and reads the first prompt, so a bad option or
/// first line is a usage error before any session exists. `Err` is the
/// exit code, said on stderr.
pub(super) async fn read_input(shared: &SharedOptions, args: &ExecArgs) -> Result<Input, i32> {
    let options = &args.options;
    if let Err(e) = options::check(options, args.prompt.as_deref()) {
        return Err(usage(e));
    }
    let flags = options::flag_layer(shared, options).map_err(usage)?;
    let terminal = Terminal::detect();
    let mut prompts = match options.input_format {
        InputFormat::Text => match text_prompt(args.prompt.as_deref(), terminal) {
            Ok(p) => Prompts::One(Some(p)),
            Err(e) => return Err(usage(e)),
        },
        InputFormat::StreamJson => {
            Prompts::Lines(tokio::io::BufReader::new(tokio::io::stdin()).lines())
        }
    };
    // The first prompt before anything else, so a bad first line is a
    // usage error before any session exists.
    let first = match prompts.next().await {
        Ok(Some(p)) => p,
        Ok(None) => return Err(usage(PromptError::NoUserMessage)),
        Err(e) => return Err(usage(e)),
    };
    Ok(Input {
        flags,
        terminal,
        prompts,
        first,
    })
}
