//! The sign-in, step by step: the metadata documents that tell a client where everything is,
//! `/authorize` (the client's request checked, forgelens's consent page shown), `/consent`
//! (the person's answer; on "allow", off to the forge's sign-in with forgelens's own client,
//! PKCE and explicit scopes) and `/callback` (the forge's code traded for its tokens, which go
//! into the vault; the client gets forgelens's own one-time code).
//!
//! Until the redirect URI is known to be the client's, a problem is shown on a page and never
//! sent anywhere (no open redirect); after, it goes back to the client as an OAuth error, with
//! its `state` and this server's `iss` (RFC 9207).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::clients::{self, Known};
use super::keys::{s256, same};
use super::page::{self, Consent};
use super::tokens::{self, Code};
use super::{Authority, Grant, SIGN_IN_LIFETIME};
use crate::forge::oauth::ForgeOAuthError;
use crate::forge::scope::Scopes;
use crate::store::StoreError;

/// `GET /.well-known/oauth-protected-resource[/mcp]` (RFC 9728).
pub(super) async fn resource_metadata(State(authority): State<Arc<Authority>>) -> Response {
    let config = &authority.config;
    Json(json!({
        "resource": config.resource(),
        "authorization_servers": [config.issuer()],
        "scopes_supported": config.offered.names(),
        "bearer_methods_supported": ["header"],
        "resource_name": "forgelens",
    }))
    .into_response()
}

/// `GET /.well-known/oauth-authorization-server` (RFC 8414).
pub(super) async fn server_metadata(State(authority): State<Arc<Authority>>) -> Response {
    let config = &authority.config;
    Json(json!({
        "issuer": config.issuer(),
        "authorization_endpoint": config.endpoint("/authorize"),
        "token_endpoint": config.endpoint("/token"),
        "registration_endpoint": config.endpoint("/register"),
        "revocation_endpoint": config.endpoint("/revoke"),
        "scopes_supported": config.offered.names(),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

/// A sign-in between `/authorize` and the person's answer on the consent page.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    state: Option<String>,
    scopes: String,
    csrf: String,
}

/// A sign-in sent on to the forge, waiting for its `/callback`.
#[derive(Debug, Serialize, Deserialize)]
struct Upstream {
    pending: Pending,
    /// The PKCE verifier of forgelens's own request to the forge.
    verifier: String,
}

/// `redirect_uri` with the OAuth answer `pairs`, the client's `state` and this issuer.
fn back_to_client(
    authority: &Authority,
    redirect_uri: &str,
    state: Option<&str>,
    pairs: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return page::problem(StatusCode::BAD_REQUEST, "the redirect URI is not a URL");
    };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &authority.config.issuer());
    }
    see_other(url.as_str())
}

fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn store_down(error: StoreError) -> Response {
    error.report();
    page::problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "The sign-in store cannot be reached right now; try again shortly.",
    )
}

/// `GET /authorize`.
pub(super) async fn authorize(
    State(authority): State<Arc<Authority>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let param = |name: &str| query.get(name).map(String::as_str);
    let Some(client_id) = param("client_id") else {
        return page::problem(StatusCode::BAD_REQUEST, "The request names no client_id.");
    };
    let client = match clients::resolve(&authority, client_id).await {
        Ok(client) => client,
        Err(why) => return page::problem(StatusCode::BAD_REQUEST, &why),
    };
    let redirect_uri = match param("redirect_uri") {
        Some(asked) if clients::redirect_matches(&client.redirect_uris, asked) => asked.to_owned(),
        Some(asked) => {
            return page::problem(
                StatusCode::BAD_REQUEST,
                &format!("The redirect URI {asked} is not one this client registered."),
            );
        }
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return page::problem(
                StatusCode::BAD_REQUEST,
                "The request names no redirect_uri, and the client has several.",
            );
        }
    };
    let state = param("state");
    let fail = |error: &str, description: &str| {
        back_to_client(
            &authority,
            &redirect_uri,
            state,
            &[("error", error), ("error_description", description)],
        )
    };
    if param("response_type") != Some("code") {
        return fail("unsupported_response_type", "response_type must be `code`");
    }
    let Some(challenge) = param("code_challenge").filter(|c| is_challenge(c)) else {
        return fail(
            "invalid_request",
            "PKCE is required: send code_challenge (43 to 128 base64url characters) with code_challenge_method S256",
        );
    };
    if param("code_challenge_method") != Some("S256") {
        return fail("invalid_request", "code_challenge_method must be S256");
    }
    if let Some(resource) = param("resource")
        && resource != authority.config.resource()
    {
        return fail(
            "invalid_target",
            &format!(
                "this server issues tokens for {} only",
                authority.config.resource()
            ),
        );
    }
    let offered = authority.config.offered;
    let scopes = match param("scope").filter(|s| !s.trim().is_empty()) {
        None => offered,
        Some(asked) => match Scopes::parse(asked) {
            Ok(asked) => offered.intersect(asked),
            Err(unknown) => return fail("invalid_scope", &unknown.to_string()),
        },
    };
    if scopes.is_empty() {
        return fail(
            "invalid_scope",
            &format!("none of the scopes asked for is offered; offered: {offered}"),
        );
    }
    let pending = Pending {
        client_id: client.client_id.clone(),
        redirect_uri: redirect_uri.clone(),
        challenge: challenge.to_owned(),
        state: state.map(str::to_owned),
        scopes: scopes.to_text(),
        csrf: authority.keys.secret(),
    };
    let id = authority.keys.secret();
    let bytes = serde_json::to_vec(&pending).expect("strings serialize");
    if let Err(e) = authority
        .store
        .put(&pending_key(&id), bytes, SIGN_IN_LIFETIME)
        .await
    {
        return store_down(e);
    }
    consent_page(&authority, &client, &pending, &id)
}

