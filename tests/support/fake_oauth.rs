//! The fake forge's OAuth2 provider, as the real forge's behaves where forgelens depends on it:
//!
//! - `GET /login/oauth/authorize`: the registered application, its exact redirect URI, PKCE;
//!   the test user consents at once (a 302 back with a code), unless a grant with other
//!   scopes exists already, which the forge refuses (`error=invalid_request`).
//! - `POST /login/oauth/access_token`: the code (once, with its verifier and the client's
//!   secret) or a refresh token (used once: each refresh gives a new one) for tokens.
//! - `POST /login/oauth/introspect` (the application's Basic credentials): who a token's
//!   user is and its scopes, whatever the token may do.
//! - Its access tokens work on the API with their scopes: a request beyond them gets 403
//!   naming the scope, a revoked one 401.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::json;

/// The application forgelens is registered as.
pub const APP_ID: &str = "forgelens-app-id";
pub const APP_SECRET: &str = "forgelens-app-secret-0123456789";
/// Every access token of the provider starts so (and the secret scan of tests looks for it).
pub const ACCESS_PREFIX: &str = "forge-oauth-access-";
pub const REFRESH_PREFIX: &str = "forge-oauth-refresh-";

/// What the provider knows.
#[derive(Debug, Default)]
pub struct Provider {
    /// The application's redirect URI; no application until it is set.
    pub redirect_uri: Option<String>,
    /// The scopes of the user's grant for the application, once there is one.
    pub grant: Option<String>,
    codes: HashMap<String, (String, String)>,
    access: HashMap<String, String>,
    refresh: HashMap<String, String>,
    issued: usize,
    /// `expires_in` of new access tokens.
    pub expires_in: u64,
    /// Every `/login/oauth/authorize` query the provider received.
    pub authorize_queries: Vec<HashMap<String, String>>,
    /// How many refresh-token trades it answered.
    pub refreshes: usize,
}

impl Provider {
    /// Forgets every token and the grant: the user revoked the application on the forge.
    pub fn revoke(&mut self) {
        self.access.clear();
        self.refresh.clear();
        self.grant = None;
    }

    /// The scopes of `token` when it is one of the provider's live access tokens; `Err` for
    /// one of its tokens that is no longer good; `Ok(None)` for any other token.
    pub fn scopes_of(&self, token: &str) -> Result<Option<&str>, ()> {
        if !token.starts_with(ACCESS_PREFIX) {
            return Ok(None);
        }
        self.access.get(token).map(|s| Some(s.as_str())).ok_or(())
    }

    fn issue(&mut self, scopes: &str) -> serde_json::Value {
        self.issued += 1;
        let access = format!("{ACCESS_PREFIX}{}", self.issued);
        let refresh = format!("{REFRESH_PREFIX}{}", self.issued);
        self.access.insert(access.clone(), scopes.to_owned());
        self.refresh.insert(refresh.clone(), scopes.to_owned());
        json!({
            "access_token": access,
            "token_type": "bearer",
            "expires_in": if self.expires_in == 0 { 3600 } else { self.expires_in },
            "refresh_token": refresh,
        })
    }

    /// `GET /login/oauth/authorize`.
    pub fn authorize(&mut self, query: &[(String, String)]) -> Response {
        let query: HashMap<String, String> = query.iter().cloned().collect();
        self.authorize_queries.push(query.clone());
        let get = |k: &str| query.get(k).map(String::as_str).unwrap_or("");
        let Some(redirect) = self.redirect_uri.clone() else {
            return (StatusCode::BAD_REQUEST, "no such application").into_response();
        };
        if get("client_id") != APP_ID || get("redirect_uri") != redirect {
            return (StatusCode::BAD_REQUEST, "unregistered redirect URI").into_response();
        }
        if get("code_challenge_method") != "S256" || get("code_challenge").is_empty() {
            return (StatusCode::BAD_REQUEST, "PKCE is required").into_response();
        }
        let scopes = get("scope").to_owned();
        let back = |pairs: &[(&str, &str)]| {
            let mut url = reqwest::Url::parse(&redirect).unwrap();
            url.query_pairs_mut().extend_pairs(pairs.iter().copied());
            url.query_pairs_mut().append_pair("state", get("state"));
            (StatusCode::FOUND, [("location", url.to_string())]).into_response()
        };
        match &self.grant {
            Some(existing) if *existing != scopes => {
                return back(&[
                    ("error", "invalid_request"),
                    ("error_description", "a grant exists with different scope"),
                ]);
            }
            _ => self.grant = Some(scopes.clone()),
        }
        self.issued += 1;
        let code = format!("forge-code-{}", self.issued);
        self.codes
            .insert(code.clone(), (scopes, get("code_challenge").to_owned()));
        back(&[("code", &code)])
    }

