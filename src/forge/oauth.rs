//! forgelens as a confidential OAuth2 client of the forge: where its sign-in page is, trading a
//! code (with PKCE) or a refresh token for the forge's tokens, and who the tokens belong to.
//!
//! The forge's tokens come back here and go into the vault of [`crate::oauth`]; they are never
//! shown to an MCP client. Its token endpoint answers like any OAuth2 server; an
//! `invalid_grant` means the user revoked the grant (or the refresh token was used already),
//! which the caller turns into a fresh sign-in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Url;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::scope::Scopes;
use super::{Client, Token};

/// The forge's tokens of one sign-in.
#[derive(Clone, Serialize, Deserialize)]
pub struct ForgeTokens {
    pub access: String,
    pub refresh: Option<String>,
    /// Seconds since the epoch after which the access token is no good; `None` when the forge
    /// did not say.
    pub expires_at: Option<u64>,
}

impl std::fmt::Debug for ForgeTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForgeTokens(***)")
    }
}

/// Why the forge's OAuth endpoints gave no tokens.
#[derive(Debug, Error)]
pub enum ForgeOAuthError {
    /// The forge refused the code or refresh token: the grant is gone or was never good.
    #[error("the forge refused the grant: {0}")]
    Refused(String),
    #[error("the forge's OAuth endpoint could not be used: {0}")]
    Unavailable(String),
}

/// The forge's OAuth application that forgelens signs users in with.
#[derive(Clone)]
pub struct ForgeApp {
    pub client_id: String,
    pub client_secret: String,
    /// Where the forge sends the user back: forgelens's `/callback`.
    pub redirect_uri: String,
}

impl std::fmt::Debug for ForgeApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForgeApp")
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

/// What the token endpoint answers.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: Option<String>,
    error_description: Option<String>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Client {
    /// The forge's sign-in page for `app`, asking for `scopes` (always explicit: a request
    /// without API scopes gets every scope from the forge), with a PKCE S256 challenge.
    pub fn authorize_url(
        &self,
        app: &ForgeApp,
        state: &str,
        challenge: &str,
        scopes: Scopes,
    ) -> Url {
        let mut url = self.instance().clone();
        let path = format!("{}/login/oauth/authorize", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url.query_pairs_mut()
            .clear()
            .append_pair("client_id", &app.client_id)
            .append_pair("redirect_uri", &app.redirect_uri)
            .append_pair("response_type", "code")
            .append_pair("scope", &scopes.to_text())
            .append_pair("state", state)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        url
    }

    /// Trades the forge's authorization `code` for its tokens.
    pub async fn exchange_code(
        &self,
        app: &ForgeApp,
        code: &str,
        verifier: &str,
    ) -> Result<ForgeTokens, ForgeOAuthError> {
        self.token_request(
            app,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", &app.redirect_uri),
                ("code_verifier", verifier),
            ],
        )
        .await
    }

    /// Trades a refresh token for new tokens.
    pub async fn refresh_grant(
        &self,
        app: &ForgeApp,
        refresh: &str,
    ) -> Result<ForgeTokens, ForgeOAuthError> {
        self.token_request(
            app,
            &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        )
        .await
    }

    async fn token_request(
        &self,
        app: &ForgeApp,
        form: &[(&str, &str)],
    ) -> Result<ForgeTokens, ForgeOAuthError> {
        let mut url = self.instance().clone();
        let path = format!(
            "{}/login/oauth/access_token",
            url.path().trim_end_matches('/')
        );
        url.set_path(&path);
        url.set_query(None);
        let mut form: Vec<(&str, &str)> = form.to_vec();
        form.push(("client_id", &app.client_id));
        form.push(("client_secret", &app.client_secret));
        let unavailable =
            |e: reqwest::Error| ForgeOAuthError::Unavailable(e.without_url().to_string());
        let response = self
            .http()
            .post(url)
            .form(&form)
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(Duration::from_secs(15))
            .send()
            .await
            .map_err(unavailable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unavailable)?;
        if status.is_success() {
            let answer: TokenAnswer = serde_json::from_slice(&bytes).map_err(|e| {
                ForgeOAuthError::Unavailable(format!("the token answer is not OAuth JSON: {e}"))
            })?;
            return Ok(ForgeTokens {
                access: answer.access_token,
                refresh: answer.refresh_token,
                expires_at: answer.expires_in.map(|s| now() + s),
            });
        }
        let error: Option<ErrorAnswer> = serde_json::from_slice(&bytes).ok();
        let (code, description) = error
            .map(|e| (e.error, e.error_description))
            .unwrap_or_default();
        let said = format!(
            "{} ({})",
            code.as_deref().unwrap_or("no error code"),
            description.as_deref().unwrap_or(status.as_str())
        );
        if status.is_client_error() && code.as_deref() != Some("invalid_client") {
            Err(ForgeOAuthError::Refused(said))
        } else {
            Err(ForgeOAuthError::Unavailable(said))
        }
    }

    /// The login of the user a forge token belongs to: the forge's introspection endpoint
    /// says it whatever the token's scopes (`GET /user` would need `read:user`); an instance
    /// without one is asked `GET /user`.
    pub async fn login_of(&self, app: &ForgeApp, access: &str) -> Result<String, ForgeOAuthError> {
        #[derive(Deserialize)]
        struct Introspected {
            active: bool,
            username: Option<String>,
        }
        let mut url = self.instance().clone();
        let path = format!(
            "{}/login/oauth/introspect",
            url.path().trim_end_matches('/')
        );
        url.set_path(&path);
        url.set_query(None);
        let answer = self
            .http()
            .post(url)
            .basic_auth(&app.client_id, Some(&app.client_secret))
            .form(&[("token", access)])
            .timeout(Duration::from_secs(15))
            .send()
            .await;
        if let Ok(response) = answer
            && response.status().is_success()
            && let Ok(introspected) = response.json::<Introspected>().await
        {
            return match (introspected.active, introspected.username) {
                (true, Some(login)) if !login.is_empty() => Ok(login),
                _ => Err(ForgeOAuthError::Refused(
                    "the forge says the token is not active".into(),
                )),
            };
        }
        self.login_from_user(access).await
    }

    /// The login of `GET /user` with the token.
    async fn login_from_user(&self, access: &str) -> Result<String, ForgeOAuthError> {
        #[derive(Deserialize)]
        struct User {
            login: String,
        }
        let token = Token::new(access)
            .ok_or_else(|| ForgeOAuthError::Unavailable("the forge sent an empty token".into()))?;
        let response = self
            .send(&super::Request::get("/user"), Some(&token))
            .await
            .map_err(|e| match e.status() {
                Some(401 | 403) => ForgeOAuthError::Refused(e.to_string()),
                _ => ForgeOAuthError::Unavailable(e.to_string()),
            })?;
        let user: User = serde_json::from_value(response.body.into_json())
            .map_err(|e| ForgeOAuthError::Unavailable(format!("`GET /user` said no login: {e}")))?;
        Ok(user.login)
    }
}
