//! The `notifications` setting (docs/interfaces.md): how a face tells the
//! person that a turn finished or a question waits. `bell` — the terminal
//! UI rings the terminal bell; `title` — the terminal UI sets the
//! terminal's title to the session and its state; `desktop` — the desktop
//! app shows a system notification. Each is on by default; a later file
//! wins key by key. Any settings file may set them: they only change how
//! Riot gets the person's attention.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConfigError, ConfigSource};

/// `{"bell": true, "title": true, "desktop": true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotificationSettings {
    /// The terminal UI rings the bell when a turn ends or a question waits.
    pub bell: bool,
    /// The terminal UI shows the session's title and state in the
    /// terminal's title.
    pub title: bool,
    /// The desktop app notifies when a session in another window finishes
    /// or waits for a permission.
    pub desktop: bool,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        Self {
            bell: true,
            title: true,
            desktop: true,
        }
    }
}

/// The effective `notifications` and the last file that set any of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Notifications {
    #[serde(flatten)]
    pub settings: NotificationSettings,
    /// `None`: every key is its default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<ConfigSource>,
}

impl Notifications {
    /// `bell on, title on, desktop off`, for `riot config show`.
    pub fn describe(&self) -> String {
        let word = |on: bool| if on { "on" } else { "off" };
        format!(
            "bell {}, title {}, desktop {}",
            word(self.settings.bell),
            word(self.settings.title),
            word(self.settings.desktop)
        )
    }
}

/// Reads one file's `notifications` value into `into`.
pub(crate) fn apply(
    into: &mut Notifications,
    value: &Value,
    path: &Path,
    from: &ConfigSource,
) -> Result<(), ConfigError> {
    let bad = |key: String, problem: &str| ConfigError::BadValue {
        path: path.to_owned(),
        key,
        problem: problem.to_owned(),
    };
    let Value::Object(map) = value else {
        return Err(bad(
            "notifications".into(),
            "must be an object such as {\"bell\": false}",
        ));
    };
    for (key, v) in map {
        let slot = match key.as_str() {
            "bell" => &mut into.settings.bell,
            "title" => &mut into.settings.title,
            "desktop" => &mut into.settings.desktop,
            other => {
                return Err(bad(
                    format!("notifications.{other}"),
                    "is not a notifications key (known: bell, title, desktop)",
                ));
            }
        };
        *slot = v
            .as_bool()
            .ok_or_else(|| bad(format!("notifications.{key}"), "must be true or false"))?;
    }
    if !map.is_empty() {
        into.source = Some(from.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code

    use std::path::Path;

    use serde_json::json;

    use crate::{EnvLayer, FlagLayer, Layer, layer, parse_settings};

    fn config(files: &[(Layer, &str, serde_json::Value)]) -> crate::Config {
        let files: Vec<_> = files
            .iter()
            .map(|(l, p, j)| parse_settings(Path::new(p), *l, &j.to_string()).unwrap())
            .collect();
        layer(&files, &EnvLayer::default(), &FlagLayer::default(), false).unwrap()
    }

    #[test]
    fn every_notification_is_on_by_default_and_a_later_file_wins_key_by_key() {
        let none = config(&[]);
        assert_eq!(
            none.notifications.describe(),
            "bell on, title on, desktop on"
        );
        assert_eq!(none.notifications.source, None);
        let both = config(&[
            (
                Layer::User,
                "/h/settings.json",
                json!({"notifications": {"bell": false, "desktop": false}}),
            ),
            (
                Layer::Project,
                "/p/.riot/settings.json",
                json!({"notifications": {"desktop": true}}),
            ),
        ]);
        assert_eq!(
            both.notifications.describe(),
            "bell off, title on, desktop on"
        );
        assert_eq!(
            both.notifications.source.unwrap().to_string(),
            "/p/.riot/settings.json"
        );
        assert!(both.unknown_keys.is_empty(), "{:?}", both.unknown_keys);
        let json = serde_json::to_value(config(&[(
            Layer::User,
            "/h/settings.json",
            json!({"notifications": {"title": false}}),
        )]))
        .unwrap();
        assert_eq!(
            json["notifications"],
            json!({"bell": true, "title": false, "desktop": true, "source": {"layer": "user", "path": "/h/settings.json"}})
        );
    }

    #[test]
    fn a_wrong_notifications_value_names_the_key_and_the_fix() {
        let files = |value: serde_json::Value| {
            vec![
                parse_settings(
                    Path::new("/h/settings.json"),
                    Layer::User,
                    &json!({ "notifications": value }).to_string(),
                )
                .unwrap(),
            ]
        };
        let error = |value| {
            layer(
                &files(value),
                &EnvLayer::default(),
                &FlagLayer::default(),
                true,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            error(json!({"bell": "yes"})),
            "/h/settings.json: `notifications.bell` must be true or false"
        );
        assert_eq!(
            error(json!({"sound": true})),
            "/h/settings.json: `notifications.sound` is not a notifications key (known: bell, title, desktop)"
        );
        assert_eq!(
            error(json!(true)),
            "/h/settings.json: `notifications` must be an object such as {\"bell\": false}"
        );
    }
}
