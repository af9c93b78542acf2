//! Error classification (docs/design.md §11 "Error classification"): one
//! place turns an HTTP status, a body and headers — or an error event in
//! the middle of a stream — into a [`ProviderError`].

use riot_protocol::{ProviderError, ProviderErrorKind};
use serde_json::Value;

/// The longest server message kept verbatim.
const MAX_MESSAGE: usize = 2_000;

/// Classifies a non-success HTTP response.
pub fn classify_http(status: u16, body: &str, retry_after_ms: Option<u64>) -> ProviderError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error_obj = parsed.as_ref().and_then(|v| v.get("error")).cloned();
    let (code, message) = match &error_obj {
        Some(obj) => error_fields(obj),
        None => (String::new(), String::new()),
    };
    let message = if message.is_empty() {
        let trimmed = body.trim();
        if trimmed.is_empty() {
            format!("HTTP {status} with an empty body")
        } else {
            truncate(trimmed)
        }
    } else {
        message
    };
    let kind = kind_for(Some(status), &code, &message);
    let mut err = ProviderError::new(kind, message).with_status(status);
    err.retry_after_ms = retry_after_ms;
    err
}

/// Classifies an error object sent inside a stream (`{"type": "...",
/// "message": "..."}` or `{"code": ..., "message": ...}`).
pub fn classify_stream_error(obj: &Value) -> ProviderError {
    let (code, message) = error_fields(obj);
    let message = if message.is_empty() {
        format!(
            "the server reported an error mid-stream: {}",
            truncate(&obj.to_string())
        )
    } else {
        message
    };
    ProviderError::new(kind_for(None, &code, &message), message)
}

/// `(code or type, message)` of an Anthropic or OpenAI error object; a bare
/// string is taken as the message.
fn error_fields(obj: &Value) -> (String, String) {
    if let Some(s) = obj.as_str() {
        return (String::new(), truncate(s));
    }
    let text = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let code = match obj.get("code") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => text("type"),
    };
    // OpenAI puts `insufficient_quota` in `type` and sometimes in `code`.
    let code = if text("type") == "insufficient_quota" {
        "insufficient_quota".to_owned()
    } else {
        code
    };
    (code, truncate(&text("message")))
}

fn kind_for(status: Option<u16>, code: &str, message: &str) -> ProviderErrorKind {
    use ProviderErrorKind as K;
    let lower = message.to_ascii_lowercase();
    let overflow = code == "context_length_exceeded"
        || code == "request_too_large"
        || lower.contains("prompt is too long")
        || lower.contains("context_length_exceeded")
        || lower.contains("maximum context length")
        || lower.contains("exceed context limit")
        || lower.contains("exceeds the available context size")
        || lower.contains("context window");
    let media =
        lower.contains("image") && (lower.contains("too large") || lower.contains("exceeds"));
    match (status, code) {
        (_, "insufficient_quota") => K::QuotaExhausted,
        (Some(413), _) => K::ContextOverflow,
        (_, _) if overflow => K::ContextOverflow,
        (Some(400), _) if media => K::MediaTooLarge,
        (Some(401 | 403), _)
        | (_, "authentication_error" | "permission_error" | "invalid_api_key") => K::Auth,
        (Some(402), _) => K::Payment,
        (Some(429), _) | (_, "rate_limit_error" | "rate_limit_exceeded") => K::RateLimit,
        (Some(529 | 503), _) | (_, "overloaded_error" | "server_is_overloaded" | "slow_down") => {
            K::Overloaded
        }
        (Some(s), _) if s >= 500 => K::Server,
        (_, "api_error" | "server_error" | "internal_error") => K::Server,
        (Some(_), _) => K::InvalidRequest,
        (None, _) => K::InvalidRequest,
    }
}

fn truncate(s: &str) -> String {
    if s.len() <= MAX_MESSAGE {
        return s.to_owned();
    }
    let mut end = MAX_MESSAGE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Parses `retry-after-ms` (milliseconds) or `Retry-After` (seconds,
/// possibly fractional, or an HTTP date measured against `now_ms` from the
/// injected clock).
pub fn retry_after_ms(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now_ms: u64,
) -> Option<u64> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(ms.round() as u64);
    }
    let value = retry_after?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).round() as u64);
    }
    http_date_ms(value).map(|at| at.saturating_sub(now_ms))
}

/// An IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`) as Unix milliseconds.
fn http_date_ms(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    let days =
        riot_protocol::days_from_civil(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?);
    let secs = days * 86_400 + h * 3_600 + m * 60 + sec;
    u64::try_from(secs).ok().map(|s| s * 1_000)
}

