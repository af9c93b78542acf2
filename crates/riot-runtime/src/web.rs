#![allow(clippy::disallowed_methods)] // the real web: tokio's timer bounds a name lookup
//! The real web capability: DNS through the system resolver, one GET
//! through reqwest (rustls with the ring provider), connecting only to the
//! addresses the caller checked.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use riot_protocol::web::{AddressClass, classify_address};
use riot_protocol::{Web, WebError, WebRequest, WebResponse};

/// How long a name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP(S) GETs over the network.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpWeb;

#[async_trait]
impl Web for HttpWeb {
    fn available(&self) -> bool {
        true
    }

    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, WebError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        let lookup = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((bare, 0)));
        let found = match lookup.await {
            Ok(found) => found.map_err(|e| WebError::Failed {
                url: host.to_owned(),
                reason: format!("the name {host} could not be resolved ({e})"),
            })?,
            Err(_) => {
                return Err(WebError::Failed {
                    url: host.to_owned(),
                    reason: format!(
                        "the name {host} was not resolved within {} s",
                        RESOLVE_TIMEOUT.as_secs()
                    ),
                });
            }
        };
        let mut addrs: Vec<IpAddr> = found.map(|a| a.ip()).collect();
        addrs.dedup();
        if addrs.is_empty() {
            return Err(WebError::Failed {
                url: host.to_owned(),
                reason: format!("the name {host} has no addresses"),
            });
        }
        Ok(addrs)
    }

    async fn fetch(&self, request: WebRequest) -> Result<WebResponse, WebError> {
        let url_text = request.url.clone();
        let failed = |reason: String| WebError::Failed {
            url: url_text.clone(),
            reason,
        };
        let url = reqwest::Url::parse(&request.url).map_err(|e| failed(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(failed(format!(
                "the scheme {} is not fetched",
                url.scheme()
            )));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let mut builder = reqwest::Client::builder()
            // Proxies would resolve the name again, elsewhere.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_millis(request.timeout_ms))
            .user_agent(concat!("Riot/", env!("CARGO_PKG_VERSION")));
        match url.host() {
            Some(url::Host::Domain(domain)) => {
                if request.addresses.is_empty() {
                    return Err(refused(&request.url, "no checked address was given"));
                }
                for ip in &request.addresses {
                    if classify_address(*ip) == AddressClass::Forbidden {
                        return Err(refused(
                            &request.url,
                            &format!("{ip} is a link-local or metadata address"),
                        ));
                    }
                }
                let addrs: Vec<SocketAddr> = request
                    .addresses
                    .iter()
                    .map(|ip| SocketAddr::new(*ip, port))
                    .collect();
                builder = builder.resolve_to_addrs(domain, &addrs);
            }
            Some(url::Host::Ipv4(ip)) => forbid_literal(&request.url, IpAddr::V4(ip))?,
            Some(url::Host::Ipv6(ip)) => forbid_literal(&request.url, IpAddr::V6(ip))?,
            None => return Err(failed("the URL has no host".into())),
        }
        // ring, never aws-lc; an already installed provider will do.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = builder.build().map_err(|e| failed(e.to_string()))?;
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &request.headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| failed(e.to_string()))?;
            let value =
                reqwest::header::HeaderValue::from_str(value).map_err(|e| failed(e.to_string()))?;
            headers.insert(name, value);
        }
        let timed_out = || WebError::TimedOut {
            url: request.url.clone(),
            after_ms: request.timeout_ms,
        };
        let describe = |e: reqwest::Error| {
            if e.is_timeout() {
                timed_out()
            } else {
                failed(error_chain(&e))
            }
        };
        let mut response = client
            .get(url.clone())
            .headers(headers)
            .send()
            .await
            .map_err(describe)?;
        let status = response.status().as_u16();
        let header = |name: reqwest::header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = header(reqwest::header::CONTENT_TYPE);
        let location = header(reqwest::header::LOCATION);
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(describe)? {
            let room = request.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(WebResponse {
            final_url: url.to_string(),
            status,
            content_type,
            location,
            body,
            truncated,
        })
    }
}

