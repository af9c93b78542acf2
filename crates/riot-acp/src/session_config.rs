//! Session configuration options (`session/set_config_option`,
//! `config_option_update`): the model (category `model`), the thinking
//! level (category `thought_level`, only for a model that can think) and
//! the permission mode (category `mode`), built from the session's status.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
};
use riot_kernel::SessionStatus;
use riot_protocol::{PermissionMode, ThinkingLevel};

use crate::mapping;

/// The id of the model option.
pub const MODEL: &str = "model";
/// The id of the thinking option.
pub const THINKING: &str = "thinking";
/// The id of the permission mode option.
pub const MODE: &str = "mode";

/// What the client was last told of a session's options, to tell it only
/// of changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub model: String,
    pub mode: PermissionMode,
    pub thinking: ThinkingLevel,
}

impl Shown {
    pub fn of(status: &SessionStatus) -> Self {
        Self {
            model: status.model.clone(),
            mode: status.mode,
            thinking: status.thinking,
        }
    }
}

/// A model a session offers: its id and a name for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub id: String,
    pub name: String,
}

impl Choice {
    /// A model known by its id alone.
    pub fn named(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            name: id.to_owned(),
        }
    }
}

/// The models a session offers: `models` in order without repeats or
/// blanks (the first name given for an id wins), and the current model
/// first if it is not among them.
pub fn model_choices(models: &[Choice], current: &str) -> Vec<Choice> {
    let mut choices: Vec<Choice> = Vec::new();
    for model in models {
        let id = model.id.trim();
        if !id.is_empty() && !choices.iter().any(|c| c.id == id) {
            let name = model.name.trim();
            choices.push(Choice {
                id: id.to_owned(),
                name: if name.is_empty() { id } else { name }.to_owned(),
            });
        }
    }
    if !choices.iter().any(|c| c.id == current) {
        choices.insert(0, Choice::named(current));
    }
    choices
}

/// The session's options as `session/new`, `set_config_option` and
/// `config_option_update` carry them. The thinking option is there only
/// when the current model `can_think`.
pub fn options(shown: &Shown, models: &[Choice], can_think: bool) -> Vec<SessionConfigOption> {
    let model_options: Vec<SessionConfigSelectOption> = model_choices(models, &shown.model)
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.id, m.name))
        .collect();
    let modes = mapping::mode_state(shown.mode);
    let mode_options: Vec<SessionConfigSelectOption> = modes
        .available_modes
        .into_iter()
        .map(|m| {
            SessionConfigSelectOption::new(m.id.0.to_string(), m.name).description(m.description)
        })
        .collect();
    let mut options = vec![
        SessionConfigOption::select(MODEL, "Model", shown.model.clone(), model_options)
            .description("The model the session's next request goes to.".to_owned())
            .category(SessionConfigOptionCategory::Model),
    ];
    if can_think {
        let levels: Vec<SessionConfigSelectOption> = ThinkingLevel::ALL
            .into_iter()
            .map(|l| SessionConfigSelectOption::new(l.as_str(), thinking_name(l)))
            .collect();
        options.push(
            SessionConfigOption::select(THINKING, "Thinking", shown.thinking.as_str(), levels)
                .description("How hard the model thinks before it answers.".to_owned())
                .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    options.push(
        SessionConfigOption::select(MODE, "Permission mode", shown.mode.as_str(), mode_options)
            .description("What Riot may do without asking.".to_owned())
            .category(SessionConfigOptionCategory::Mode),
    );
    options
}

fn thinking_name(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "Off",
        ThinkingLevel::Low => "Low",
        ThinkingLevel::Medium => "Medium",
        ThinkingLevel::High => "High",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code
mod tests {
    use super::*;

    #[test]
    fn the_current_model_leads_when_not_configured_and_repeats_go() {
        let models = vec![
            Choice::named("claude-haiku-4-5"),
            Choice::named(" claude-sonnet-4-5 "),
            Choice {
                id: "claude-haiku-4-5".into(),
                name: "Claude Haiku 4.5".into(),
            },
            Choice::named(""),
        ];
        let ids = |current| {
            model_choices(&models, current)
                .into_iter()
                .map(|c| c.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ids("claude-sonnet-4-5"),
            ["claude-haiku-4-5", "claude-sonnet-4-5"]
        );
        assert_eq!(
            ids("gpt-5"),
            ["gpt-5", "claude-haiku-4-5", "claude-sonnet-4-5"]
        );
    }

    #[test]
    fn options_carry_model_and_mode_with_their_categories() {
        let shown = Shown {
            model: "m1".into(),
            mode: PermissionMode::Default,
            thinking: ThinkingLevel::Off,
        };
        let models = [Choice {
            id: "m2".into(),
            name: "Model Two".into(),
        }];
        let json = serde_json::to_value(options(&shown, &models, false)).unwrap();
        assert_eq!(json[0]["id"], "model");
        assert_eq!(json[0]["category"], "model");
        assert_eq!(json[0]["type"], "select");
        assert_eq!(json[0]["currentValue"], "m1");
        assert_eq!(
            json[0]["options"],
            serde_json::json!([{"value": "m1", "name": "m1"}, {"value": "m2", "name": "Model Two"}])
        );
        assert_eq!(json[1]["id"], "mode");
        assert_eq!(json[1]["category"], "mode");
        assert_eq!(json[1]["currentValue"], "default");
        let ids: Vec<&str> = json[1]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["value"].as_str().unwrap())
            .collect();
        let offered: Vec<&str> = mapping::OFFERED_MODES.iter().map(|m| m.as_str()).collect();
        assert_eq!(ids, offered);
    }

    #[test]
    fn a_model_that_can_think_gets_the_thinking_option_between_model_and_mode() {
        let shown = Shown {
            model: "m1".into(),
            mode: PermissionMode::Default,
            thinking: ThinkingLevel::Medium,
        };
        let json = serde_json::to_value(options(&shown, &[], true)).unwrap();
        assert_eq!(json[1]["id"], "thinking");
        assert_eq!(json[1]["category"], "thought_level");
        assert_eq!(json[1]["currentValue"], "medium");
        assert_eq!(
            json[1]["options"],
            serde_json::json!([
                {"value": "off", "name": "Off"},
                {"value": "low", "name": "Low"},
                {"value": "medium", "name": "Medium"},
                {"value": "high", "name": "High"}
            ])
        );
        assert_eq!(json[2]["id"], "mode");
    }
}