/// Unix milliseconds as an RFC 3339 UTC timestamp to the second
/// (`2026-01-02T00:00:00Z`): when a refused `Retry-After` ends.
pub fn utc_timestamp(ms: u64) -> String {
    let secs = ms / 1_000;
    let (days, time) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = riot_protocol::civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3_600,
        time / 60 % 60,
        time % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProviderErrorKind as K;

    #[test]
    fn http_errors_are_classified_as_section_11_says() {
        let cases: &[(u16, &str, K, &str)] = &[
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                K::ContextOverflow,
                "prompt is too long: 210000 tokens > 200000 maximum",
            ),
            (
                413,
                r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
                K::ContextOverflow,
                "Request exceeds the maximum size",
            ),
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                K::ContextOverflow,
                "This model's maximum context length is 128000 tokens.",
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 7000 + 2048 > 8192, decrease input length or `max_tokens` and try again"}}"#,
                K::ContextOverflow,
                "input length and `max_tokens` exceed context limit: 7000 + 2048 > 8192, decrease input length or `max_tokens` and try again",
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
                K::ContextOverflow,
                "the request exceeds the available context size, try increasing it",
            ),
            (
                401,
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                K::Auth,
                "invalid x-api-key",
            ),
            (
                403,
                r#"{"error":{"message":"forbidden"}}"#,
                K::Auth,
                "forbidden",
            ),
            (
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
                K::RateLimit,
                "Rate limit reached",
            ),
            (
                429,
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
                K::QuotaExhausted,
                "You exceeded your current quota",
            ),
            (
                402,
                r#"{"error":{"message":"Insufficient Balance","type":"unknown_error"}}"#,
                K::Payment,
                "Insufficient Balance",
            ),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                K::Overloaded,
                "Overloaded",
            ),
            (
                503,
                "upstream unavailable",
                K::Overloaded,
                "upstream unavailable",
            ),
            (500, "", K::Server, "HTTP 500 with an empty body"),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: tool_use ids were found without tool_result blocks"}}"#,
                K::InvalidRequest,
                "messages.1: tool_use ids were found without tool_result blocks",
            ),
        ];
        for (status, body, kind, message) in cases {
            let err = classify_http(*status, body, None);
            assert_eq!(err.kind, *kind, "{status} {body}");
            assert_eq!(err.message, *message, "{status} {body}");
            assert_eq!(err.status, Some(*status));
        }
        assert!(classify_http(413, "", None).is_recoverable_by_loop());
        assert!(
            !classify_http(
                429,
                r#"{"error":{"code":"insufficient_quota","message":"q"}}"#,
                None
            )
            .is_retryable()
        );
    }

    #[test]
    fn timestamps_are_rfc3339_utc_and_agree_with_http_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(1_700_000_000_999), "2023-11-14T22:13:20Z");
        assert_eq!(utc_timestamp(1_767_225_600_000), "2026-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400_000), "2000-02-29T00:00:00Z");
        let dates = [
            ("Wed, 21 Oct 2015 07:28:00 GMT", "2015-10-21T07:28:00Z"),
            ("Tue, 29 Feb 2028 23:59:59 GMT", "2028-02-29T23:59:59Z"),
            ("Fri, 31 Dec 2100 12:00:01 GMT", "2100-12-31T12:00:01Z"),
            ("Wed, 01 Mar 2000 00:00:00 GMT", "2000-03-01T00:00:00Z"),
        ];
        for (http, rfc) in dates {
            assert_eq!(utc_timestamp(http_date_ms(http).unwrap()), rfc, "{http}");
        }
    }

    #[test]
    fn retry_after_headers_are_parsed() {
        assert_eq!(retry_after_ms(None, Some("3"), 0), Some(3_000));
        assert_eq!(retry_after_ms(None, Some("1.5"), 0), Some(1_500));
        assert_eq!(retry_after_ms(Some("250"), Some("3"), 0), Some(250));
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        assert_eq!(
            retry_after_ms(None, Some(date), 1_445_412_478_000),
            Some(2_000)
        );
        assert_eq!(
            retry_after_ms(None, Some(date), 1_445_412_490_000),
            Some(0),
            "a past date: retry now"
        );
        assert_eq!(retry_after_ms(None, Some("soon"), 0), None);
        assert_eq!(retry_after_ms(None, None, 0), None);
    }
}
