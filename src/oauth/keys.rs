//! The server's secrets, derived from one key file: the key that signs forgelens's access
//! tokens, the key that seals forge tokens in the vault, and the randomness of every code and
//! token. Built on ring, which the TLS stack already brings.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hkdf, hmac};
use thiserror::Error;

/// The fewest bytes a key file may hold.
pub const MIN_KEY_BYTES: usize = 32;

/// Why the key file cannot be used.
#[derive(Debug, Error)]
pub enum KeyError {
    #[error("cannot read the OAuth key file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "the OAuth key file {path} holds {len} bytes; it needs at least {MIN_KEY_BYTES} random bytes (e.g. `head -c 32 /dev/urandom > {path}`)"
    )]
    Short { path: String, len: usize },
}

/// The keys of one server (every replica reads the same file).
pub struct Keys {
    sign: hmac::Key,
    seal: LessSafeKey,
    random: SystemRandom,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(***)")
    }
}

/// One key of `len` bytes for `info`, from the key file's bytes.
struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

impl Keys {
    /// The keys derived from the file at `path`.
    pub fn from_file(path: &Path) -> Result<Keys, KeyError> {
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| KeyError::Read {
            path: shown.clone(),
            source,
        })?;
        if bytes.len() < MIN_KEY_BYTES {
            return Err(KeyError::Short {
                path: shown,
                len: bytes.len(),
            });
        }
        Ok(Keys::from_bytes(&bytes))
    }

    /// The keys derived from `secret` (at least [`MIN_KEY_BYTES`] of it).
    pub fn from_bytes(secret: &[u8]) -> Keys {
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, b"forgelens oauth").extract(secret);
        let derive = |info: &'static [u8], out: &mut [u8]| {
            prk.expand(&[info], Len(out.len()))
                .and_then(|okm| okm.fill(out))
                .expect("32 bytes are well within what HKDF-SHA256 gives");
        };
        let mut sign = [0u8; 32];
        derive(b"access token signature", &mut sign);
        let mut seal = [0u8; 32];
        derive(b"vault seal", &mut seal);
        Keys {
            sign: hmac::Key::new(hmac::HMAC_SHA256, &sign),
            seal: LessSafeKey::new(
                UnboundKey::new(&CHACHA20_POLY1305, &seal)
                    .expect("a 32-byte key is ChaCha20-Poly1305's size"),
            ),
            random: SystemRandom::new(),
        }
    }

    /// The signature of `data`, in base64url.
    pub fn sign(&self, data: &[u8]) -> String {
        B64.encode(hmac::sign(&self.sign, data))
    }

    /// Whether `signature` (base64url) signs `data`; compared in constant time.
    pub fn verify(&self, data: &[u8], signature: &str) -> bool {
        B64.decode(signature)
            .is_ok_and(|tag| hmac::verify(&self.sign, data, &tag).is_ok())
    }

    /// `plain` sealed: a random nonce, then the ciphertext with its tag; `context` (the
    /// record's key) is bound in, so a sealed value cannot be moved to another record.
    pub fn seal(&self, plain: &[u8], context: &str) -> Vec<u8> {
        let mut nonce = [0u8; 12];
        self.fill(&mut nonce);
        let mut sealed = plain.to_vec();
        self.seal
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut sealed,
            )
            .expect("a value of a few kilobytes is far below ChaCha20-Poly1305's limit");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        out
    }

    /// What [`Keys::seal`] sealed with the same `context`; `None` when it was changed, sealed
    /// with another key or for another record.
    pub fn open(&self, sealed: &[u8], context: &str) -> Option<Vec<u8>> {
        let (nonce, body) = sealed.split_at_checked(12)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .seal
            .open_in_place(nonce, Aad::from(context.as_bytes()), &mut body)
            .ok()?;
        Some(plain.to_vec())
    }

    /// A new secret of 32 random bytes, in base64url: codes, refresh tokens, states, ids.
    pub fn secret(&self) -> String {
        let mut bytes = [0u8; 32];
        self.fill(&mut bytes);
        B64.encode(bytes)
    }

    fn fill(&self, out: &mut [u8]) {
        self.random
            .fill(out)
            .expect("the operating system's random source does not fail once opened");
    }
}

/// The PKCE S256 challenge of `verifier`: base64url of its SHA-256.
pub fn s256(verifier: &str) -> String {
    B64.encode(digest::digest(&digest::SHA256, verifier.as_bytes()))
}

/// The name a secret is kept under in the store: its SHA-256, so that a copy of the store holds
/// no usable code or refresh token.
pub fn lookup(secret: &str) -> String {
    B64.encode(digest::digest(&digest::SHA256, secret.as_bytes()))
}

/// Whether two strings are equal, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |diff, (x, y)| diff | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_record() {
        let keys = Keys::from_bytes(&[7u8; 32]);
        let sealed = keys.seal(b"forge-token", "grant:1");
        assert_eq!(
            keys.open(&sealed, "grant:1").as_deref(),
            Some(&b"forge-token"[..])
        );
        assert_eq!(
            keys.open(&sealed, "grant:2"),
            None,
            "moved to another record"
        );
        assert_eq!(Keys::from_bytes(&[8u8; 32]).open(&sealed, "grant:1"), None);
        let mut changed = sealed.clone();
        *changed.last_mut().unwrap() ^= 1;
        assert_eq!(keys.open(&changed, "grant:1"), None);
        assert!(!String::from_utf8_lossy(&sealed).contains("forge-token"));
    }

    #[test]
    fn signatures_and_challenges() {
        let keys = Keys::from_bytes(&[1u8; 40]);
        let signature = keys.sign(b"claims");
        assert!(keys.verify(b"claims", &signature));
        assert!(!keys.verify(b"claimz", &signature));
        assert!(!Keys::from_bytes(&[2u8; 40]).verify(b"claims", &signature));
        // RFC 7636's example.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_ne!(keys.secret(), keys.secret());
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }

    #[test]
    fn a_short_key_file_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, b"short").unwrap();
        let error = Keys::from_file(&path).unwrap_err().to_string();
        assert!(error.contains("at least 32 random bytes"), "{error}");
    }
}