fn pending_key(id: &str) -> String {
    format!("pending:{id}")
}

fn upstream_key(state: &str) -> String {
    format!("upstream:{state}")
}

/// A PKCE challenge: 43 to 128 characters of base64url's alphabet (RFC 7636).
fn is_challenge(text: &str) -> bool {
    (43..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
}

/// The origin (or, for a native application's scheme, the scheme) a page's form may lead to.
fn form_target(uri: &str) -> String {
    match Url::parse(uri) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url.origin().ascii_serialization(),
        Ok(url) => format!("{}:", url.scheme()),
        Err(_) => "'none'".to_owned(),
    }
}

fn consent_page(authority: &Authority, client: &Known, pending: &Pending, id: &str) -> Response {
    let redirect_host = Url::parse(&pending.redirect_uri)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(str::to_owned)
                .or(Some(u.scheme().to_owned()))
        })
        .unwrap_or_default();
    let forge = authority.forge.instance().to_string();
    let scopes = Scopes::parse(&pending.scopes).unwrap_or_default().names();
    let body = page::consent(&Consent {
        client_name: client.client_name.as_deref(),
        client_id: &client.client_id,
        redirect_host: &redirect_host,
        forge: forge.trim_end_matches('/'),
        scopes: &scopes,
        pending: id,
        csrf: &pending.csrf,
    });
    // The answer leads to the forge (allow) or back to the client (deny).
    let form_action = format!(
        "'self' {} {}",
        form_target(&forge),
        form_target(&pending.redirect_uri)
    );
    let mut response = page::html(StatusCode::OK, body, &form_action);
    let cookie = format!(
        "{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        authority.config.cookie_name(),
        pending.csrf,
        SIGN_IN_LIFETIME.as_secs(),
        if authority.config.is_https() {
            "; Secure"
        } else {
            ""
        }
    );
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

/// What the consent page posts.
#[derive(Debug, Deserialize)]
pub(super) struct Answer {
    pending: String,
    csrf: String,
    decision: String,
}

