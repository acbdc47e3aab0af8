//! Who the MCP clients are: a client ID metadata document (the `client_id` is an HTTPS URL
//! whose document names the client and its redirect URIs), else a client registered
//! dynamically (RFC 7591) at `/register`. Every client is public and proves itself with PKCE.
//!
//! A metadata document is fetched with limits (size, time, no redirects, public addresses
//! only, so a `client_id` cannot make the server reach into its own network) and kept for a
//! while. Redirect URIs match exactly, except that a loopback `http` redirect may use any port
//! (RFC 8252).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::keys::lookup;
use super::{Authority, now};

/// The largest client ID metadata document read.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;
/// How long a metadata document may take to arrive.
pub const DOCUMENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a fetched document is kept before it is fetched again.
const DOCUMENT_KEPT: Duration = Duration::from_secs(10 * 60);
/// How long a dynamically registered client is kept.
const REGISTRATION_KEPT: Duration = Duration::from_secs(365 * 24 * 3600);
/// The most redirect URIs one client may have.
const MAX_REDIRECTS: usize = 10;

/// A client as the authorization flow knows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Known {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
}

/// Whether `asked` is one of `registered`: the same text, or for a loopback `http` redirect
/// the same but for its port.
pub(super) fn redirect_matches(registered: &[String], asked: &str) -> bool {
    if registered.iter().any(|r| r == asked) {
        return true;
    }
    let Some(asked) = loopback_without_port(asked) else {
        return false;
    };
    registered
        .iter()
        .filter_map(|r| loopback_without_port(r))
        .any(|r| r == asked)
}

/// A loopback `http` URL with its port taken out.
fn loopback_without_port(uri: &str) -> Option<Url> {
    let mut url = Url::parse(uri).ok()?;
    let loopback = match url.host()? {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(name) => name == "localhost",
    };
    if url.scheme() != "http" || !loopback {
        return None;
    }
    url.set_port(None).ok()?;
    Some(url)
}

/// Why a redirect URI cannot be registered; `None` when it can.
fn redirect_problem(uri: &str) -> Option<String> {
    let Ok(url) = Url::parse(uri) else {
        return Some(format!("`{uri}` is not an absolute URL"));
    };
    if url.fragment().is_some() {
        return Some(format!(
            "`{uri}` has a fragment, which a redirect URI may not"
        ));
    }
    match url.scheme() {
        "https" => None,
        "http" if loopback_without_port(uri).is_some() => None,
        "http" => Some(format!(
            "`{uri}` is plain http on a host that is not loopback; use https"
        )),
        "javascript" | "data" | "file" | "vbscript" | "about" | "blob" | "ftp" | "ws" | "wss" => {
            Some(format!("`{uri}` uses a scheme a redirect may not use"))
        }
        // A native application's own scheme (RFC 8252, private-use URI schemes).
        _ => None,
    }
}

/// What `/register` reads (RFC 7591); other members are ignored.
#[derive(Debug, Deserialize)]
pub(super) struct Registration {
    #[serde(default)]
    redirect_uris: Vec<String>,
    client_name: Option<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

fn registration_error(error: &str, description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

/// `POST /register`: a new public client.
pub(super) async fn register(
    State(authority): State<Arc<Authority>>,
    body: Result<Json<Registration>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(asked)) = body else {
        return registration_error(
            "invalid_client_metadata",
            "the body must be a JSON client registration (RFC 7591)",
        );
    };
    if asked.redirect_uris.is_empty() || asked.redirect_uris.len() > MAX_REDIRECTS {
        return registration_error(
            "invalid_redirect_uri",
            &format!("give between 1 and {MAX_REDIRECTS} redirect_uris"),
        );
    }
    if let Some(problem) = asked.redirect_uris.iter().find_map(|u| redirect_problem(u)) {
        return registration_error("invalid_redirect_uri", &problem);
    }
    let grants_ok = asked.grant_types.as_ref().is_none_or(|types| {
        types
            .iter()
            .all(|t| t == "authorization_code" || t == "refresh_token")
    });
    let responses_ok = asked
        .response_types
        .as_ref()
        .is_none_or(|types| types.iter().all(|t| t == "code"));
    if !grants_ok || !responses_ok {
        return registration_error(
            "invalid_client_metadata",
            "this server serves the authorization_code and refresh_token grants with response type `code` only",
        );
    }
    if asked
        .token_endpoint_auth_method
        .as_deref()
        .is_some_and(|m| m != "none")
    {
        tracing::debug!("a client asked for a secret; registered as a public client");
    }
    let name = asked
        .client_name
        .map(|n| n.chars().take(100).collect::<String>());
    let known = Known {
        client_id: format!("flc_{}", authority.keys.secret()),
        client_name: name,
        redirect_uris: asked.redirect_uris,
    };
    let bytes = serde_json::to_vec(&known).expect("strings serialize");
    if let Err(e) = authority
        .store
        .put(&client_key(&known.client_id), bytes, REGISTRATION_KEPT)
        .await
    {
        e.report();
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": "temporarily_unavailable", "error_description": "the sign-in store cannot be reached"})),
        )
            .into_response();
    }
    tracing::info!(client = %known.client_name.as_deref().unwrap_or("unnamed"), "client registered");
    (
        StatusCode::CREATED,
        Json(json!({
            "client_id": known.client_id,
            "client_id_issued_at": now(),
            "client_name": known.client_name,
            "redirect_uris": known.redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        })),
    )
        .into_response()
}

