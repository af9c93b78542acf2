//! Every request the browser makes is judged before it leaves
//! (docs/browser.md, "What the page loads"): the Browser tool decides the
//! URL the model asks for, but a page also follows redirects, loads
//! frames and scripts, and fetches on its own. Each of those is paused by
//! the DevTools `Fetch` domain and let through only when its host is
//! public, or private and a host the model navigated to. Link-local and
//! cloud-metadata addresses are never loaded.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use riot_protocol::web::{AddressClass, classify_all};

/// How long one name may take to resolve.
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The hosts the session navigated to (judged by the tool's permission
/// check, private ones approved there), shared with the request handler.
#[derive(Debug, Default)]
pub(crate) struct RequestGuard {
    approved: Mutex<HashSet<String>>,
}

impl RequestGuard {
    /// Records the host of a URL the tool has judged and is about to load.
    pub(crate) fn approve(&self, url: &str) {
        if let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
        {
            self.approved
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(host);
        }
    }

    fn approved(&self, host: &str) -> bool {
        self.approved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(host)
    }

    /// Whether the browser may make a request for `url`; the error is the
    /// reason it may not.
    pub(crate) async fn judge(&self, url: &str) -> Result<(), Refused> {
        let parsed = url::Url::parse(url).map_err(Refused::BadUrl)?;
        match parsed.scheme() {
            "http" | "https" => {}
            // Made inside the page, not fetched from anywhere.
            "data" | "blob" | "about" => return Ok(()),
            other => {
                return Err(Refused::Scheme {
                    scheme: other.to_owned(),
                });
            }
        }
        let Some(host) = parsed.host_str() else {
            return Err(Refused::NoHost);
        };
        let port = parsed.port_or_known_default().unwrap_or(80);
        self.connectable(host, port).await.map(|_| ())
    }

    /// The addresses the browser may connect to for `host` (a name, an
    /// IPv4 address or a bracketed IPv6 one, as in a URL) and `port`; the
    /// error is the reason it may not. The proxy connects to exactly
    /// these, so a name cannot resolve one way here and another there.
    pub(crate) async fn connectable(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, Refused> {
        let literal = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let addresses: Vec<IpAddr> = match literal.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => {
                // A page cannot hold Riot's resolver threads for long.
                tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port)))
                    .await
                    .map_err(|_| Refused::ResolveTimeout {
                        host: host.to_owned(),
                        secs: RESOLVE_TIMEOUT.as_secs(),
                    })?
                    .map_err(|source| Refused::Resolve {
                        host: host.to_owned(),
                        source,
                    })?
                    .map(|a| a.ip())
                    .collect()
            }
        };
        if addresses.is_empty() {
            return Err(Refused::NoAddress {
                host: host.to_owned(),
            });
        }
        decide(host, &addresses, self.approved(host))?;
        Ok(addresses
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

/// Why a request or connection may not be made; the message is the
/// reason shown in the page's console.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The request's URL does not parse.
    #[error("not a valid URL")]
    BadUrl(#[source] url::ParseError),
    /// A scheme the browser does not fetch (`file:`, `ftp:`, …).
    #[error("the browser does not load {scheme}: URLs")]
    Scheme { scheme: String },
    /// An `http(s):` URL without a host.
    #[error("the URL has no host")]
    NoHost,
    /// The name did not resolve in time.
    #[error("{host} could not be resolved within {secs} s")]
    ResolveTimeout { host: String, secs: u64 },
    /// The name did not resolve.
    #[error("{host} could not be resolved ({source})")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    /// The name resolved to no address.
    #[error("{host} has no address")]
    NoAddress { host: String },
    /// A private address of a host the model did not navigate to.
    #[error(
        "{host} ({}) is this machine or a private network, and the model did not navigate to it",
        listed(.addresses)
    )]
    Private {
        host: String,
        addresses: Vec<IpAddr>,
    },
    /// A link-local or cloud-metadata address.
    #[error(
        "{host} ({}) is a link-local or cloud-metadata address, which is never loaded",
        listed(.addresses)
    )]
    Forbidden {
        host: String,
        addresses: Vec<IpAddr>,
    },
}

impl Refused {
    /// Whether the host has no address (or none in time): nothing to
    /// connect to, rather than an address the browser may not reach.
    pub(crate) fn is_unresolved(&self) -> bool {
        matches!(
            self,
            Self::ResolveTimeout { .. } | Self::Resolve { .. } | Self::NoAddress { .. }
        )
    }
}

/// Addresses as a message lists them: `a, b`.
fn listed(addresses: &[IpAddr]) -> String {
    addresses
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rule on a resolved host: forbidden addresses never, private ones
/// only for a host the model navigated to, public ones always.
fn decide(host: &str, addresses: &[IpAddr], approved: bool) -> Result<(), Refused> {
    match classify_all(addresses) {
        AddressClass::Public => Ok(()),
        AddressClass::Private if approved => Ok(()),
        AddressClass::Private => Err(Refused::Private {
            host: host.to_owned(),
            addresses: addresses.to_vec(),
        }),
        AddressClass::Forbidden => Err(Refused::Forbidden {
            host: host.to_owned(),
            addresses: addresses.to_vec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `judge` says, as the console shows it.
    async fn judged(guard: &RequestGuard, url: &str) -> Result<(), String> {
        guard.judge(url).await.map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn literal_addresses_and_schemes_are_judged_without_resolving() {
        let guard = RequestGuard::default();
        assert_eq!(
            judged(&guard, "http://169.254.169.254/latest/meta-data/").await,
            Err("169.254.169.254 (169.254.169.254) is a link-local or cloud-metadata address, which is never loaded".to_owned())
        );
        assert_eq!(
            judged(&guard, "http://127.0.0.1:3000/api").await,
            Err("127.0.0.1 (127.0.0.1) is this machine or a private network, and the model did not navigate to it".to_owned())
        );
        guard.approve("http://127.0.0.1:3000/");
        // Any port and path of a host the model navigated to.
        assert_eq!(judged(&guard, "http://127.0.0.1:9/other").await, Ok(()));
        // Another name or address for the same machine is not that host.
        assert!(guard.judge("http://[::1]:3000/").await.is_err());
        assert!(guard.judge("http://10.0.0.1/").await.is_err());
        // Approving a metadata address does not make it loadable.
        guard.approve("http://169.254.169.254/");
        assert!(guard.judge("http://169.254.169.254/").await.is_err());
        assert_eq!(judged(&guard, "https://93.184.215.14/").await, Ok(()));
        assert_eq!(judged(&guard, "data:text/plain,hi").await, Ok(()));
        assert_eq!(
            judged(&guard, "file:///etc/passwd").await,
            Err("the browser does not load file: URLs".to_owned())
        );
        assert_eq!(
            judged(&guard, "http://").await,
            Err("not a valid URL".to_owned())
        );
    }

    #[test]
    fn a_host_with_one_forbidden_address_is_forbidden() {
        let addrs: Vec<IpAddr> = vec!["93.184.215.14".parse().unwrap(), "fe80::1".parse().unwrap()];
        let refused = decide("mixed.example", &addrs, true).unwrap_err();
        assert!(!refused.is_unresolved());
        assert_eq!(
            refused.to_string(),
            "mixed.example (93.184.215.14, fe80::1) is a link-local or cloud-metadata address, which is never loaded"
        );
    }

    #[test]
    fn a_name_without_an_address_is_unresolved() {
        let refused = Refused::NoAddress {
            host: "nowhere.example".into(),
        };
        assert!(refused.is_unresolved());
        assert_eq!(refused.to_string(), "nowhere.example has no address");
    }
}
