//! The address checks WebFetch and Browser share (docs/web.md): which
//! URLs they take, and the decision on the addresses a host resolves to —
//! link-local and cloud-metadata addresses refused, private ones asked
//! about in every mode and approved for one call, checked again when the
//! call runs (the name may resolve differently by then).

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Mutex;

use riot_protocol::web::{AddressClass, classify_all};
use riot_protocol::{DecisionReason, PermissionResult, ToolContext, WebError};

/// How a tool names what it does with a URL, for its messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Loader {
    /// `WebFetch`, `Browser`.
    pub tool: &'static str,
    /// `fetches`, `loads`.
    pub does: &'static str,
    /// `fetch`, `load`.
    pub verb: &'static str,
    /// `fetches from`, `loads pages from`.
    pub never: &'static str,
}

/// Why a URL is refused; the message is the sentence the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlError {
    /// The text does not parse as a URL.
    #[error("`{text}` is not a valid URL ({source}); give a full http:// or https:// URL.")]
    Invalid {
        text: String,
        #[source]
        source: url::ParseError,
    },
    /// Neither http nor https.
    #[error("{} {} only http:// and https:// URLs, not {scheme}:.", .loader.tool, .loader.does)]
    Scheme { scheme: String, loader: Loader },
    /// The URL carries a user name or password.
    #[error(
        "URLs with credentials (user:password@) are refused; {} the URL without them.",
        .loader.verb
    )]
    Credentials { loader: Loader },
    /// The URL names no host.
    #[error("`{text}` has no host.")]
    NoHost { text: String },
}

/// A URL the tool may take: http(s), a host, no credentials.
pub(crate) fn parse_url(text: &str, loader: Loader) -> Result<url::Url, UrlError> {
    let url = url::Url::parse(text.trim()).map_err(|source| UrlError::Invalid {
        text: text.to_owned(),
        source,
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme {
            scheme: url.scheme().to_owned(),
            loader,
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::Credentials { loader });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost {
            text: text.to_owned(),
        });
    }
    Ok(url)
}

/// The host, lower-case, an IPv6 address without its brackets.
pub(crate) fn host_of(url: &url::Url) -> String {
    url.host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn addresses(addrs: &[IpAddr]) -> String {
    addrs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a link-local or metadata address stops the call.
pub(crate) fn forbidden_text(url: &url::Url, addrs: &[IpAddr], loader: Loader) -> String {
    format!(
        "{} resolves to {}, a link-local or cloud-metadata address; Riot never {} those.",
        host_of(url),
        addresses(addrs),
        loader.never
    )
}

/// What makes a private address worth a question.
pub(crate) fn private_text(url: &url::Url, addrs: &[IpAddr]) -> String {
    format!(
        "{} resolves to {}, on this machine or its private network",
        host_of(url),
        addresses(addrs)
    )
}

/// Why the addresses of a URL's host stop a call when it runs.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AddressError {
    /// A link-local or cloud-metadata address.
    #[error("{}", forbidden_text(.url, .addrs, *.loader))]
    Forbidden {
        url: url::Url,
        addrs: Vec<IpAddr>,
        loader: Loader,
    },
    /// A private address this call was not approved for.
    #[error(
        "{}, which was not approved for this call (the name may have changed since it was checked); call {} again to be asked.",
        private_text(.url, .addrs),
        .loader.tool
    )]
    NotApproved {
        url: url::Url,
        addrs: Vec<IpAddr>,
        loader: Loader,
    },
}

/// The calls whose private address a person or rule approved, by call id.
#[derive(Debug, Default)]
pub(crate) struct AddressGate {
    approved: Mutex<HashSet<String>>,
}

impl AddressGate {
    /// The permission step's part: `refused` starts the message of a
    /// refusal ("WebFetch of URL was refused"), `wants` ends the question
    /// ("fetch URL"). A host that does not resolve is passed on: the call
    /// fails when it runs.
    pub async fn permission(
        &self,
        url: &url::Url,
        ctx: &ToolContext,
        loader: Loader,
        refused: &str,
        wants: &str,
    ) -> PermissionResult {
        let Ok(addrs) = ctx
            .env
            .web
            .resolve(url.host_str().unwrap_or_default())
            .await
        else {
            return PermissionResult::Passthrough;
        };
        match classify_all(&addrs) {
            AddressClass::Forbidden => PermissionResult::Deny {
                reason: DecisionReason::Safety {
                    detail: forbidden_text(url, &addrs, loader),
                },
                message: format!(
                    "{refused}: {} Do not retry it.",
                    forbidden_text(url, &addrs, loader)
                ),
            },
            AddressClass::Private => {
                self.approved
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(ctx.tool_use_id.as_str().to_owned());
                let why = private_text(url, &addrs);
                PermissionResult::Ask {
                    reason: DecisionReason::Safety {
                        detail: format!("{why}; local addresses are asked about in every mode"),
                    },
                    message: format!("Riot wants to {wants}: {why}."),
                }
            }
            AddressClass::Public => PermissionResult::Passthrough,
        }
    }

    /// The check when the call runs: the addresses to use, or why not
    /// (the host did not resolve, or an [`AddressError`]; each tool words
    /// the first itself). The approval of a private address is used up by
    /// this call.
    pub async fn check_again<E>(
        &self,
        url: &url::Url,
        ctx: &ToolContext,
        loader: Loader,
    ) -> Result<Vec<IpAddr>, E>
    where
        E: From<WebError> + From<AddressError>,
    {
        let approved = self
            .approved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(ctx.tool_use_id.as_str());
        let addrs = ctx
            .env
            .web
            .resolve(url.host_str().unwrap_or_default())
            .await?;
        match classify_all(&addrs) {
            AddressClass::Forbidden => Err(AddressError::Forbidden {
                url: url.clone(),
                addrs,
                loader,
            }
            .into()),
            AddressClass::Private if !approved => Err(AddressError::NotApproved {
                url: url.clone(),
                addrs,
                loader,
            }
            .into()),
            _ => Ok(addrs),
        }
    }
}
