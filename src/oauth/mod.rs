//! forgelens as the OAuth 2.1 authorization server of its MCP clients, in front of the forge.
//!
//! Hosted MCP clients sign users in with OAuth; the forge is an OAuth2 provider but cannot be
//! theirs (no client registration, no resource indicators, no audience in its tokens). So
//! forgelens is both: the authorization server its clients register with and get tokens from,
//! and a confidential client of the forge, which signs the user in upstream. The forge's
//! tokens stay in the vault (sealed, in the [`crate::store`]: a file, or Redis shared by replicas); a client
//! only ever holds forgelens's own tokens, short-lived and bound to this server's `/mcp` as their audience.
//!
//! The flow, by module: a client is known by a client ID metadata document or by dynamic
//! registration ([`clients`]); `/authorize` checks the request and shows forgelens's consent
//! page, whose approval sends the user to the forge's sign-in, whose `/callback` stores the
//! forge's tokens and hands the client a one-time code ([`flow`]); `/token` trades the code
//! (PKCE) or a refresh token (rotated, a reused one revoking its sign-in) and `/revoke` ends a
//! sign-in ([`tokens`]). Every `/mcp` request's token goes through [`Authority::verify`].

mod clients;
mod flow;
pub mod keys;
mod page;
pub mod tokens;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use self::keys::Keys;
use crate::config::{OAuthConfig, StoreConfig};
use crate::forge::oauth::{ForgeApp, ForgeOAuthError, ForgeTokens};
use crate::forge::scope::Scopes;
use crate::forge::{self, Token};
use crate::store::redis::RedisStore;
use crate::store::{FileStore, Store, StoreError};

/// How long a forgelens access token is good for.
pub const ACCESS_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// How long a sign-in lives without being refreshed, and a refresh token with it.
pub const REFRESH_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);
/// How long a client has to trade its code.
pub const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// How long a user has to get through the consent page and the forge's sign-in.
pub const SIGN_IN_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// How early before its expiry a forge token is refreshed.
pub const FORGE_REFRESH_MARGIN: Duration = Duration::from_secs(120);

/// Why the authorization server could not start.
#[derive(Debug, Error)]
pub enum StartError {
    #[error(transparent)]
    Key(#[from] keys::KeyError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot build the HTTP client for client metadata documents: {0}")]
    Client(String),
    #[error(
        "the sign-ins are to be kept in the shared store, but none was started with the server"
    )]
    NoSharedStore,
}

/// Why a request's bearer token was refused: each becomes a `401` with a fresh challenge
/// (or a `503` when the store could not say).
#[derive(Debug, Error)]
pub enum Refused {
    #[error(
        "this server needs a sign-in: send `Authorization: Bearer <token>` from its OAuth flow"
    )]
    Missing,
    #[error("the token is not one this server issued, or it was changed")]
    Forged,
    #[error("the token has expired; refresh it")]
    Expired,
    #[error("the token was issued for another resource ({0}), not this server")]
    Audience(String),
    #[error("the sign-in was revoked or has ended; sign in again")]
    Revoked,
    #[error("the forge refused the sign-in ({0}); sign in again")]
    Forge(String),
    #[error("the sign-in cannot be checked now: {0}")]
    Unavailable(String),
}

impl Refused {
    /// Whether the client should sign in again (`401`) rather than retry (`503`).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Refused::Unavailable(_))
    }
}

/// A verified request: the user's forge token, limited to the sign-in's scopes.
#[derive(Debug)]
pub struct SignedIn {
    pub token: Token,
    pub subject: String,
}

/// One sign-in: the user, the client, what was granted, and the forge's tokens sealed.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Grant {
    id: String,
    client_id: String,
    subject: String,
    scopes: String,
    /// The forge's tokens, sealed for this grant's record (base64).
    vault: String,
}