    /// `POST /login/oauth/introspect`, with the application's Basic credentials.
    pub fn introspect(&self, authorization: Option<&str>, body: &[u8]) -> Response {
        let expected =
            base64::engine::general_purpose::STANDARD.encode(format!("{APP_ID}:{APP_SECRET}"));
        if authorization != Some(format!("Basic {expected}").as_str()) {
            return (StatusCode::UNAUTHORIZED, "no such application").into_response();
        }
        let form: HashMap<String, String> =
            url::form_urlencoded::parse(body).into_owned().collect();
        let token = form.get("token").map(String::as_str).unwrap_or("");
        match self.access.get(token) {
            Some(scopes) => axum::Json(json!({
                "active": true, "scope": scopes, "username": "alice", "sub": "1",
                "aud": APP_ID, "client_id": APP_ID,
            }))
            .into_response(),
            None => axum::Json(json!({"active": false})).into_response(),
        }
    }

    /// `POST /login/oauth/access_token`.
    pub fn token(&mut self, body: &[u8]) -> Response {
        let form: HashMap<String, String> =
            url::form_urlencoded::parse(body).into_owned().collect();
        let get = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
        let refuse = |status: StatusCode, error: &str, description: &str| {
            (
                status,
                axum::Json(json!({"error": error, "error_description": description})),
            )
                .into_response()
        };
        if get("client_id") != APP_ID || get("client_secret") != APP_SECRET {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication failed",
            );
        }
        match get("grant_type") {
            "authorization_code" => {
                let Some((scopes, challenge)) = self.codes.remove(get("code")) else {
                    return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "unknown code");
                };
                if Some(get("redirect_uri")) != self.redirect_uri.as_deref() {
                    return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "redirect_uri");
                }
                let digest =
                    ring::digest::digest(&ring::digest::SHA256, get("code_verifier").as_bytes());
                let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
                if computed != challenge {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        "unauthorized_client",
                        "failed PKCE code challenge",
                    );
                }
                axum::Json(self.issue(&scopes)).into_response()
            }
            "refresh_token" => {
                self.refreshes += 1;
                let Some(scopes) = self.refresh.remove(get("refresh_token")) else {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        "invalid_grant",
                        "unknown refresh token",
                    );
                };
                axum::Json(self.issue(&scopes)).into_response()
            }
            _ => refuse(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "grant_type",
            ),
        }
    }
}

/// The scope the fake forge wants for `method` on `path` (under `/api/v1`): its own short
/// version of how the forge groups routes.
pub fn scope_needed(method: &str, path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let category = match segments.as_slice() {
        ["repos", _, _, "issues" | "labels" | "milestones", ..] => "issue",
        ["repos", ..] => "repository",
        ["user", ..] | ["users", ..] => "user",
        ["orgs", ..] => "organization",
        ["notifications", ..] => "notification",
        _ => "misc",
    };
    let level = if method == "GET" { "read" } else { "write" };
    format!("{level}:{category}")
}

/// Whether `scopes` (space-separated) grant `needed`; a write scope includes its read.
pub fn grants(scopes: &str, needed: &str) -> bool {
    let category = needed.split_once(':').map_or("", |(_, c)| c);
    scopes
        .split([' ', ','])
        .any(|s| s == needed || s == format!("write:{category}"))
}
