//! forgelens's own tokens: the access token (signed claims, checked on every `/mcp` request
//! without a store round-trip but for the sign-in's liveness), the `/token` endpoint (a code
//! with its PKCE verifier, or a refresh token, rotated: a spent one presented again revokes
//! its whole sign-in) and `/revoke` (RFC 7009).

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::keys::{Keys, lookup, s256, same};
use super::{ACCESS_LIFETIME, Authority, CODE_LIFETIME, Grant, REFRESH_LIFETIME, now};
use crate::forge::scope::Scopes;
use crate::store::StoreError;

/// What every access token starts with: its format's name and version.
const PREFIX: &str = "fla1.";

/// What an access token says.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    /// The resource the token is for: this server's `/mcp`.
    pub aud: String,
    /// The forge user.
    pub sub: String,
    /// The sign-in (grant) it belongs to.
    pub gid: String,
    pub cid: String,
    pub scope: String,
    pub iat: u64,
    pub exp: u64,
}

/// A new access token for `claims`.
pub fn mint(keys: &Keys, claims: &Claims) -> String {
    let body = B64.encode(serde_json::to_vec(claims).expect("strings and numbers serialize"));
    let signed = format!("{PREFIX}{body}");
    let signature = keys.sign(signed.as_bytes());
    format!("{signed}.{signature}")
}

/// The claims of an access token signed with `keys`; `None` for anything else. Expiry and
/// audience are the caller's to check.
pub fn read(keys: &Keys, token: &str) -> Option<Claims> {
    let (signed, signature) = token.rsplit_once('.')?;
    let body = signed.strip_prefix(PREFIX)?;
    if !keys.verify(signed.as_bytes(), signature) {
        return None;
    }
    serde_json::from_slice(&B64.decode(body).ok()?).ok()
}

/// A code as `/callback` stored it for `/token`.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Code {
    pub grant: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub challenge: String,
}

/// A live refresh token's record.
#[derive(Debug, Serialize, Deserialize)]
struct Refresh {
    grant: String,
    client_id: String,
}

/// What `/token` reads (either grant type).
#[derive(Debug, Deserialize)]
pub(super) struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
    scope: Option<String>,
}

/// An OAuth error answer of the token endpoint.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let body = json!({"error": error, "error_description": description});
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}

fn invalid_grant(description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

fn unavailable(error: StoreError) -> Response {
    error.report();
    temporarily_unavailable()
}

/// The store could not answer; the store logged why.
fn temporarily_unavailable() -> Response {
    oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "the sign-in store cannot be reached; try again shortly",
    )
}

pub(super) fn code_key(code: &str) -> String {
    format!("code:{}", lookup(code))
}

fn refresh_key(token: &str) -> String {
    format!("refresh:{}", lookup(token))
}

fn spent_key(token: &str) -> String {
    format!("spent:{}", lookup(token))
}

/// `POST /token`.
pub(super) async fn token(
    State(authority): State<Arc<Authority>>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Some(resource) = &form.resource
        && resource != &authority.config.resource()
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            &format!(
                "this server issues tokens for {} only",
                authority.config.resource()
            ),
        );
    }
    let Some(client_id) = form.client_id.as_deref() else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "client_id is required (clients of this server are public and use PKCE)",
        );
    };
    match form.grant_type.as_deref() {
        Some("authorization_code") => by_code(&authority, client_id, &form).await,
        Some("refresh_token") => by_refresh(&authority, client_id, &form).await,
        Some(other) => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("`{other}` is not served: use authorization_code or refresh_token"),
        ),
        None => oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "grant_type is required",
        ),
    }
}

async fn by_code(authority: &Authority, client_id: &str, form: &TokenForm) -> Response {
    let (Some(code), Some(verifier)) = (form.code.as_deref(), form.code_verifier.as_deref()) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "code and code_verifier are required",
        );
    };
    let store = &authority.store;
    let taken = match store.take(&code_key(code)).await {
        Ok(taken) => taken,
        Err(e) => return unavailable(e),
    };
    let Some(record) = taken.and_then(|b| serde_json::from_slice::<Code>(&b).ok()) else {
        // A code used twice may have been stolen: the sign-in it made ends too.
        if let Ok(Some(grant)) = store.take(&format!("used{}", code_key(code))).await {
            let _ = authority
                .revoke_grant(&String::from_utf8_lossy(&grant))
                .await;
        }
        return invalid_grant("the code is unknown, expired or already used");
    };
    let _ = store
        .put(
            &format!("used{}", code_key(code)),
            record.grant.clone().into_bytes(),
            CODE_LIFETIME * 10,
        )
        .await;
    if record.client_id != client_id {
        return invalid_grant("the code was issued to another client");
    }
    if form.redirect_uri.as_deref() != Some(record.redirect_uri.as_str()) {
        return invalid_grant("redirect_uri differs from the authorization request's");
    }
    if !same(&s256(verifier), &record.challenge) {
        return invalid_grant("the code_verifier does not match the code_challenge (PKCE)");
    }
    let grant = match authority.grant(&record.grant).await {
        Ok(Some(grant)) => grant,
        Ok(None) => return invalid_grant("the sign-in has ended"),
        Err(_) => return temporarily_unavailable(),
    };
    issue(authority, &grant, grant.scopes.clone()).await
}

