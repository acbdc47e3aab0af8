//! Where what outlives a request is kept. The authorization server's state (registered
//! clients, pending sign-ins, codes, sign-ins with their sealed forge tokens, refresh tokens
//! and the ones already spent) goes through one interface, [`Store`]: values with a lifetime
//! under string keys, and an atomic take for what may be used once. [`FileStore`] is the
//! embedded backend, one file that a restart reads back; [`redis::RedisStore`] is the one
//! replicas share, behind the same calls, and it also carries the shared read cache and the
//! forge's request budget.
//!
//! Values reach the store already sealed where they hold secrets (see
//! [`crate::oauth::keys`]); keys of codes and tokens are their hashes, never the secrets.

pub mod redis;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why the store could not answer.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("the OAuth store {path} cannot be written: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("the OAuth store {path} cannot be read: {detail}")]
    Read { path: String, detail: String },
    #[error(
        "the shared store {url} did not answer ({detail}); sign-ins wait until it does — check that it runs and that this host reaches it"
    )]
    Shared { url: String, detail: String },
}

impl StoreError {
    /// Logs a failed call where a request met it. A shared store's outage is logged by the
    /// store itself, once as it begins and once as it ends, so here it is only a debug line:
    /// an outage under load must not write a line per request.
    pub fn report(&self) {
        match self {
            StoreError::Shared { .. } => tracing::debug!("the store failed: {self}"),
            _ => tracing::error!("the store failed: {self}"),
        }
    }
}

/// What a store call gives back, later.
pub type Stored<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// The store interface.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Keeps `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> Stored<'a, ()>;
    /// The value under `key`, unless it expired.
    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>>;
    /// The value under `key`, removed in the same step: of two callers, one gets it.
    fn take<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>>;
    /// Forgets `key`.
    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()>;
    /// Whether the store answers now: for `/readyz`.
    fn check(&self) -> Stored<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// One value and when it expires (seconds since the epoch).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    #[serde(rename = "v")]
    value: String,
    #[serde(rename = "e")]
    expires: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    version: u32,
    entries: HashMap<String, Entry>,
}

/// The embedded store: everything in memory, written whole to one file (owner-only) after
/// each change, so a restart keeps every sign-in. Meant for one process and the sign-ins of a
/// team: a change costs a write of the file.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    entries: Mutex<HashMap<String, Entry>>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl FileStore {
    /// The store kept at `path`, read back when the file exists (expired entries dropped).
    pub fn open(path: &Path) -> Result<FileStore, StoreError> {
        let shown = || path.display().to_string();
        let entries = match std::fs::read(path) {
            Ok(bytes) => {
                let saved: Saved =
                    serde_json::from_slice(&bytes).map_err(|e| StoreError::Read {
                        path: shown(),
                        detail: format!("{e}; it is not a store forgelens wrote"),
                    })?;
                let now = now();
                saved
                    .entries
                    .into_iter()
                    .filter(|(_, e)| e.expires > now)
                    .collect()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
            Err(e) => {
                return Err(StoreError::Read {
                    path: shown(),
                    detail: e.to_string(),
                });
            }
        };
        let store = FileStore {
            path: path.to_owned(),
            entries: Mutex::new(entries),
        };
        // Written at once: a store that cannot be written fails the start, not a sign-in.
        store.save(&store.lock())?;
        Ok(store)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes every live entry to a temporary file beside the store, then renames it over.
    fn save(&self, entries: &HashMap<String, Entry>) -> Result<(), StoreError> {
        let now = now();
        let saved = Saved {
            version: 1,
            entries: entries
                .iter()
                .filter(|(_, e)| e.expires > now)
                .map(|(k, e)| (k.clone(), e.clone()))
                .collect(),
        };
        let text = serde_json::to_vec(&saved).expect("strings and numbers always serialize");
        let failed = |source| StoreError::Write {
            path: self.path.display().to_string(),
            source,
        };
        let temporary = self.path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary).map_err(failed)?;
        file.write_all(&text).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        std::fs::rename(&temporary, &self.path).map_err(failed)
    }

    fn change<T>(
        &self,
        change: impl FnOnce(&mut HashMap<String, Entry>) -> T,
    ) -> Result<T, StoreError> {
        let mut entries = self.lock();
        let out = change(&mut entries);
        self.save(&entries)?;
        Ok(out)
    }
}

fn live(entry: Entry) -> Option<Vec<u8>> {
    if entry.expires <= now() {
        return None;
    }
    B64.decode(entry.value).ok()
}

impl Store for FileStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> Stored<'a, ()> {
        let entry = Entry {
            value: B64.encode(value),
            expires: now() + ttl.as_secs().max(1),
        };
        let done = self.change(|entries| {
            entries.insert(key.to_owned(), entry);
        });
        Box::pin(std::future::ready(done))
    }

    fn get<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        let found = self.lock().get(key).cloned().and_then(live);
        Box::pin(std::future::ready(Ok(found)))
    }

    fn take<'a>(&'a self, key: &'a str) -> Stored<'a, Option<Vec<u8>>> {
        let mut entries = self.lock();
        let done = match entries.remove(key) {
            None => Ok(None),
            Some(entry) => self.save(&entries).map(|()| live(entry)),
        };
        Box::pin(std::future::ready(done))
    }

    fn delete<'a>(&'a self, key: &'a str) -> Stored<'a, ()> {
        let mut entries = self.lock();
        let done = match entries.remove(key) {
            None => Ok(()),
            Some(_) => self.save(&entries),
        };
        Box::pin(std::future::ready(done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn values_survive_a_reopen_and_are_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.json");
        let store = FileStore::open(&path).unwrap();
        let hour = Duration::from_secs(3600);
        store.put("grant:1", b"one".to_vec(), hour).await.unwrap();
        store.put("code:x", b"code".to_vec(), hour).await.unwrap();
        drop(store);
        let store = FileStore::open(&path).unwrap();
        assert_eq!(
            store.get("grant:1").await.unwrap().as_deref(),
            Some(&b"one"[..])
        );
        assert_eq!(
            store.take("code:x").await.unwrap().as_deref(),
            Some(&b"code"[..])
        );
        assert_eq!(store.take("code:x").await.unwrap(), None, "taken once");
        store.delete("grant:1").await.unwrap();
        assert_eq!(store.get("grant:1").await.unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "readable by its owner only");
        }
    }

    #[tokio::test]
    async fn an_expired_value_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::open(&dir.path().join("s")).unwrap();
        store.lock().insert(
            "old".into(),
            Entry {
                value: B64.encode("v"),
                expires: now() - 1,
            },
        );
        assert_eq!(store.get("old").await.unwrap(), None);
        assert_eq!(store.take("old").await.unwrap(), None);
    }

    #[test]
    fn a_file_that_is_no_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        std::fs::write(&path, "not json").unwrap();
        let error = FileStore::open(&path).unwrap_err().to_string();
        assert!(error.contains("not a store forgelens wrote"), "{error}");
    }
}