/// The value of cookie `name` in `headers`.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// `POST /consent`.
pub(super) async fn consent(
    State(authority): State<Arc<Authority>>,
    headers: HeaderMap,
    Form(answer): Form<Answer>,
) -> Response {
    let ours = authority.config.origin();
    if let Some(origin) = headers.get(header::ORIGIN)
        && origin.to_str().ok() != Some(ours.as_str())
    {
        return page::problem(
            StatusCode::FORBIDDEN,
            "The answer came from another site's page.",
        );
    }
    let from_cookie = cookie(&headers, &authority.config.cookie_name()).unwrap_or("");
    let pending = match authority.store.get(&pending_key(&answer.pending)).await {
        Ok(found) => found.and_then(|b| serde_json::from_slice::<Pending>(&b).ok()),
        Err(e) => return store_down(e),
    };
    let Some(pending) = pending else {
        return page::problem(
            StatusCode::BAD_REQUEST,
            "This sign-in has expired or was already answered.",
        );
    };
    if !same(&answer.csrf, &pending.csrf) || !same(from_cookie, &pending.csrf) {
        return page::problem(
            StatusCode::FORBIDDEN,
            "The answer could not be matched to this browser's sign-in (its check token is missing or wrong).",
        );
    }
    // Answered once: the page cannot be posted again.
    match authority.store.take(&pending_key(&answer.pending)).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            return page::problem(
                StatusCode::BAD_REQUEST,
                "This sign-in was already answered.",
            );
        }
        Err(e) => return store_down(e),
    }
    if answer.decision != "allow" {
        return back_to_client(
            &authority,
            &pending.redirect_uri,
            pending.state.as_deref(),
            &[
                ("error", "access_denied"),
                ("error_description", "the user denied access"),
            ],
        );
    }
    let verifier = authority.keys.secret();
    let forge_state = authority.keys.secret();
    let scopes = Scopes::parse(&pending.scopes).unwrap_or_default();
    let upstream = Upstream { pending, verifier };
    let bytes = serde_json::to_vec(&upstream).expect("strings serialize");
    if let Err(e) = authority
        .store
        .put(&upstream_key(&forge_state), bytes, SIGN_IN_LIFETIME)
        .await
    {
        return store_down(e);
    }
    let url = authority.forge.authorize_url(
        &authority.app,
        &forge_state,
        &s256(&upstream.verifier),
        scopes,
    );
    see_other(url.as_str())
}

/// `GET /callback`: where the forge sends the person back.
pub(super) async fn callback(
    State(authority): State<Arc<Authority>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(state) = query.get("state") else {
        return page::problem(StatusCode::BAD_REQUEST, "The forge sent no state back.");
    };
    // Taken: a callback works once.
    let upstream = match authority.store.take(&upstream_key(state)).await {
        Ok(found) => found.and_then(|b| serde_json::from_slice::<Upstream>(&b).ok()),
        Err(e) => return store_down(e),
    };
    let Some(Upstream { pending, verifier }) = upstream else {
        return page::problem(
            StatusCode::BAD_REQUEST,
            "This sign-in has expired or was already completed.",
        );
    };
    let back = |pairs: &[(&str, &str)]| {
        back_to_client(
            &authority,
            &pending.redirect_uri,
            pending.state.as_deref(),
            pairs,
        )
    };
    let Some(code) = query.get("code") else {
        let said = query.get("error").map_or("no code", String::as_str);
        tracing::info!("the forge sent the sign-in back without a code: {said}");
        return back(&[
            ("error", "access_denied"),
            (
                "error_description",
                "the forge did not grant access (a grant for forgelens with other scopes may exist: revoke it in the forge's settings, then sign in again)",
            ),
        ]);
    };
    let forge_tokens = match authority
        .forge
        .exchange_code(&authority.app, code, &verifier)
        .await
    {
        Ok(tokens) => tokens,
        Err(error) => {
            tracing::warn!("the forge's code could not be traded: {error}");
            let kind = match error {
                ForgeOAuthError::Refused(_) => "access_denied",
                ForgeOAuthError::Unavailable(_) => "temporarily_unavailable",
            };
            return back(&[
                ("error", kind),
                (
                    "error_description",
                    "the forge's sign-in could not be completed",
                ),
            ]);
        }
    };
    let subject = match authority
        .forge
        .login_of(&authority.app, &forge_tokens.access)
        .await
    {
        Ok(login) => login,
        Err(error) => {
            tracing::warn!("the forge token's user could not be read: {error}");
            return back(&[
                ("error", "temporarily_unavailable"),
                ("error_description", "the forge did not say who signed in"),
            ]);
        }
    };
    let id = authority.keys.secret();
    let grant = Grant {
        vault: authority.seal(&id, &forge_tokens),
        id,
        client_id: pending.client_id.clone(),
        subject,
        scopes: pending.scopes.clone(),
    };
    if let Err(e) = authority.save_grant(&grant).await {
        return store_down(e);
    }
    tracing::info!(user = %grant.subject, scopes = %grant.scopes, "signed in");
    let record = Code {
        grant: grant.id.clone(),
        client_id: pending.client_id.clone(),
        redirect_uri: pending.redirect_uri.clone(),
        challenge: pending.challenge.clone(),
    };
    match tokens::new_code(&authority, &record).await {
        Ok(code) => back(&[("code", &code)]),
        Err(response) => response,
    }
}
