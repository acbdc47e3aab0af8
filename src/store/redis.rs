//! The store replicas share: a Redis or Valkey server. It holds three things for every
//! replica at once: the authorization server's state, behind the same [`Store`] interface as
//! the embedded file; the read cache's shared tier ([`crate::cache`]); and the forge's request
//! budget per token ([`crate::forge::budget`]), counted by a script so that replicas never
//! race. Every key is prefixed, so the database may hold other things; lifetimes are the
//! server's own expiries (`SET … PX`), and a take is `GETDEL`, atomic across replicas.
//!
//! Tokens never reach the server: keys of the cache and the budget are keyed hashes
//! ([`RedisStore::name`]) under a random secret the first replica puts in the store.
//!
//! Each call is held to the configured timeout. Past it, or while the server cannot be
//! reached, the call fails with [`StoreError::Shared`]: a sign-in is refused (`503`), never
//! weakened; a personal-token request goes on without the shared tier. After a failure the
//! store is left alone for [`PAUSE`], so an outage costs a request at most one timeout, and
//! the change is logged once each way, not per request. The connection is remade by the
//! client library, so the server coming back needs no restart of forgelens.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands as _, IntoConnectionInfo as _};
use ring::hmac;
use ring::rand::{SecureRandom as _, SystemRandom};
use tokio::sync::OnceCell;

use super::{Store, StoreError, Stored};
use crate::config::SharedStore;
use crate::forge::budget::Admission;

/// What every key of forgelens begins with.
const PREFIX: &str = "forgelens:";
/// How long the store is left alone after a call failed.
pub const PAUSE: Duration = Duration::from_secs(1);

