//! Keeps the configured API key out of everything a provider hands out
//! (docs/design.md §11: keys never printed). Some servers echo the key they
//! were sent in an error body (`{"error": "invalid key sk-…"}`); that text
//! becomes a [`ProviderError`]'s message, a `Retrying` event's reason, and
//! from there what faces print and transcripts store. The transport passes
//! every error and event through one [`Redactor`] before it leaves the
//! provider, so no face has to remember to.

use std::fmt;

use riot_protocol::provider::ErrorDetail;
use riot_protocol::{ProviderError, ProviderEvent};

/// What stands in for a key.
pub const REDACTED: &str = "[REDACTED]";

/// The truncation mark of `classify` (a message cut at 2 000 characters).
const CUT: char = '…';

/// The shortest start of a key, cut off by truncation at the very end of a
/// message, that is still redacted. Shorter starts (`sk-`) say nothing
/// about the key and would match ordinary text by accident.
const MIN_CUT_PREFIX: usize = 4;

/// Replaces configured key values in text. Its `Debug` never shows them.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Non-empty values, longest first (a key containing another is
    /// replaced whole).
    secrets: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secret(s))", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor for these values; empty ones are ignored (an empty
    /// string would "occur" everywhere).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets }
    }

    /// `text` with every occurrence of a secret replaced by [`REDACTED`];
    /// a secret's start cut off by truncation (the text ends with `…`) is
    /// replaced too.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        if let Some(body) = out.strip_suffix(CUT) {
            for secret in &self.secrets {
                let cut = secret
                    .char_indices()
                    .map(|(i, _)| i)
                    .filter(|&i| i >= MIN_CUT_PREFIX)
                    .rev()
                    .find(|&i| body.ends_with(&secret[..i]));
                if let Some(len) = cut {
                    out = format!("{}{REDACTED}{CUT}", &body[..body.len() - len]);
                    break;
                }
            }
        }
        out
    }

    /// The error with its message and detail redacted.
    pub fn error(&self, mut error: ProviderError) -> ProviderError {
        if self.secrets.is_empty() {
            return error;
        }
        error.message = self.text(&error.message);
        error.detail = error.detail.map(|d| ErrorDetail(self.text(&d.0)));
        error
    }

    /// The event with any server text in it (a `Retrying` reason)
    /// redacted. The model's own content is left as it is.
    pub fn event(&self, event: ProviderEvent) -> ProviderEvent {
        match event {
            ProviderEvent::Retrying {
                attempt,
                delay_ms,
                kind,
                reason,
            } if !self.secrets.is_empty() => ProviderEvent::Retrying {
                attempt,
                delay_ms,
                kind,
                reason: self.text(&reason),
            },
            other => other,
        }
    }

    /// One item of a provider stream, redacted.
    pub fn item(
        &self,
        item: Result<ProviderEvent, ProviderError>,
    ) -> Result<ProviderEvent, ProviderError> {
        match item {
            Ok(event) => Ok(self.event(event)),
            Err(error) => Err(self.error(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use riot_protocol::ProviderErrorKind;

    use super::*;

    const KEY: &str = "sk-live-0123456789abcdef";

    #[test]
    fn every_occurrence_of_the_key_is_replaced() {
        let r = Redactor::new([KEY]);
        assert_eq!(
            r.text(&format!("invalid key {KEY}; sent: Bearer {KEY}")),
            "invalid key [REDACTED]; sent: Bearer [REDACTED]"
        );
        assert_eq!(r.text("nothing secret here"), "nothing secret here");
    }

    #[test]
    fn an_empty_key_redacts_nothing_and_a_short_one_is_still_redacted() {
        let empty = Redactor::new([""]);
        assert_eq!(empty.text("a b c"), "a b c");
        let short = Redactor::new(["abc"]);
        assert_eq!(short.text("key abc rejected"), "key [REDACTED] rejected");
    }

    #[test]
    fn a_key_containing_another_is_replaced_whole() {
        let r = Redactor::new(["sk-1", "sk-1-long-key"]);
        assert_eq!(r.text("got sk-1-long-key"), "got [REDACTED]");
    }

    #[test]
    fn a_key_cut_by_truncation_is_redacted_but_a_three_character_start_is_not() {
        let r = Redactor::new([KEY]);
        assert_eq!(
            r.text("… invalid key sk-live-0123…"),
            "… invalid key [REDACTED]…"
        );
        assert_eq!(r.text("see the sk-…"), "see the sk-…");
        assert_eq!(
            r.text(&format!("{KEY} and sk-live…")),
            "[REDACTED] and [REDACTED]…"
        );
    }

    #[test]
    fn errors_and_retrying_reasons_are_redacted_content_is_not() {
        let r = Redactor::new([KEY]);
        let mut error = ProviderError::new(ProviderErrorKind::Auth, format!("bad key {KEY}"));
        error.detail = Some(ErrorDetail(format!("sent {KEY}")));
        let error = r.error(error.with_status(401));
        assert_eq!(error.message, "bad key [REDACTED]");
        assert_eq!(error.detail, Some(ErrorDetail("sent [REDACTED]".into())));
        assert_eq!(error.status, Some(401));
        let retrying = r.event(ProviderEvent::Retrying {
            attempt: 2,
            delay_ms: 500,
            kind: ProviderErrorKind::Auth,
            reason: format!("bad key {KEY}"),
        });
        assert_eq!(
            retrying,
            ProviderEvent::Retrying {
                attempt: 2,
                delay_ms: 500,
                kind: ProviderErrorKind::Auth,
                reason: "bad key [REDACTED]".into(),
            }
        );
        let started = ProviderEvent::Started {
            model: KEY.to_owned(),
        };
        assert_eq!(r.event(started.clone()), started);
        assert_eq!(format!("{r:?}"), "Redactor(1 secret(s))");
    }
}
