//! Session configuration options (`session/set_config_option`,
//! `config_option_update`): the model (category `model`) and the
//! permission mode (category `mode`), built from the session's status.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption,
};
use riot_kernel::SessionStatus;
use riot_protocol::PermissionMode;

use crate::mapping;

/// The id of the model option.
pub const MODEL: &str = "model";
/// The id of the permission mode option.
pub const MODE: &str = "mode";

/// What the client was last told of a session's options, to tell it only
/// of changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub model: String,
    pub mode: PermissionMode,
}

impl Shown {
    pub fn of(status: &SessionStatus) -> Self {
        Self {
            model: status.model.clone(),
            mode: status.mode,
        }
    }
}

/// The models a session offers: the configured ones (`models`, in order,
/// without repeats), and the current model if it is not among them.
pub fn model_choices(models: &[String], current: &str) -> Vec<String> {
    let mut choices: Vec<String> = Vec::new();
    for model in models {
        let model = model.trim();
        if !model.is_empty() && !choices.iter().any(|c| c == model) {
            choices.push(model.to_owned());
        }
    }
    if !choices.iter().any(|c| c == current) {
        choices.insert(0, current.to_owned());
    }
    choices
}

/// The session's options as `session/new`, `set_config_option` and
/// `config_option_update` carry them.
pub fn options(shown: &Shown, models: &[String]) -> Vec<SessionConfigOption> {
    let model_options: Vec<SessionConfigSelectOption> = model_choices(models, &shown.model)
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.clone(), m))
        .collect();
    let modes = mapping::mode_state(shown.mode);
    let mode_options: Vec<SessionConfigSelectOption> = modes
        .available_modes
        .into_iter()
        .map(|m| {
            SessionConfigSelectOption::new(m.id.0.to_string(), m.name).description(m.description)
        })
        .collect();
    vec![
        SessionConfigOption::select(MODEL, "Model", shown.model.clone(), model_options)
            .description("The model the session's next request goes to.".to_owned())
            .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::select(MODE, "Permission mode", shown.mode.as_str(), mode_options)
            .description("What Riot may do without asking.".to_owned())
            .category(SessionConfigOptionCategory::Mode),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code
mod tests {
    use super::*;

    #[test]
    fn the_current_model_leads_when_not_configured_and_repeats_go() {
        let models = vec![
            "claude-haiku-4-5".to_owned(),
            " claude-sonnet-4-5 ".to_owned(),
            "claude-haiku-4-5".to_owned(),
            String::new(),
        ];
        assert_eq!(
            model_choices(&models, "claude-sonnet-4-5"),
            ["claude-haiku-4-5", "claude-sonnet-4-5"]
        );
        assert_eq!(
            model_choices(&models, "gpt-5"),
            ["gpt-5", "claude-haiku-4-5", "claude-sonnet-4-5"]
        );
    }

    #[test]
    fn options_carry_model_and_mode_with_their_categories() {
        let shown = Shown {
            model: "m1".into(),
            mode: PermissionMode::Default,
        };
        let json = serde_json::to_value(options(&shown, &["m2".to_owned()])).unwrap();
        assert_eq!(json[0]["id"], "model");
        assert_eq!(json[0]["category"], "model");
        assert_eq!(json[0]["type"], "select");
        assert_eq!(json[0]["currentValue"], "m1");
        assert_eq!(
            json[0]["options"],
            serde_json::json!([{"value": "m1", "name": "m1"}, {"value": "m2", "name": "m2"}])
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
}