/// Admits one forge request for a token (`{'go', 0}`), or says why not and how long until one
/// may go in milliseconds (`{'held', ms}` after a `429`, `{'spent', ms}` when the window is
/// full). Keys: the token's window, then its hold. Arguments:
/// the period in milliseconds, the most requests in one period (`0`: no budget, only holds),
/// and a name for this request. The server's own clock decides, so replicas' clocks need not
/// agree.
const ADMIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('PTTL', KEYS[2])
if held > 0 then return {'held', held} end
local limit = tonumber(ARGV[2])
if limit == 0 then return {'go', 0} end
local period = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], period)
  return {'go', 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {'spent', math.max(1, tonumber(oldest[2]) + period - now)}
";

/// A Redis or Valkey server that replicas share.
pub struct RedisStore {
    /// The URL, without credentials: for messages.
    url: String,
    connection: ConnectionManager,
    timeout: Duration,
    /// The key of [`RedisStore::name`], read from the store on first use.
    secret: OnceCell<hmac::Key>,
    /// Until when calls fail without being tried, after a failure.
    paused: Mutex<Option<Instant>>,
    admit: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// The store at `url` (no connection yet: a server that is down at start-up is reported
    /// by `/readyz` and by the requests that need it, and picked up when it comes).
    pub fn new(settings: &SharedStore) -> Result<Self, StoreError> {
        let (url, timeout) = (settings.url.as_str(), settings.timeout);
        let failed = |e: redis::RedisError| StoreError::Shared {
            url: url.to_owned(),
            detail: e.to_string(),
        };
        let mut info = url.into_connection_info().map_err(failed)?;
        if let Some(password) = &settings.password {
            let settings = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(settings);
        }
        // The TLS of a rediss:// store uses the process's provider, as the forge client does.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = match &settings.ca {
            Some(ca) => redis::Client::build_with_tls(
                info,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(ca.clone()),
                },
            ),
            None => redis::Client::open(info),
        }
        .map_err(failed)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            // One quick retry inside a call; the next call tries again by itself.
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(timeout);
        let connection = ConnectionManager::new_lazy_with_config(client, config).map_err(failed)?;
        Ok(RedisStore {
            url: url.to_owned(),
            connection,
            timeout,
            secret: OnceCell::new(),
            paused: Mutex::new(None),
            admit: redis::Script::new(ADMIT),
        })
    }

    /// Runs one command within the timeout, mapping both kinds of failure to one error; while
    /// paused after a failure, fails at once.
    async fn run<T>(
        &self,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        let paused = *self.paused.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(until) = paused.filter(|until| Instant::now() < *until) {
            return Err(self.failed(format!(
                "it failed less than {} ms ago; tried again in {} ms",
                PAUSE.as_millis(),
                (until - Instant::now()).as_millis()
            )));
        }
        let result = match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        };
        let mut paused = self.paused.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(value) => {
                if paused.take().is_some() {
                    tracing::info!(store = %self.url, "the shared store answers again");
                }
                Ok(value)
            }
            Err(detail) => {
                if paused.is_none() {
                    tracing::warn!(
                        store = %self.url,
                        %detail,
                        "the shared store does not answer: sign-ins are refused, and personal-token \
                         requests go on without the shared cache and rate budget until it does"
                    );
                }
                *paused = Some(Instant::now() + PAUSE);
                Err(self.failed(detail))
            }
        }
    }

    fn failed(&self, detail: String) -> StoreError {
        StoreError::Shared {
            url: self.url.clone(),
            detail,
        }
    }

    /// A name for `parts` (a token and what else identifies its use) that only the replicas
    /// of this store can compute: HMAC-SHA256 under the store's secret. The first replica to
    /// ask puts a random secret in the store; the others read it.
    pub async fn name(&self, parts: &[&[u8]]) -> Result<String, StoreError> {
        let key = self
            .secret
            .get_or_try_init(|| async {
                let mut fresh = [0u8; 32];
                SystemRandom::new()
                    .fill(&mut fresh)
                    .map_err(|_| self.failed("the system has no randomness to give".into()))?;
                let key = prefixed("secret");
                let mut connection = self.connection.clone();
                // Kept without expiry: a replica reads it once, so a new one would split them.
                let options =
                    redis::SetOptions::default().conditional_set(redis::ExistenceCheck::NX);
                self.run(connection.set_options::<_, _, ()>(&key, fresh.to_vec(), options))
                    .await?;
                let secret: Option<Vec<u8>> = self.run(connection.get(&key)).await?;
                let secret = secret.ok_or_else(|| self.failed("its secret vanished".into()))?;
                Ok::<_, StoreError>(hmac::Key::new(hmac::HMAC_SHA256, &secret))
            })
            .await?;
        let mut context = hmac::Context::with_key(key);
        for part in parts {
            context.update(&(part.len() as u64).to_be_bytes());
            context.update(part);
        }
        Ok(B64.encode(context.sign().as_ref()))
    }

    /// Admits one forge request for the budget named `who`, or says why not and for how long.
    /// `limit` requests per `period`; `None`, only holds count.
    pub async fn admit(
        &self,
        who: &str,
        limit: Option<(u32, Duration)>,
    ) -> Result<Admission, StoreError> {
        let (count, period) = limit.unwrap_or((0, Duration::ZERO));
        let mut request = [0u8; 12];
        // A name for the request in the window; clashing names would only undercount.
        let _ = SystemRandom::new().fill(&mut request);
        let mut connection = self.connection.clone();
        let mut invocation = self.admit.prepare_invoke();
        invocation
            .key(prefixed(&format!("budget:{who}")))
            .key(prefixed(&format!("hold:{who}")))
            .arg(millis(period))
            .arg(count)
            .arg(B64.encode(request));
        let (verdict, wait): (String, u64) =
            self.run(invocation.invoke_async(&mut connection)).await?;
        let wait = Duration::from_millis(wait);
        Ok(match verdict.as_str() {
            "held" => Admission::Held(wait),
            "spent" => Admission::Spent(wait),
            _ => Admission::Go,
        })
    }

    /// Holds every request of `who` back for `wait`: the forge answered `429` with it.
    pub async fn hold(&self, who: &str, wait: Duration) -> Result<(), StoreError> {
        let mut connection = self.connection.clone();
        let options =
            redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(millis(wait).max(1)));
        self.run(connection.set_options::<_, _, ()>(prefixed(&format!("hold:{who}")), 1, options))
            .await
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn prefixed(key: &str) -> String {
    format!("{PREFIX}{key}")
}

impl Store for RedisStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> Stored<'a, ()> {
        let mut connection = self.connection.clone();
        let millis = millis(ttl).max(1);
        Box::pin(async move {
            let options =
                redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(millis));
            self.run(connection.set_options::<_, _, ()>(prefixed(key), value, options))
                .await
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        let mut connection = self.connection.clone();
        Box::pin(async move { self.run(connection.get(prefixed(key))).await })
    }

    fn take<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        let mut connection = self.connection.clone();
        Box::pin(async move { self.run(connection.get_del(prefixed(key))).await })
    }

    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()> {
        let mut connection = self.connection.clone();
        Box::pin(async move { self.run(connection.del::<_, ()>(prefixed(key))).await })
    }

    fn check(&self) -> Stored<'_, ()> {
        let mut connection = self.connection.clone();
        Box::pin(async move {
            self.run(redis::cmd("PING").query_async::<()>(&mut connection))
                .await
        })
    }
}
