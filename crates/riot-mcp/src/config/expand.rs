//! `${VAR}` and `${VAR:-default}` in server settings, expanded from an
//! environment map when the server starts (the kernel never reads the
//! process environment itself; the face hands it over).

use std::collections::BTreeMap;

use super::{HeaderError, ServerConfig, Transport, check_header, has_http_scheme};

/// A setting that could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error(
        "`${{{var}}}` in `{field}` is not set; set it in the environment or write `${{{var}:-default}}`"
    )]
    Unset { var: String, field: String },
    #[error("`{field}` has `${{` without a closing `}}`")]
    Unterminated { field: String },
    #[error("`{field}`: {message}")]
    Invalid { field: String, message: String },
    /// A header that HTTP refuses once expanded.
    #[error("`{field}`: {source}")]
    Header {
        field: String,
        #[source]
        source: HeaderError,
    },
}

impl ServerConfig {
    /// This server with every `${VAR}` replaced from `env`.
    pub fn expanded(&self, env: &BTreeMap<String, String>) -> Result<ServerConfig, ExpandError> {
        let transport = match &self.transport {
            Transport::Stdio {
                command,
                args,
                env: vars,
                cwd,
            } => Transport::Stdio {
                command: expand(command, env, "command")?,
                args: args
                    .iter()
                    .map(|a| expand(a, env, "args"))
                    .collect::<Result<_, _>>()?,
                env: vars
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), expand(v, env, &format!("env.{k}"))?)))
                    .collect::<Result<_, ExpandError>>()?,
                cwd: cwd.as_deref().map(|c| expand(c, env, "cwd")).transpose()?,
            },
            Transport::Http { url, headers } => {
                let url = expand(url, env, "url")?;
                if !has_http_scheme(&url) {
                    return Err(ExpandError::Invalid {
                        field: "url".into(),
                        message: format!("must start with http:// or https:// (got `{url}`)"),
                    });
                }
                let headers = headers
                    .iter()
                    .map(|(k, v)| {
                        let field = format!("headers.{k}");
                        let value = expand(v, env, &field)?;
                        check_header(k, &value).map_err(|source| ExpandError::Header {
                            field: field.clone(),
                            source,
                        })?;
                        Ok((k.clone(), value))
                    })
                    .collect::<Result<_, ExpandError>>()?;
                Transport::Http { url, headers }
            }
        };
        Ok(ServerConfig {
            transport,
            ..self.clone()
        })
    }
}

/// Expands one value. `$` not followed by `{` is kept as written; an
/// empty `${EMPTY}` stays empty.
fn expand(text: &str, env: &BTreeMap<String, String>, field: &str) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unterminated {
                field: field.to_owned(),
            });
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        // As in the shell, `:-` also replaces an empty value.
        match (env.get(var), default) {
            (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
            (Some(value), _) => out.push_str(value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(ExpandError::Unset {
                    var: var.to_owned(),
                    field: field.to_owned(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<String, String> {
        [("TOKEN", "t0k"), ("HOST", "example.com"), ("EMPTY", "")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn variables_defaults_and_plain_dollars() {
        assert_eq!(
            expand("Bearer ${TOKEN}", &env(), "f").unwrap(),
            "Bearer t0k"
        );
        assert_eq!(
            expand(
                "https://${HOST}/mcp?a=${MISSING:-x}&b=${EMPTY:-y}",
                &env(),
                "f"
            )
            .unwrap(),
            "https://example.com/mcp?a=x&b=y"
        );
        assert_eq!(
            expand("costs $5 and $HOME", &env(), "f").unwrap(),
            "costs $5 and $HOME"
        );
    }

    #[test]
    fn unset_and_unterminated_variables_name_the_field() {
        assert_eq!(
            expand("${NOPE}", &env(), "env.GITHUB_TOKEN"),
            Err(ExpandError::Unset {
                var: "NOPE".into(),
                field: "env.GITHUB_TOKEN".into()
            })
        );
        let message = expand("${NOPE}", &env(), "url").unwrap_err().to_string();
        assert_eq!(
            message,
            "`${NOPE}` in `url` is not set; set it in the environment or write `${NOPE:-default}`"
        );
        assert_eq!(
            expand("a ${TOKEN", &env(), "args"),
            Err(ExpandError::Unterminated {
                field: "args".into()
            })
        );
    }

    #[test]
    fn a_server_is_expanded_everywhere_and_the_url_rechecked() {
        let stdio = ServerConfig::session(
            "s",
            Transport::Stdio {
                command: "${HOST}-cli".into(),
                args: vec!["--token".into(), "${TOKEN}".into()],
                env: [("K".to_owned(), "v-${TOKEN}".to_owned())].into(),
                cwd: Some("${EMPTY:-sub}".into()),
            },
        );
        assert_eq!(
            stdio.expanded(&env()).unwrap().transport,
            Transport::Stdio {
                command: "example.com-cli".into(),
                args: vec!["--token".into(), "t0k".into()],
                env: [("K".to_owned(), "v-t0k".to_owned())].into(),
                cwd: Some("sub".into()),
            }
        );
        let http = ServerConfig::session(
            "h",
            Transport::Http {
                url: "${URL:-ftp://nope}".into(),
                headers: BTreeMap::new(),
            },
        );
        let err = http.expanded(&env()).unwrap_err();
        assert!(
            matches!(err, ExpandError::Invalid { ref field, .. } if field == "url"),
            "{err}"
        );
        let header = ServerConfig::session(
            "h",
            Transport::Http {
                url: "https://${HOST}/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer ${TOKEN}".to_owned())].into(),
            },
        );
        assert_eq!(
            header.expanded(&env()).unwrap().transport,
            Transport::Http {
                url: "https://example.com/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer t0k".to_owned())].into(),
            }
        );
        let broken = ServerConfig::session(
            "h",
            Transport::Http {
                url: "https://example.com/mcp".into(),
                headers: [("X-A".to_owned(), "a\nb".to_owned())].into(),
            },
        );
        let err = broken.expanded(&env()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`headers.X-A`: `headers`: the value of `X-A` contains characters HTTP does not allow (e.g. a newline)"
        );
        assert!(
            matches!(err, ExpandError::Header { source: HeaderError::BadValue { ref name }, .. } if name == "X-A"),
            "{err}"
        );
    }
}
