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
    pub(crate) async fn judge(&self, url: &str) -> Result<(), String> {
        let parsed = url::Url::parse(url).map_err(|_| "not a valid URL".to_owned())?;
        match parsed.scheme() {
            "http" | "https" => {}
            // Made inside the page, not fetched from anywhere.
            "data" | "blob" | "about" => return Ok(()),
            other => return Err(format!("the browser does not load {other}: URLs")),
        }
        let Some(host) = parsed.host_str() else {
            return Err("the URL has no host".to_owned());
        };
        let port = parsed.port_or_known_default().unwrap_or(80);
        self.connectable(host, port)
            .await
            .map(|_| ())
            .map_err(Refused::into_reason)
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
                    .map_err(|_| {
                        Refused::Unresolved(format!(
                            "{host} could not be resolved within {} s",
                            RESOLVE_TIMEOUT.as_secs()
                        ))
                    })?
                    .map_err(|e| {
                        Refused::Unresolved(format!("{host} could not be resolved ({e})"))
                    })?
                    .map(|a| a.ip())
                    .collect()
            }
        };
        if addresses.is_empty() {
            return Err(Refused::Unresolved(format!("{host} has no address")));
        }
        decide(host, &addresses, self.approved(host)).map_err(Refused::Address)?;
        Ok(addresses
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

/// Why a connection may not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The name has no address (or none in time): nothing to connect to.
    Unresolved(String),
    /// Its addresses are ones the browser may not reach.
    Address(String),
}

impl Refused {
    pub(crate) fn into_reason(self) -> String {
        match self {
            Self::Unresolved(why) | Self::Address(why) => why,
        }
    }
}

/// The rule on a resolved host: forbidden addresses never, private ones
/// only for a host the model navigated to, public ones always.
fn decide(host: &str, addresses: &[IpAddr], approved: bool) -> Result<(), String> {
    let listed = || {
        addresses
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match classify_all(addresses) {
        AddressClass::Public => Ok(()),
        AddressClass::Private if approved => Ok(()),
        AddressClass::Private => Err(format!(
            "{host} ({}) is this machine or a private network, and the model did not navigate to it",
            listed()
        )),
        AddressClass::Forbidden => Err(format!(
            "{host} ({}) is a link-local or cloud-metadata address, which is never loaded",
            listed()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literal_addresses_and_schemes_are_judged_without_resolving() {
        let guard = RequestGuard::default();
        assert_eq!(
            guard.judge("http://169.254.169.254/latest/meta-data/").await,
            Err("169.254.169.254 (169.254.169.254) is a link-local or cloud-metadata address, which is never loaded".to_owned())
        );
        assert_eq!(
            guard.judge("http://127.0.0.1:3000/api").await,
            Err("127.0.0.1 (127.0.0.1) is this machine or a private network, and the model did not navigate to it".to_owned())
        );
        guard.approve("http://127.0.0.1:3000/");
        // Any port and path of a host the model navigated to.
        assert_eq!(guard.judge("http://127.0.0.1:9/other").await, Ok(()));
        // Another name or address for the same machine is not that host.
        assert!(guard.judge("http://[::1]:3000/").await.is_err());
        assert!(guard.judge("http://10.0.0.1/").await.is_err());
        // Approving a metadata address does not make it loadable.
        guard.approve("http://169.254.169.254/");
        assert!(guard.judge("http://169.254.169.254/").await.is_err());
        assert_eq!(guard.judge("https://93.184.215.14/").await, Ok(()));
        assert_eq!(guard.judge("data:text/plain,hi").await, Ok(()));
        assert_eq!(
            guard.judge("file:///etc/passwd").await,
            Err("the browser does not load file: URLs".to_owned())
        );
    }

    #[test]
    fn a_host_with_one_forbidden_address_is_forbidden() {
        let addrs: Vec<IpAddr> = vec!["93.184.215.14".parse().unwrap(), "fe80::1".parse().unwrap()];
        assert!(decide("mixed.example", &addrs, true).is_err());
    }
}