fn client_key(id: &str) -> String {
    format!("client:{id}")
}

/// The client named `client_id`: its metadata document when the id is a URL, else its
/// registration. The error is what the user is shown.
pub(super) async fn resolve(authority: &Authority, client_id: &str) -> Result<Known, String> {
    if client_id.starts_with("https://") || client_id.starts_with("http://") {
        return document(authority, client_id).await;
    }
    let found = authority
        .store
        .get(&client_key(client_id))
        .await
        .map_err(|e| format!("the sign-in store cannot be reached ({e}); try again shortly"))?;
    found
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| {
            "this client is not registered here; it must register again (or use a client ID metadata document)".to_owned()
        })
}

/// The client of the metadata document at `url`, fetched or kept from a fetch.
async fn document(authority: &Authority, url: &str) -> Result<Known, String> {
    let key = format!("document:{}", lookup(url));
    if let Ok(Some(kept)) = authority.store.get(&key).await
        && let Ok(known) = serde_json::from_slice::<Known>(&kept)
    {
        return Ok(known);
    }
    let parsed = document_url(url, authority.config.loopback_clients)?;
    let known = fetch_document(&authority.documents, parsed, url).await?;
    let bytes = serde_json::to_vec(&known).expect("strings serialize");
    let _ = authority.store.put(&key, bytes, DOCUMENT_KEPT).await;
    Ok(known)
}

/// `url` as a client ID: HTTPS (or, with `loopback`, http on a loopback host), with a path,
/// without credentials, fragment or dot segments, and not naming a private address.
fn document_url(url: &str, loopback: bool) -> Result<Url, String> {
    let bad = |why: &str| Err(format!("the client ID `{url}` {why}"));
    let Ok(parsed) = Url::parse(url) else {
        return bad("is not a URL");
    };
    let on_loopback = loopback_without_port(url).is_some();
    match parsed.scheme() {
        "https" => {}
        "http" if loopback && on_loopback => {}
        _ => return bad("must be an https URL"),
    }
    if parsed.path() == "/"
        || parsed.fragment().is_some()
        || !parsed.username().is_empty()
        || parsed.password().is_some()
    {
        return bad("must have a path and no fragment or credentials");
    }
    if url.contains("/./") || url.contains("/../") {
        return bad("may not have dot segments");
    }
    let literal = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(url::Host::Domain("localhost")) if !loopback => {
            return bad("names this machine");
        }
        _ => None,
    };
    if let Some(ip) = literal
        && !(is_public(ip) || (loopback && ip.is_loopback()))
    {
        return bad("names a private address");
    }
    Ok(parsed)
}