async fn by_refresh(authority: &Authority, client_id: &str, form: &TokenForm) -> Response {
    let Some(presented) = form.refresh_token.as_deref() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "refresh_token is required",
        );
    };
    let store = &authority.store;
    let taken = match store.take(&refresh_key(presented)).await {
        Ok(taken) => taken,
        Err(e) => return unavailable(e),
    };
    let Some(record) = taken.and_then(|b| serde_json::from_slice::<Refresh>(&b).ok()) else {
        // A spent refresh token again: someone holds a copy, so the whole family goes.
        if let Ok(Some(grant)) = store.get(&spent_key(presented)).await {
            let _ = authority
                .revoke_grant(&String::from_utf8_lossy(&grant))
                .await;
            return invalid_grant(
                "this refresh token was already used; the sign-in is revoked, sign in again",
            );
        }
        return invalid_grant("the refresh token is unknown or expired");
    };
    if let Err(e) = store
        .put(
            &spent_key(presented),
            record.grant.clone().into_bytes(),
            REFRESH_LIFETIME,
        )
        .await
    {
        return unavailable(e);
    }
    if record.client_id != client_id {
        let _ = authority.revoke_grant(&record.grant).await;
        return invalid_grant("the refresh token was issued to another client");
    }
    let grant = match authority.grant(&record.grant).await {
        Ok(Some(grant)) => grant,
        Ok(None) => return invalid_grant("the sign-in has ended; sign in again"),
        Err(_) => return temporarily_unavailable(),
    };
    // A refresh may narrow the scopes, never widen them.
    let granted = Scopes::parse(&grant.scopes).unwrap_or_default();
    let scopes = match form.scope.as_deref().map(Scopes::parse) {
        None => granted,
        Some(Ok(asked)) => granted.intersect(asked),
        Some(Err(unknown)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                &unknown.to_string(),
            );
        }
    };
    if let Err(e) = authority.save_grant(&grant).await {
        return unavailable(e);
    }
    issue(authority, &grant, scopes.to_text()).await
}

/// A new access token and refresh token for `grant`.
async fn issue(authority: &Authority, grant: &Grant, scope: String) -> Response {
    let issued = now();
    let claims = Claims {
        iss: authority.config.issuer(),
        aud: authority.config.resource(),
        sub: grant.subject.clone(),
        gid: grant.id.clone(),
        cid: grant.client_id.clone(),
        scope: scope.clone(),
        iat: issued,
        exp: issued + ACCESS_LIFETIME.as_secs(),
    };
    let access = mint(&authority.keys, &claims);
    let refresh = authority.keys.secret();
    let record = Refresh {
        grant: grant.id.clone(),
        client_id: grant.client_id.clone(),
    };
    let bytes = serde_json::to_vec(&record).expect("strings serialize");
    if let Err(e) = authority
        .store
        .put(&refresh_key(&refresh), bytes, REFRESH_LIFETIME)
        .await
    {
        return unavailable(e);
    }
    let body = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ACCESS_LIFETIME.as_secs(),
        "refresh_token": refresh,
        "scope": scope,
    });
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// What `/revoke` reads.
#[derive(Debug, Deserialize)]
pub(super) struct RevokeForm {
    token: Option<String>,
    client_id: Option<String>,
}

/// `POST /revoke`: the sign-in of an access or refresh token ends. Answers `200` whether or
/// not the token was known, as RFC 7009 asks, so it tells nothing about other clients' tokens.
pub(super) async fn revoke(
    State(authority): State<Arc<Authority>>,
    Form(form): Form<RevokeForm>,
) -> Response {
    let (Some(token), Some(client_id)) = (form.token.as_deref(), form.client_id.as_deref()) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token and client_id are required",
        );
    };
    let grant = match read(&authority.keys, token) {
        Some(claims) => (claims.cid == client_id).then_some(claims.gid),
        None => match authority.store.get(&refresh_key(token)).await {
            Ok(found) => found
                .and_then(|b| serde_json::from_slice::<Refresh>(&b).ok())
                .filter(|r| r.client_id == client_id)
                .map(|r| r.grant),
            Err(e) => return unavailable(e),
        },
    };
    if let Some(grant) = grant {
        if let Err(e) = authority.revoke_grant(&grant).await {
            return unavailable(e);
        }
        let _ = authority.store.delete(&refresh_key(token)).await;
    }
    StatusCode::OK.into_response()
}

/// A fresh single-use code for `record`.
pub(super) async fn new_code(authority: &Authority, record: &Code) -> Result<String, Response> {
    let code = authority.keys.secret();
    let bytes = serde_json::to_vec(record).expect("strings serialize");
    authority
        .store
        .put(&code_key(&code), bytes, CODE_LIFETIME)
        .await
        .map_err(unavailable)?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            iss: "https://mcp.example".into(),
            aud: "https://mcp.example/mcp".into(),
            sub: "alice".into(),
            gid: "g".into(),
            cid: "c".into(),
            scope: "read:issue".into(),
            iat: 1,
            exp: 2,
        }
    }

    #[test]
    fn an_access_token_reads_back_only_unchanged_and_with_its_key() {
        let keys = Keys::from_bytes(&[3u8; 32]);
        let token = mint(&keys, &claims());
        assert_eq!(read(&keys, &token).unwrap().sub, "alice");
        assert!(read(&Keys::from_bytes(&[4u8; 32]), &token).is_none());
        // Another user's claims under the same signature.
        let (_, signature) = token.rsplit_once('.').unwrap();
        let mut other = claims();
        other.sub = "mallory".into();
        let body = B64.encode(serde_json::to_vec(&other).unwrap());
        assert!(read(&keys, &format!("{PREFIX}{body}.{signature}")).is_none());
        assert!(read(&keys, "good-token-0123456789").is_none());
    }
}