fn refused(url: &str, reason: &str) -> WebError {
    WebError::Refused {
        url: url.to_owned(),
        reason: reason.to_owned(),
    }
}

fn forbid_literal(url: &str, ip: IpAddr) -> Result<(), WebError> {
    if classify_address(ip) == AddressClass::Forbidden {
        return Err(refused(
            url,
            &format!("{ip} is a link-local or metadata address"),
        ));
    }
    Ok(())
}

/// An error with its causes ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use riot_testkit::web::{Reply, WebStandIn};

    use super::*;

    fn get(url: &str, addresses: &[&str]) -> WebRequest {
        WebRequest {
            url: url.to_owned(),
            addresses: addresses.iter().map(|a| a.parse().unwrap()).collect(),
            max_bytes: 1024,
            timeout_ms: 5_000,
            headers: vec![("X-Probe".into(), "1".into())],
        }
    }

    #[tokio::test]
    async fn a_name_connects_to_the_checked_address_and_nowhere_else() {
        let server = WebStandIn::start(vec![("/p", Reply::ok("text/plain", "pinned"))])
            .await
            .unwrap();
        // `pinned.invalid` resolves nowhere: only the given address can
        // have answered, with the name in the Host header.
        let url = format!("http://pinned.invalid:{}/p", server.port());
        let response = HttpWeb.fetch(get(&url, &["127.0.0.1"])).await.unwrap();
        assert_eq!((response.status, response.body), (200, b"pinned".to_vec()));
        let hit = &server.hits()[0];
        assert_eq!(
            hit.header("host"),
            Some(format!("pinned.invalid:{}", server.port()).as_str())
        );
        assert_eq!(hit.header("x-probe"), Some("1"));
    }

    #[tokio::test]
    async fn redirects_are_returned_not_followed_and_bodies_cut_at_the_limit() {
        let server = WebStandIn::start(vec![
            ("/old", Reply::redirect("/new")),
            ("/big", Reply::ok("text/plain", vec![b'x'; 5000])),
        ])
        .await
        .unwrap();
        let moved = HttpWeb.fetch(get(&server.url("/old"), &[])).await.unwrap();
        assert_eq!(
            (moved.status, moved.location.as_deref()),
            (301, Some("/new"))
        );
        let big = HttpWeb.fetch(get(&server.url("/big"), &[])).await.unwrap();
        assert_eq!((big.body.len(), big.truncated), (1024, true));
        assert_eq!(server.hits().len(), 2);
    }

    #[tokio::test]
    async fn forbidden_or_missing_addresses_are_refused_before_connecting() {
        let refused = |e: WebError| match e {
            WebError::Refused { reason, .. } => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused(
                HttpWeb
                    .fetch(get("http://metadata.invalid/", &["169.254.169.254"]))
                    .await
                    .unwrap_err()
            ),
            "169.254.169.254 is a link-local or metadata address"
        );
        assert_eq!(
            refused(
                HttpWeb
                    .fetch(get("http://[fd00:ec2::254]/latest", &[]))
                    .await
                    .unwrap_err()
            ),
            "fd00:ec2::254 is a link-local or metadata address"
        );
        assert_eq!(
            refused(
                HttpWeb
                    .fetch(get("http://a.invalid/", &[]))
                    .await
                    .unwrap_err()
            ),
            "no checked address was given"
        );
    }

    #[tokio::test]
    async fn an_address_resolves_to_itself() {
        assert_eq!(
            HttpWeb.resolve("[::1]").await.unwrap(),
            vec!["::1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            HttpWeb.resolve("10.1.2.3").await.unwrap(),
            vec!["10.1.2.3".parse::<IpAddr>().unwrap()]
        );
    }
}