/// Fetches and checks the document at `url` (written `id`).
async fn fetch_document(http: &reqwest::Client, url: Url, id: &str) -> Result<Known, String> {
    let failed = |why: String| format!("the client metadata document at {id} {why}");
    let mut response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(format!("could not be fetched: {}", e.without_url())))?;
    if !response.status().is_success() {
        return Err(failed(format!("answered {}", response.status())));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
    {
        return Err(failed(format!("is larger than {MAX_DOCUMENT_BYTES} bytes")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| failed(format!("could not be read: {}", e.without_url())))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(failed(format!("is larger than {MAX_DOCUMENT_BYTES} bytes")));
        }
    }
    #[derive(Deserialize)]
    struct Document {
        client_id: String,
        client_name: Option<String>,
        #[serde(default)]
        redirect_uris: Vec<String>,
    }
    let doc: Document = serde_json::from_slice(&body)
        .map_err(|e| failed(format!("is not client metadata JSON: {e}")))?;
    if doc.client_id != id {
        return Err(failed(format!(
            "names another client_id (`{}`); it must be its own URL",
            doc.client_id
        )));
    }
    if doc.redirect_uris.is_empty() {
        return Err(failed("lists no redirect_uris".into()));
    }
    if let Some(problem) = doc.redirect_uris.iter().find_map(|u| redirect_problem(u)) {
        return Err(failed(problem));
    }
    Ok(Known {
        client_id: doc.client_id,
        client_name: doc.client_name.map(|n| n.chars().take(100).collect()),
        redirect_uris: doc.redirect_uris.into_iter().take(MAX_REDIRECTS).collect(),
    })
}

/// Whether `ip` is an address on the public internet.
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80)
            }
        },
    }
}

/// Resolves names to their public addresses only: a document's host that resolves into the
/// server's own network is refused before any connection.
struct PublicOnly {
    loopback: bool,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let loopback = self.loopback;
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let kept: Vec<SocketAddr> = found
                .filter(|a| is_public(a.ip()) || (loopback && a.ip().is_loopback()))
                .collect();
            if kept.is_empty() {
                return Err(format!("{} resolves to no public address", name.as_str()).into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The HTTP client for metadata documents: no redirects, a short timeout, public addresses
/// (and loopback ones only with `loopback`, for local development and tests).
pub(super) fn document_client(loopback: bool) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(DOCUMENT_TIMEOUT)
        .connect_timeout(DOCUMENT_TIMEOUT)
        .dns_resolver(Arc::new(PublicOnly { loopback }))
        .user_agent(concat!("forgelens/", env!("CARGO_PKG_VERSION")))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_match_exactly_but_for_a_loopback_port() {
        let registered = vec![
            "https://app.example/cb".to_owned(),
            "http://127.0.0.1:3000/callback".to_owned(),
        ];
        assert!(redirect_matches(&registered, "https://app.example/cb"));
        assert!(redirect_matches(
            &registered,
            "http://127.0.0.1:49152/callback"
        ));
        assert!(!redirect_matches(&registered, "https://app.example/cb/"));
        assert!(!redirect_matches(&registered, "https://app.example/cb?x=1"));
        assert!(!redirect_matches(&registered, "https://evil.example/cb"));
        assert!(!redirect_matches(
            &registered,
            "http://127.0.0.1:49152/other"
        ));
        assert!(!redirect_matches(
            &registered,
            "https://127.0.0.1:3000/callback"
        ));
    }

    #[test]
    fn only_safe_redirects_register() {
        assert_eq!(
            redirect_problem("https://claude.ai/api/mcp/auth_callback"),
            None
        );
        assert_eq!(redirect_problem("http://localhost:8080/cb"), None);
        assert_eq!(redirect_problem("com.example.app:/oauth"), None);
        for bad in [
            "http://app.example/cb",
            "javascript:alert(1)",
            "https://app.example/cb#x",
            "/relative",
        ] {
            assert!(redirect_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn client_ids_that_would_reach_inside_are_refused() {
        assert!(document_url("https://app.example/client.json", false).is_ok());
        for bad in [
            "http://app.example/client.json",
            "https://app.example/",
            "https://10.0.0.1/client.json",
            "https://[::1]/client.json",
            "https://169.254.169.254/latest",
            "https://localhost/client.json",
            "https://user@app.example/client.json",
            "https://:secret@app.example/client.json",
            "https://app.example/a/../client.json",
            "http://127.0.0.1:8000/client.json",
        ] {
            assert!(document_url(bad, false).is_err(), "{bad}");
        }
        assert!(document_url("http://127.0.0.1:8000/client.json", true).is_ok());
        assert!(!is_public("::ffff:192.168.0.1".parse().unwrap()));
        assert!(is_public("93.184.215.14".parse().unwrap()));
    }
}
