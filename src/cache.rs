//! The read cache: answers that may be reused, kept so that a second read of them costs the
//! forge nothing.
//!
//! What is kept, and for how long, comes from the answer itself ([`ReadOutput::ttl_ms`]): an
//! immutable resource (a commit by full sha) for its whole `ttlMs`, a provisional one (a status
//! still pending) for its short one. Mutable answers are kept only when the operator asked for
//! it (`--cache-ttl-ms`), for that long.
//!
//! Entries are keyed by the token that read them as well as the URI, so two users never see each
//! other's answers, and the cache is bounded both in entries and in bytes, dropping the least
//! recently used first.
//!
//! With a shared store (`--store redis://…`) the cache has a second tier that every replica
//! reads: an answer one replica read is a hit on the others. Its keys are keyed hashes of the
//! token, its scopes and the URI ([`RedisStore::name`]), never the token; its values are
//! bounded ([`MAX_SHARED_BYTES`]) and live exactly as long as they would here. While the
//! store does not answer, the tier is skipped and this process's cache serves alone.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lru::LruCache;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Block, ReadOutput};
use crate::forge::Token;
use crate::store::Store as _;
use crate::store::redis::RedisStore;

/// Most answers kept.
pub const MAX_ENTRIES: usize = 1024;
/// Most bytes of answer text kept (4 MiB).
pub const MAX_BYTES: usize = 4 * 1024 * 1024;
/// Largest answer put in the shared store (512 KiB): a larger one is kept here only.
pub const MAX_SHARED_BYTES: usize = 512 * 1024;
/// The media types an answer's blocks have, so one read back from the store is whole.
const MIMES: [&str; 3] = ["application/json", "text/markdown", "text/plain"];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    token: Option<Token>,
    uri: String,
}

#[derive(Debug)]
struct Entry {
    output: ReadOutput,
    expires: Instant,
    bytes: usize,
}

#[derive(Debug)]
struct Inner {
    entries: LruCache<Key, Entry>,
    bytes: usize,
}

/// A bounded, token-scoped cache of read answers.
#[derive(Debug)]
pub struct ReadCache {
    inner: Mutex<Inner>,
    /// How long a mutable answer is kept; `None`: not at all.
    mutable_ttl: Option<Duration>,
    max_bytes: usize,
    /// The tier replicas share.
    shared: Option<Arc<RedisStore>>,
}

/// An answer as the shared store keeps it.
#[derive(Serialize, Deserialize)]
struct Shared {
    blocks: Vec<(String, String)>,
    meta: Option<Value>,
    ttl_ms: Option<u64>,
    /// When it stops being fresh, in milliseconds since the epoch.
    expires: u64,
}

fn epoch_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

impl ReadCache {
    pub fn new(mutable_ttl: Option<Duration>) -> ReadCache {
        ReadCache::with_bounds(mutable_ttl, MAX_ENTRIES, MAX_BYTES)
    }

    fn with_bounds(mutable_ttl: Option<Duration>, entries: usize, max_bytes: usize) -> ReadCache {
        let entries = NonZeroUsize::new(entries).expect("the cache holds at least one entry");
        ReadCache {
            inner: Mutex::new(Inner {
                entries: LruCache::new(entries),
                bytes: 0,
            }),
            mutable_ttl,
            max_bytes,
            shared: None,
        }
    }

    /// Shares the cache with every replica of `store`.
    pub fn share(&mut self, store: Arc<RedisStore>) {
        self.shared = Some(store);
    }

    /// The answer kept for `uri` read with `token`: here, else in the shared store (and then
    /// here too, for the rest of its life).
    pub async fn lookup(&self, token: Option<&Token>, uri: &str) -> Option<ReadOutput> {
        let now = Instant::now();
        if let Some(kept) = self.get(token, uri, now) {
            return Some(kept);
        }
        let store = self.shared.as_ref()?;
        let key = shared_key(store, token, uri).await?;
        let bytes = store.get(&key).await.ok()??;
        let shared: Shared = serde_json::from_slice(&bytes).ok()?;
        let left = shared
            .expires
            .checked_sub(epoch_millis())
            .filter(|ms| *ms > 0)?;
        let blocks = shared
            .blocks
            .into_iter()
            .map(|(mime, text)| {
                let mime = MIMES.into_iter().find(|m| *m == mime)?;
                Some(Block { mime, text })
            })
            .collect::<Option<Vec<_>>>()?;
        let output = ReadOutput {
            blocks,
            meta: shared.meta,
            ttl_ms: shared.ttl_ms.map(|_| left),
        };
        self.keep_here(token, uri, &output, now, Duration::from_millis(left));
        Some(output)
    }

