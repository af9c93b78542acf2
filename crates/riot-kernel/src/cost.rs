//! What `/cost` says, and where a session's cost starts. The meter that
//! counts every request is riot-providers' [`riot_providers::meter`].

use riot_protocol::{SessionCost, Usage, format_usd};

/// Where a session's cost starts: a resumed session's running total from
/// its last usage record; unknown for one that had model replies before
/// Riot recorded costs; nothing for a new one.
pub fn starting_cost(resumed: Option<&riot_store::LoadedSession>) -> SessionCost {
    match resumed {
        None => SessionCost::default(),
        Some(session) => match session.cost() {
            Some(cost) => cost.clone(),
            None => {
                // Replies in the history, or history a compaction or
                // `/clear` took away: requests were made and not priced.
                let replied = session
                    .shown
                    .iter()
                    .any(|s| matches!(s.message, riot_protocol::Message::Assistant(_)))
                    || session.message_count > session.shown.len() as u64;
                SessionCost {
                    usd: (!replied).then_some(0.0),
                    ..SessionCost::default()
                }
            }
        },
    }
}

/// Tokens for people: `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn tokens(usage: &Usage) -> String {
    format!(
        "{} input, {} output, {} read from the cache, {} written to it",
        thousands(usage.input_tokens),
        thousands(usage.output_tokens),
        thousands(usage.cache_read_tokens),
        thousands(usage.cache_write_tokens),
    )
}

/// What `/cost` answers: the session's cost (or why it is unknown, with
/// the fix) and its tokens, main and side.
pub fn describe(cost: &SessionCost) -> String {
    let requests = if cost.requests == 1 {
        "1 model request".to_owned()
    } else {
        format!("{} model requests", thousands(cost.requests))
    };
    let mut lines = vec![match (cost.usd, cost.unpriced.as_slice()) {
        (Some(_), _) => format!("Cost: {} for {requests}.", format_usd(cost.usd)),
        (None, []) => format!(
            "Cost: unknown ({requests}) — this session made requests before Riot recorded what they cost."
        ),
        (None, models) => {
            let names: Vec<String> = models.iter().map(|m| format!("`{m}`")).collect();
            format!(
                "Cost: unknown ({requests}) — no price for {}; give one in settings as \"models\": {{\"{}\": {{\"price\": {{\"input\": …, \"output\": …, \"cache_write\": …, \"cache_read\": …}}}}}} (US dollars per million tokens).",
                names.join(", "),
                models[0],
            )
        }
    }];
    lines.push(format!("Tokens: {}.", tokens(&cost.usage)));
    if cost.side_usage != Usage::default() {
        lines.push(format!(
            "Side requests (compaction summaries, auto mode's classifier, subagents): {}.",
            tokens(&cost.side_usage)
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use riot_protocol::Price;

    use super::*;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            web_searches: 0,
        }
    }

    #[test]
    fn cost_text_gives_the_figure_the_tokens_and_for_an_unknown_price_the_fix() {
        let mut cost = SessionCost::default();
        let price = Price::new(3.0, 15.0, 3.75, 0.3);
        cost.add("m", &usage(12_345, 678, 90_000, 1_000), false, Some(&price));
        assert_eq!(
            describe(&cost),
            "Cost: $0.0780 for 1 model request.\n\
             Tokens: 12,345 input, 678 output, 90,000 read from the cache, 1,000 written to it."
        );
        cost.add("local-llm", &usage(5, 6, 0, 0), true, None);
        assert_eq!(
            describe(&cost),
            "Cost: unknown (2 model requests) — no price for `local-llm`; give one in settings as \
             \"models\": {\"local-llm\": {\"price\": {\"input\": …, \"output\": …, \"cache_write\": …, \"cache_read\": …}}} \
             (US dollars per million tokens).\n\
             Tokens: 12,345 input, 678 output, 90,000 read from the cache, 1,000 written to it.\n\
             Side requests (compaction summaries, auto mode's classifier, subagents): \
             5 input, 6 output, 0 read from the cache, 0 written to it."
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
