//! What checking a signed-in request costs: the work `/mcp` does for every request under
//! `--oauth` before the handler runs — the access token's signature, claims, expiry and
//! audience, the sign-in looked up in the embedded store and its forge token unsealed.
//!
//! Run: `cargo bench --bench oauth`. The target (issue 28) is at most 20 µs per request; the
//! figure is in docs/performance.md.
//!
//! | bench | what it times |
//! |---|---|
//! | `verify/signed_in` | `Authority::verify` of a live access token, end to end |
//! | `verify/token_only` | the signature and claims alone |
//! | `verify/forged` | a token whose signature is wrong: refused |
//!
//! The sign-in is written into the store as the server's callback writes it (a grant record
//! whose forge tokens are sealed for that record), so no forge is needed.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use criterion::{Criterion, criterion_group, criterion_main};
use forgelens::config::{OAuthConfig, StoreConfig, default_scopes};
use forgelens::forge::oauth::ForgeTokens;
use forgelens::forge::{Client, ClientOptions};
use forgelens::oauth::Authority;
use forgelens::oauth::keys::Keys;
use forgelens::oauth::tokens::{self, Claims};
use forgelens::store::{FileStore, Store};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = OAuthConfig {
        public_url: "https://mcp.example.com".into(),
        forge_client_id: "app".into(),
        forge_client_secret: "secret".into(),
        offered: default_scopes(),
        key_file: dir.path().join("key"),
        store: StoreConfig::File(dir.path().join("store.json")),
        loopback_clients: false,
    };
    let store = Arc::new(FileStore::open(&dir.path().join("store.json")).expect("a store"));
    let keys = Keys::from_bytes(KEY);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let forge_tokens = ForgeTokens {
        access: "forge-access-token".into(),
        refresh: Some("forge-refresh-token".into()),
        expires_at: Some(now + 3600),
    };
    let sealed = keys.seal(
        &serde_json::to_vec(&forge_tokens).expect("serializes"),
        "grant:g1",
    );
    let grant = serde_json::json!({
        "id": "g1", "client_id": "c1", "subject": "alice",
        "scopes": "read:issue read:repository",
        "vault": base64::engine::general_purpose::STANDARD.encode(sealed),
    });
    runtime
        .block_on(store.put(
            "grant:g1",
            grant.to_string().into_bytes(),
            std::time::Duration::from_secs(3600),
        ))
        .expect("the grant is stored");
    let token = tokens::mint(
        &keys,
        &Claims {
            iss: config.issuer(),
            aud: config.resource(),
            sub: "alice".into(),
            gid: "g1".into(),
            cid: "c1".into(),
            scope: "read:issue read:repository".into(),
            iat: now,
            exp: now + 900,
        },
    );
    let forge = Client::new(ClientOptions::new(
        "http://127.0.0.1:9".parse().expect("a URL"),
    ))
    .expect("a client");
    let authority =
        Authority::with_store(&config, forge, Keys::from_bytes(KEY), store).expect("an authority");
    runtime
        .block_on(authority.verify(Some(&token)))
        .expect("the token verifies");
    let mut group = c.benchmark_group("verify");
    group.bench_function("signed_in", |b| {
        b.iter(|| runtime.block_on(authority.verify(Some(black_box(&token)))))
    });
    group.bench_function("token_only", |b| {
        b.iter(|| tokens::read(&keys, black_box(&token)))
    });
    let forged = format!("{}x", &token[..token.len() - 1]);
    group.bench_function("forged", |b| {
        b.iter(|| runtime.block_on(authority.verify(Some(black_box(&forged)))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