    /// Keeps `output` when its kind of answer may be reused: here, and in the shared store.
    pub async fn keep(&self, token: Option<&Token>, uri: &str, output: &ReadOutput) {
        let Some(life) = self.life(output) else {
            return;
        };
        self.keep_here(token, uri, output, Instant::now(), life);
        let Some(store) = &self.shared else { return };
        if answer_bytes(uri, output) > MAX_SHARED_BYTES {
            return;
        }
        let Some(key) = shared_key(store, token, uri).await else {
            return;
        };
        let shared = Shared {
            blocks: output
                .blocks
                .iter()
                .map(|b| (b.mime.to_owned(), b.text.clone()))
                .collect(),
            meta: output.meta.clone(),
            ttl_ms: output.ttl_ms,
            expires: epoch_millis() + millis(life),
        };
        let value = serde_json::to_vec(&shared).expect("text and JSON always serialize");
        // A failure is the store's to log; the answer is kept here all the same.
        let _ = store.put(&key, value, life).await;
    }

    /// How long `output` may be kept, if at all.
    fn life(&self, output: &ReadOutput) -> Option<Duration> {
        match output.ttl_ms {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => self.mutable_ttl,
        }
    }

    /// The answer kept for `uri` read with `token`, if it is still fresh at `now`. Its `ttlMs`
    /// is what remains of its life, so a client that caches it too never keeps it longer.
    fn get(&self, token: Option<&Token>, uri: &str, now: Instant) -> Option<ReadOutput> {
        let key = Key {
            token: token.cloned(),
            uri: uri.to_owned(),
        };
        let mut inner = self.lock();
        let fresh = inner.entries.get(&key).map(|e| e.expires > now)?;
        if !fresh {
            if let Some(stale) = inner.entries.pop(&key) {
                inner.bytes -= stale.bytes;
            }
            return None;
        }
        let entry = inner.entries.get(&key)?;
        let mut output = entry.output.clone();
        if output.ttl_ms.is_some() {
            output.ttl_ms = Some(millis(entry.expires - now));
        }
        Some(output)
    }

    /// Keeps `output` here when its kind of answer may be reused, as of `now`.
    #[cfg(test)]
    fn put(&self, token: Option<&Token>, uri: &str, output: &ReadOutput, now: Instant) {
        if let Some(life) = self.life(output) {
            self.keep_here(token, uri, output, now, life);
        }
    }