/// The authorization server: settings, keys, store, and the forge it signs users in with.
pub struct Authority {
    config: OAuthConfig,
    keys: Keys,
    store: Arc<dyn Store>,
    forge: forge::Client,
    app: ForgeApp,
    /// Fetches client ID metadata documents: its own pool, every address filtered.
    documents: reqwest::Client,
    /// One forge refresh at a time per sign-in: the forge's refresh tokens are single-use.
    refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority")
            .field("issuer", &self.config.issuer())
            .finish_non_exhaustive()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Authority {
    /// The authorization server of `config`, signing users in at `forge`; `shared` is the
    /// store replicas share, when `--store` names one.
    pub fn start(
        config: &OAuthConfig,
        forge: forge::Client,
        shared: Option<Arc<RedisStore>>,
    ) -> Result<Authority, StartError> {
        let keys = Keys::from_file(&config.key_file)?;
        let store: Arc<dyn Store> = match (&config.store, shared) {
            (StoreConfig::File(path), _) => Arc::new(FileStore::open(path)?),
            (StoreConfig::Shared, Some(shared)) => shared,
            (StoreConfig::Shared, None) => return Err(StartError::NoSharedStore),
        };
        Authority::with_store(config, forge, keys, store)
    }

    /// [`Authority::start`] with its keys and store given.
    pub fn with_store(
        config: &OAuthConfig,
        forge: forge::Client,
        keys: Keys,
        store: Arc<dyn Store>,
    ) -> Result<Authority, StartError> {
        let app = ForgeApp {
            client_id: config.forge_client_id.clone(),
            client_secret: config.forge_client_secret.clone(),
            redirect_uri: config.endpoint("/callback"),
        };
        let documents = clients::document_client(config.loopback_clients)
            .map_err(|e| StartError::Client(e.to_string()))?;
        Ok(Authority {
            config: config.clone(),
            keys,
            store,
            forge,
            app,
            documents,
            refreshing: Mutex::default(),
        })
    }

    /// The routes of the authorization server, to serve beside `/mcp`.
    pub fn routes(self: &Arc<Self>) -> Router {
        Router::new()
            .route(
                "/.well-known/oauth-protected-resource",
                get(flow::resource_metadata),
            )
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(flow::resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(flow::server_metadata),
            )
            .route("/register", post(clients::register))
            .route("/authorize", get(flow::authorize))
            .route("/consent", post(flow::consent))
            .route("/callback", get(flow::callback))
            .route("/token", post(tokens::token))
            .route("/revoke", post(tokens::revoke))
            // Every request here is a small form or JSON document.
            .layer(DefaultBodyLimit::max(16 * 1024))
            .with_state(self.clone())
    }

    /// The `WWW-Authenticate` value of a `401`: where the resource's metadata is, the scopes
    /// offered, and why the token was refused when one was sent.
    pub fn challenge(&self, refused: &Refused) -> HeaderValue {
        let mut value = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{}\"",
            self.config.resource_metadata_url(),
            self.config.offered
        );
        if !matches!(refused, Refused::Missing) {
            value.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{}\"",
                quoted(&refused.to_string())
            ));
        }
        HeaderValue::from_str(&value).expect("the challenge is printable ASCII")
    }

    /// The `WWW-Authenticate` value of a `403` for a request that needs `needed`: one
    /// challenge naming every scope the sign-in needs, what it has and what is missing.
    pub fn scope_challenge(&self, granted: Scopes, needed: &str) -> HeaderValue {
        let mut all = granted.names();
        all.push(needed.to_owned());
        let value = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"this request needs {}\"",
            all.join(" "),
            self.config.resource_metadata_url(),
            quoted(needed)
        );
        HeaderValue::from_str(&value).expect("the challenge is printable ASCII")
    }

    /// The forge token a bearer token stands for, after checking its signature, expiry,
    /// audience and that its sign-in is still live; the forge token refreshed first when it is
    /// about to expire.
    pub async fn verify(&self, bearer: Option<&str>) -> Result<SignedIn, Refused> {
        let bearer = bearer.ok_or(Refused::Missing)?;
        let claims = tokens::read(&self.keys, bearer).ok_or(Refused::Forged)?;
        if claims.iss != self.config.issuer() {
            return Err(Refused::Forged);
        }
        if claims.aud != self.config.resource() {
            return Err(Refused::Audience(claims.aud));
        }
        if claims.exp <= now() {
            return Err(Refused::Expired);
        }
        let grant = self.grant(&claims.gid).await?.ok_or(Refused::Revoked)?;
        let granted = Scopes::parse(&grant.scopes).map_err(|_| Refused::Revoked)?;
        // A refresh may have narrowed this token below its sign-in.
        let carried = Scopes::parse(&claims.scope).map_err(|_| Refused::Forged)?;
        let scopes = granted.intersect(carried);
        let mut forge = self.vault(&grant).ok_or(Refused::Revoked)?;
        if near_expiry(&forge) {
            forge = self.refresh_forge(&grant.id).await?;
        }
        let token = Token::granted(&forge.access, scopes).ok_or(Refused::Revoked)?;
        Ok(SignedIn {
            token,
            subject: grant.subject,
        })
    }

    async fn grant(&self, id: &str) -> Result<Option<Grant>, Refused> {
        let key = grant_key(id);
        let bytes = self
            .store
            .get(&key)
            .await
            .map_err(|e| Refused::Unavailable(e.to_string()))?;
        Ok(bytes.and_then(|b| serde_json::from_slice(&b).ok()))
    }

    /// The forge's tokens of `grant`, opened.
    fn vault(&self, grant: &Grant) -> Option<ForgeTokens> {
        let sealed = B64.decode(&grant.vault).ok()?;
        let plain = self.keys.open(&sealed, &grant_key(&grant.id))?;
        serde_json::from_slice(&plain).ok()
    }

    /// `tokens` sealed for the record of the grant `id`.
    fn seal(&self, id: &str, tokens: &ForgeTokens) -> String {
        let plain = serde_json::to_vec(tokens).expect("strings and numbers always serialize");
        B64.encode(self.keys.seal(&plain, &grant_key(id)))
    }

    async fn save_grant(&self, grant: &Grant) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(grant).expect("strings always serialize");
        self.store
            .put(&grant_key(&grant.id), bytes, REFRESH_LIFETIME)
            .await
    }

    /// Ends a sign-in: its access and refresh tokens stop working at once.
    async fn revoke_grant(&self, id: &str) -> Result<(), StoreError> {
        tracing::info!(grant = %short(id), "sign-in revoked");
        self.store.delete(&grant_key(id)).await
    }

    /// Refreshes the forge tokens of grant `id`, one refresh at a time; a refusal ends the
    /// sign-in.
    async fn refresh_forge(&self, id: &str) -> Result<ForgeTokens, Refused> {
        let lock = {
            let mut locks = self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
            locks.retain(|_, l| Arc::strong_count(l) > 1);
            locks.entry(id.to_owned()).or_default().clone()
        };
        let _held = lock.lock().await;
        // Another request may have refreshed while this one waited.
        let grant = self.grant(id).await?.ok_or(Refused::Revoked)?;
        let current = self.vault(&grant).ok_or(Refused::Revoked)?;
        if !near_expiry(&current) {
            return Ok(current);
        }
        let Some(refresh) = current.refresh.as_deref() else {
            return Err(Refused::Expired);
        };
        match self.forge.refresh_grant(&self.app, refresh).await {
            Ok(mut fresh) => {
                // A forge that sends no new refresh token keeps the old one good.
                if fresh.refresh.is_none() {
                    fresh.refresh = current.refresh.clone();
                }
                let grant = Grant {
                    vault: self.seal(id, &fresh),
                    ..grant
                };
                self.save_grant(&grant)
                    .await
                    .map_err(|e| Refused::Unavailable(e.to_string()))?;
                Ok(fresh)
            }
            Err(ForgeOAuthError::Refused(why)) => {
                let _ = self.revoke_grant(id).await;
                Err(Refused::Forge(why))
            }
            Err(ForgeOAuthError::Unavailable(why)) => {
                if current.expires_at.is_some_and(|at| at > now()) {
                    tracing::warn!("the forge token could not be refreshed yet: {why}");
                    Ok(current)
                } else {
                    Err(Refused::Unavailable(why))
                }
            }
        }
    }

    /// Ends the sign-in of a forge token the forge has just refused (`401`): the user revoked
    /// it on the forge, so the next request gets a fresh challenge.
    pub async fn forge_refused(&self, bearer: &str) {
        if let Some(claims) = tokens::read(&self.keys, bearer) {
            let _ = self.revoke_grant(&claims.gid).await;
        }
    }
}

fn near_expiry(tokens: &ForgeTokens) -> bool {
    tokens
        .expires_at
        .is_some_and(|at| at <= now() + FORGE_REFRESH_MARGIN.as_secs())
}

fn grant_key(id: &str) -> String {
    format!("grant:{id}")
}

/// The first characters of an id, for a log line.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// `text` fit for a quoted string of a header: no quotes, backslashes or control characters.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}
