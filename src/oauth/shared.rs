//! The store replicas share: a Redis or Valkey server behind the same [`Store`] interface as
//! the embedded file. Every key is prefixed, so the database may hold other things; lifetimes
//! are the server's own expiries (`SET … PX`), and a take is `GETDEL`, atomic across replicas.
//!
//! Each call is held to the configured timeout: past it, or while the server cannot be
//! reached, the call fails with [`StoreError::Shared`] and the request that needed it is
//! refused (`503`) — a sign-in never falls back to anything weaker. The connection is made on
//! first use and remade after a failure by the client library, so the server coming back needs
//! no restart of forgelens.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands as _, IntoConnectionInfo as _};

use super::store::{Store, StoreError, Stored};

/// What every key of forgelens begins with.
const PREFIX: &str = "forgelens:";

/// A Redis or Valkey server holding the authorization server's state.
pub struct RedisStore {
    /// The URL, without credentials: for messages.
    url: String,
    connection: ConnectionManager,
    timeout: Duration,
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
    pub fn new(url: &str, password: Option<&str>, timeout: Duration) -> Result<Self, StoreError> {
        let failed = |e: redis::RedisError| StoreError::Shared {
            url: url.to_owned(),
            detail: e.to_string(),
        };
        let mut info = url.into_connection_info().map_err(failed)?;
        if let Some(password) = password {
            let settings = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(settings);
        }
        let client = redis::Client::open(info).map_err(failed)?;
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
        })
    }

    /// Runs one command within the timeout, mapping both kinds of failure to one error.
    async fn run<T>(
        &self,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(StoreError::Shared {
                url: self.url.clone(),
                detail: e.to_string(),
            }),
            Err(_) => Err(StoreError::Shared {
                url: self.url.clone(),
                detail: format!("no answer within {} ms", self.timeout.as_millis()),
            }),
        }
    }
}

fn prefixed(key: &str) -> String {
    format!("{PREFIX}{key}")
}

impl Store for RedisStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> Stored<'a, ()> {
        let mut connection = self.connection.clone();
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
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