    fn keep_here(
        &self,
        token: Option<&Token>,
        uri: &str,
        output: &ReadOutput,
        now: Instant,
        life: Duration,
    ) {
        let bytes = answer_bytes(uri, output);
        if bytes > self.max_bytes {
            return;
        }
        let key = Key {
            token: token.cloned(),
            uri: uri.to_owned(),
        };
        let entry = Entry {
            output: output.clone(),
            expires: now + life,
            bytes,
        };
        let mut inner = self.lock();
        inner.bytes += bytes;
        if let Some((_, replaced)) = inner.entries.push(key, entry) {
            inner.bytes -= replaced.bytes;
        }
        while inner.bytes > self.max_bytes {
            match inner.entries.pop_lru() {
                Some((_, evicted)) => inner.bytes -= evicted.bytes,
                None => break,
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves a consistent map (every step above is one
        // call), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn answer_bytes(uri: &str, output: &ReadOutput) -> usize {
    uri.len() + output.blocks.iter().map(|b| b.text.len()).sum::<usize>()
}

/// The shared store's key of `uri` read with `token`: the token and the scopes it is held
/// to, hashed under the store's secret with the URI. `None` while the store does not answer.
async fn shared_key(store: &RedisStore, token: Option<&Token>, uri: &str) -> Option<String> {
    let secret = token.map_or("", |t| t.secret());
    let scopes = token
        .and_then(Token::scopes)
        .map(|s| s.to_string())
        .unwrap_or_default();
    let name = store
        .name(&[
            b"cache",
            secret.as_bytes(),
            scopes.as_bytes(),
            uri.as_bytes(),
        ])
        .await
        .ok()?;
    Some(format!("cache:{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Block;

    fn answer(text: &str, ttl_ms: Option<u64>) -> ReadOutput {
        ReadOutput {
            meta: None,
            blocks: vec![Block {
                mime: "application/json",
                text: text.to_owned(),
            }],
            ttl_ms,
        }
    }

    #[test]
    fn immutable_answers_are_kept_for_their_ttl_which_counts_down() {
        let cache = ReadCache::new(None);
        let t0 = Instant::now();
        cache.put(None, "u", &answer("a", Some(10_000)), t0);
        let hit = cache.get(None, "u", t0 + Duration::from_secs(4)).unwrap();
        assert_eq!(
            (hit.blocks[0].text.as_str(), hit.ttl_ms),
            ("a", Some(6_000))
        );
        assert_eq!(cache.get(None, "u", t0 + Duration::from_secs(10)), None);
        // The stale entry is gone, not merely hidden.
        assert_eq!(cache.lock().bytes, 0);
    }

    #[test]
    fn mutable_answers_are_kept_only_when_asked() {
        let t0 = Instant::now();
        let off = ReadCache::new(None);
        off.put(None, "u", &answer("a", None), t0);
        assert_eq!(off.get(None, "u", t0), None);

        let on = ReadCache::new(Some(Duration::from_millis(500)));
        on.put(None, "u", &answer("a", None), t0);
        let hit = on.get(None, "u", t0 + Duration::from_millis(499)).unwrap();
        assert_eq!(hit.ttl_ms, None, "a mutable answer never claims a ttl");
        assert_eq!(on.get(None, "u", t0 + Duration::from_millis(500)), None);
    }

    #[test]
    fn tokens_do_not_share_entries() {
        let cache = ReadCache::new(None);
        let t0 = Instant::now();
        let alice = Token::new("alice-token").unwrap();
        let bob = Token::new("bob-token").unwrap();
        cache.put(Some(&alice), "u", &answer("alice's", Some(1_000)), t0);
        assert!(cache.get(Some(&alice), "u", t0).is_some());
        assert_eq!(cache.get(Some(&bob), "u", t0), None);
        assert_eq!(cache.get(None, "u", t0), None);
    }

    #[test]
    fn the_least_recently_used_go_first_when_bytes_run_out() {
        // Room for two answers of 1 + 9 bytes.
        let cache = ReadCache::with_bounds(None, 16, 20);
        let t0 = Instant::now();
        cache.put(None, "a", &answer("012345678", Some(1_000)), t0);
        cache.put(None, "b", &answer("012345678", Some(1_000)), t0);
        assert!(
            cache.get(None, "a", t0).is_some(),
            "a is now the most recent"
        );
        cache.put(None, "c", &answer("012345678", Some(1_000)), t0);
        assert!(cache.get(None, "a", t0).is_some());
        assert_eq!(cache.get(None, "b", t0), None);
        assert!(cache.get(None, "c", t0).is_some());
        assert_eq!(cache.lock().bytes, 20);
        // An answer larger than the whole cache is not kept and evicts nothing.
        cache.put(None, "d", &answer(&"x".repeat(40), Some(1_000)), t0);
        assert_eq!(cache.get(None, "d", t0), None);
        assert!(cache.get(None, "a", t0).is_some());
    }

    #[test]
    fn the_entry_count_is_bounded_too() {
        let cache = ReadCache::with_bounds(None, 2, 1 << 20);
        let t0 = Instant::now();
        for uri in ["a", "b", "c"] {
            cache.put(None, uri, &answer("x", Some(1_000)), t0);
        }
        assert_eq!(cache.get(None, "a", t0), None);
        assert_eq!(
            cache.lock().bytes,
            4,
            "the evicted entry's bytes are released"
        );
    }
}
