//! `serve --catalog-from-instance`: the instance's own `/swagger.v1.json`, fetched at start-up
//! and kept on disk, so a start within a day of the last one needs no network for it.
//!
//! The copy lives in the cache directory under a name made from the instance URL. A copy
//! younger than [`MAX_AGE`] is used as it is; an older one is refetched, and kept as the answer
//! when the instance cannot serve a new one (with a warning). Only a document that parses as
//! a spec is written to the cache.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use thiserror::Error;

use super::Spec;
use crate::forge::{self, ForgeError, Token};

/// How long a cached spec is used without asking the instance again.
pub const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, Error)]
pub enum InstanceError {
    #[error("cannot fetch the instance's API description {url}: {source}")]
    Fetch {
        url: String,
        #[source]
        source: ForgeError,
    },
    #[error("the instance's API description {url} is not a usable spec: {detail}")]
    Unusable { url: String, detail: String },
}

/// Where the spec of `instance` is cached in `dir`.
pub fn cache_path(dir: &Path, instance: &reqwest::Url) -> PathBuf {
    let key: String = instance
        .as_str()
        .trim_end_matches('/')
        .split("://")
        .last()
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{key}.swagger.v1.json"))
}

/// The instance's spec: from the cache when fresh, else from the instance (and then cached).
pub async fn spec_text(
    client: &forge::Client,
    token: Option<&Token>,
    cache_dir: &Path,
) -> Result<String, InstanceError> {
    let path = cache_path(cache_dir, client.instance());
    let cached = std::fs::read_to_string(&path).ok();
    let age = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    if let (Some(text), Some(age)) = (&cached, age)
        && age < MAX_AGE
    {
        tracing::debug!(path = %path.display(), "using the cached API description");
        return Ok(text.clone());
    }
    let url = client.swagger_url();
    let fetched = client
        .get_document(&url, token)
        .await
        .map_err(|source| InstanceError::Fetch {
            url: url.to_string(),
            source,
        })
        .and_then(|text| match Spec::parse(&text) {
            Ok(_) => Ok(text),
            Err(e) => Err(InstanceError::Unusable {
                url: url.to_string(),
                detail: e.to_string(),
            }),
        });
    match (fetched, cached) {
        (Ok(text), _) => {
            if let Err(e) = store(&path, &text) {
                tracing::warn!(path = %path.display(), "cannot cache the API description: {e}");
            }
            Ok(text)
        }
        (Err(e), Some(stale)) => {
            tracing::warn!(path = %path.display(), "{e}; using the cached copy");
            Ok(stale)
        }
        (Err(e), None) => Err(e),
    }
}

/// Writes beside the target and renames, so a reader never sees half a file.
fn store(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_instance_has_its_own_file() {
        let dir = Path::new("/cache");
        let cases = [
            (
                "https://codeberg.org",
                "/cache/codeberg.org.swagger.v1.json",
            ),
            (
                "http://127.0.0.1:3000/",
                "/cache/127.0.0.1_3000.swagger.v1.json",
            ),
            (
                "https://example.com/git/",
                "/cache/example.com_git.swagger.v1.json",
            ),
        ];
        for (url, expected) in cases {
            let url = reqwest::Url::parse(url).unwrap();
            assert_eq!(cache_path(dir, &url), Path::new(expected), "{url}");
        }
    }
}
