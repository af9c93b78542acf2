//! Web capability for WebFetch / WebSearch. [`NoWeb`] is the null
//! implementation: tools that need the web are not declared when it is used.
//!
//! The capability does one HTTP GET and follows no redirect: what to
//! follow is the tool's decision. A host is resolved first
//! ([`Web::resolve`]), every address is judged ([`classify_address`]), and
//! the request names the addresses the connection may go to
//! ([`WebRequest::addresses`]), so what was checked is what is reached (no
//! second resolution in between).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use async_trait::async_trait;

/// An HTTP GET as a tool needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRequest {
    pub url: String,
    /// The checked addresses of the URL's host: the connection goes to one
    /// of them and nowhere else. Ignored when the host is an IP address
    /// (that address is the one checked).
    pub addresses: Vec<IpAddr>,
    /// The body is cut after this many bytes ([`WebResponse::truncated`]).
    pub max_bytes: usize,
    /// The whole request, body included, fails after this long.
    pub timeout_ms: u64,
    /// Extra request headers (a search API's key).
    pub headers: Vec<(String, String)>,
}

/// The response to one GET (a redirect is returned, not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResponse {
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    /// The `Location` header of a redirect.
    pub location: Option<String>,
    pub body: Vec<u8>,
    /// The body was longer than `max_bytes` and was cut there.
    pub truncated: bool,
}

/// A failed fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("web access is not available in this session")]
    Unavailable,
    #[error("fetching {url} failed: {reason}")]
    Failed { url: String, reason: String },
    #[error("fetching {url} timed out after {after_ms} ms")]
    TimedOut { url: String, after_ms: u64 },
    #[error("fetching {url} was refused: {reason}")]
    Refused { url: String, reason: String },
}

/// Fetches URLs.
#[async_trait]
pub trait Web: Send + Sync + std::fmt::Debug {
    /// Whether this implementation can fetch at all.
    fn available(&self) -> bool;

    /// The addresses `host` resolves to (an IP address resolves to itself).
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, WebError>;

    /// One GET, connecting only to `request.addresses`.
    async fn fetch(&self, request: WebRequest) -> Result<WebResponse, WebError>;
}

/// No web access.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWeb;

#[async_trait]
impl Web for NoWeb {
    fn available(&self) -> bool {
        false
    }

    async fn resolve(&self, _host: &str) -> Result<Vec<IpAddr>, WebError> {
        Err(WebError::Unavailable)
    }

    async fn fetch(&self, _request: WebRequest) -> Result<WebResponse, WebError> {
        Err(WebError::Unavailable)
    }
}

/// What an address is to a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddressClass {
    /// On the internet: fetched under the ordinary rules.
    Public,
    /// Loopback, a private network, carrier-grade NAT, unique-local IPv6:
    /// this machine or its network, asked in every mode unless a rule
    /// names the host.
    Private,
    /// Link-local (169.254.0.0/16, fe80::/10, where cloud metadata services
    /// answer), a known metadata address (fd00:ec2::254, 100.100.100.200),
    /// unspecified, broadcast or multicast: never fetched.
    Forbidden,
}

/// The class of one address; an IPv4-mapped IPv6 address is judged as
/// the IPv4 address it carries.
pub fn classify_address(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || ip == Ipv4Addr::new(100, 100, 100, 200)
    {
        AddressClass::Forbidden
    } else if ip.is_loopback() || ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let first = ip.segments()[0];
    let aws_metadata = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
    if ip == aws_metadata || (first & 0xffc0) == 0xfe80 || ip.is_unspecified() || ip.is_multicast()
    {
        AddressClass::Forbidden
    } else if ip.is_loopback() || (first & 0xfe00) == 0xfc00 {
        AddressClass::Private
    } else {
        AddressClass::Public
    }
}

/// The most restrictive class among `addresses` (a host with one
/// forbidden address is forbidden); `Public` for none.
pub fn classify_all(addresses: &[IpAddr]) -> AddressClass {
    addresses
        .iter()
        .map(|ip| classify_address(*ip))
        .max()
        .unwrap_or(AddressClass::Public)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> AddressClass {
        classify_address(s.parse().unwrap())
    }

    #[test]
    fn metadata_and_link_local_are_forbidden() {
        for ip in [
            "169.254.169.254",
            "169.254.0.1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "255.255.255.255",
            "224.0.0.1",
        ] {
            assert_eq!(class(ip), AddressClass::Forbidden, "{ip}");
        }
    }

    #[test]
    fn loopback_and_private_networks_are_private() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "10.0.0.5",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "fd12:3456::1",
            "::ffff:10.1.2.3",
        ] {
            assert_eq!(class(ip), AddressClass::Private, "{ip}");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for ip in [
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
        ] {
            assert_eq!(class(ip), AddressClass::Public, "{ip}");
        }
    }

    #[test]
    fn a_host_takes_its_worst_address() {
        let addrs: Vec<IpAddr> = vec![
            "93.184.216.34".parse().unwrap(),
            "10.0.0.1".parse().unwrap(),
        ];
        assert_eq!(classify_all(&addrs), AddressClass::Private);
        assert_eq!(classify_all(&[]), AddressClass::Public);
    }
}
