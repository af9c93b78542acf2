//! The terminal UI of `riot`: an inline view at the bottom of the terminal
//! that drives one session through its [`riot_kernel::SessionHandle`].
//!
//! Finished messages are written into the terminal's own scrollback
//! (`Terminal::insert_before` with scrolling regions), so they can be
//! scrolled, searched and selected with the terminal's tools and stay after
//! exit; only the live area — the block of the reply still streaming,
//! running tools, a question, the composer and the status line — is
//! redrawn, by ratatui's diff of the previous frame.
//!
//! The state machine ([`app::App`]) is pure: keys, session events and
//! questions go in, [`app::Effect`]s and rows for the scrollback come out,
//! and [`view::draw`] renders it into any ratatui buffer. [`run()`] wires it
//! to a real terminal and a session.

pub mod app;
pub mod attach;
pub mod composer;
pub mod highlight;
pub mod markdown;
pub mod menu;
pub mod picker;
pub mod preview;
pub mod run;
pub mod theme;
pub mod tools;
pub mod view;
pub mod wrap;

pub use attach::PastedImage;
pub use run::{Host, McpSummary, RunOptions, Summary, run};
pub use theme::Theme;
