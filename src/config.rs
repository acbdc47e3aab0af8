//! Configuration: flags first, then environment variables (with the aliases other Forgejo and
//! Gitea servers use), then defaults. A malformed value is an error, never a silent default.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;
use thiserror::Error;

use crate::forge::Token;

/// The instance used when none is configured.
pub const DEFAULT_URL: &str = "https://codeberg.org";
/// Environment variables for the instance URL, in the order they are tried.
pub const URL_VARS: &[&str] = &["FORGEJO_URL", "GITEA_URL", "GITEA_HOST"];
/// Environment variables for the token, in the order they are tried.
pub const TOKEN_VARS: &[&str] = &[
    "FORGEJO_TOKEN",
    "FORGEJO_ACCESS_TOKEN",
    "GITEA_TOKEN",
    "GITEA_ACCESS_TOKEN",
];
pub const READ_ONLY_VARS: &[&str] = &["FORGEJO_READ_ONLY", "READ_ONLY"];
pub const TOOLSETS_VARS: &[&str] = &["FORGEJO_TOOLSETS", "TOOLSETS"];
pub const DISABLED_TOOLS_VARS: &[&str] = &["FORGEJO_DISABLED_TOOLS", "DISABLED_TOOLS"];
pub const TIMEOUT_VARS: &[&str] = &["FORGELENS_TIMEOUT"];
pub const CATALOG_VARS: &[&str] = &["FORGELENS_CATALOG"];
pub const CATALOG_FROM_INSTANCE_VARS: &[&str] = &["FORGELENS_CATALOG_FROM_INSTANCE"];
pub const CACHE_DIR_VARS: &[&str] = &["FORGELENS_CACHE_DIR"];

/// What the command line says; `None` means "not given" (the environment may still say).
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub url: Option<String>,
    pub token_file: Option<PathBuf>,
    pub read_only: bool,
    pub toolsets: Option<Vec<String>>,
    pub disabled_tools: Option<Vec<String>>,
    pub timeout_secs: Option<u64>,
    pub catalog: Option<PathBuf>,
    pub catalog_from_instance: bool,
    pub cache_dir: Option<PathBuf>,
}

/// The resolved configuration of a server, `read` or `call`.
#[derive(Debug, Clone)]
pub struct Config {
    pub url: Url,
    pub token: Option<Token>,
    pub read_only: bool,
    /// `None`: every toolset.
    pub toolsets: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    pub timeout: Duration,
    /// Where generated tools come from, when they are wanted.
    pub catalog: Option<CatalogSource>,
}

/// The source of the generated tools served beside the curated ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogSource {
    /// A catalog file written by `forgelens catalog generate`.
    File(PathBuf),
    /// The instance's own `/swagger.v1.json`, cached in this directory.
    Instance { cache_dir: PathBuf },
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{name}: `{value}` is not an http(s) URL")]
    Url { name: String, value: String },
    #[error("{name}: `{value}` is not a boolean (use true/false, 1/0, yes/no)")]
    Bool { name: String, value: String },
    #[error("{name}: `{value}` is not a whole number of seconds above 0")]
    Seconds { name: String, value: String },
    #[error("cannot read the token file {path}: {detail}")]
    TokenFile { path: String, detail: String },
    #[error("the token file {0} is empty")]
    EmptyTokenFile(String),
    #[error("--catalog and --catalog-from-instance both name the generated tools; keep one")]
    CatalogConflict,
    #[error(
        "--catalog-from-instance needs a cache directory: set --cache-dir, FORGELENS_CACHE_DIR, XDG_CACHE_HOME or HOME"
    )]
    NoCacheDir,
}

impl Config {
    /// Resolves `flags` against the environment `env` (a function, so tests need no globals).
    pub fn resolve(
        flags: &Flags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let first = |names: &[&str]| -> Option<(String, String)> {
            names.iter().find_map(|n| {
                env(n)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| ((*n).to_owned(), v))
            })
        };
        let (url_name, url_text) = match &flags.url {
            Some(u) => ("--url".to_owned(), u.clone()),
            None => first(URL_VARS).unwrap_or_else(|| ("default".into(), DEFAULT_URL.into())),
        };
        let url = parse_url(&url_text).ok_or(ConfigError::Url {
            name: url_name,
            value: url_text.clone(),
        })?;
        let token = match &flags.token_file {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::TokenFile {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                })?;
                Some(
                    Token::new(&text)
                        .ok_or_else(|| ConfigError::EmptyTokenFile(path.display().to_string()))?,
                )
            }
            None => first(TOKEN_VARS).and_then(|(_, v)| Token::new(&v)),
        };
        let read_only = flags.read_only
            || match first(READ_ONLY_VARS) {
                Some((name, value)) => {
                    parse_bool(&value).ok_or(ConfigError::Bool { name, value })?
                }
                None => false,
            };
        let list = |flag: &Option<Vec<String>>, vars: &[&str]| -> Option<Vec<String>> {
            let items = match flag {
                Some(items) => items.clone(),
                None => first(vars)?.1.split(',').map(str::to_owned).collect(),
            };
            Some(
                items
                    .iter()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        };
        let timeout = match (flags.timeout_secs, first(TIMEOUT_VARS)) {
            (Some(0), _) => {
                return Err(ConfigError::Seconds {
                    name: "--timeout".into(),
                    value: "0".into(),
                });
            }
            (Some(secs), _) => Duration::from_secs(secs),
            (None, Some((name, value))) => match value.trim().parse::<u64>() {
                Ok(secs) if secs > 0 => Duration::from_secs(secs),
                _ => return Err(ConfigError::Seconds { name, value }),
            },
            (None, None) => Duration::from_secs(30),
        };
        let from_instance = flags.catalog_from_instance
            || match first(CATALOG_FROM_INSTANCE_VARS) {
                Some((name, value)) => {
                    parse_bool(&value).ok_or(ConfigError::Bool { name, value })?
                }
                None => false,
            };
        let file = flags
            .catalog
            .clone()
            .or_else(|| first(CATALOG_VARS).map(|(_, v)| PathBuf::from(v)));
        let catalog = match (file, from_instance) {
            (Some(_), true) => return Err(ConfigError::CatalogConflict),
            (Some(path), false) => Some(CatalogSource::File(path)),
            (None, true) => {
                let cache_dir = flags
                    .cache_dir
                    .clone()
                    .or_else(|| first(CACHE_DIR_VARS).map(|(_, v)| PathBuf::from(v)))
                    .or_else(|| {
                        first(&["XDG_CACHE_HOME"]).map(|(_, v)| PathBuf::from(v).join("forgelens"))
                    })
                    .or_else(|| {
                        first(&["HOME"]).map(|(_, v)| PathBuf::from(v).join(".cache/forgelens"))
                    })
                    .ok_or(ConfigError::NoCacheDir)?;
                Some(CatalogSource::Instance { cache_dir })
            }
            (None, false) => None,
        };
        Ok(Config {
            url,
            token,
            read_only,
            toolsets: list(&flags.toolsets, TOOLSETS_VARS),
            disabled_tools: list(&flags.disabled_tools, DISABLED_TOOLS_VARS).unwrap_or_default(),
            timeout,
            catalog,
        })
    }
}

fn parse_url(text: &str) -> Option<Url> {
    let text = text.trim();
    // GITEA_HOST is sometimes a bare host name.
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("https://{text}")
    };
    let url = Url::parse(&with_scheme).ok()?;
    (matches!(url.scheme(), "http" | "https") && url.host().is_some()).then_some(url)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn resolve(flags: &Flags, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        Config::resolve(flags, &|k| map.get(k).cloned())
    }

    #[test]
    fn defaults() {
        let c = resolve(&Flags::default(), &[]).unwrap();
        assert_eq!(c.url.as_str(), "https://codeberg.org/");
        assert!(
            c.token.is_none()
                && !c.read_only
                && c.toolsets.is_none()
                && c.disabled_tools.is_empty()
        );
        assert_eq!(c.timeout, Duration::from_secs(30));
    }

    #[test]
    fn flags_win_then_env_in_alias_order() {
        let env = [
            ("GITEA_URL", "https://gitea.example"),
            ("GITEA_HOST", "other.example"),
            ("GITEA_TOKEN", "t1"),
        ];
        let c = resolve(&Flags::default(), &env).unwrap();
        assert_eq!(c.url.as_str(), "https://gitea.example/");
        assert_eq!(c.token, Token::new("t1"));
        let flags = Flags {
            url: Some("http://127.0.0.1:3000".into()),
            ..Flags::default()
        };
        assert_eq!(
            resolve(&flags, &env).unwrap().url.as_str(),
            "http://127.0.0.1:3000/"
        );
        let host_only = resolve(&Flags::default(), &[("GITEA_HOST", "git.example.org")]).unwrap();
        assert_eq!(host_only.url.as_str(), "https://git.example.org/");
    }

    #[test]
    fn lists_and_booleans() {
        let env = [
            ("TOOLSETS", "labels, commits,"),
            ("FORGEJO_READ_ONLY", "yes"),
            ("DISABLED_TOOLS", "a"),
        ];
        let c = resolve(&Flags::default(), &env).unwrap();
        assert_eq!(
            c.toolsets,
            Some(vec!["labels".to_string(), "commits".to_string()])
        );
        assert!(c.read_only);
        assert_eq!(c.disabled_tools, ["a"]);
    }

    #[test]
    fn malformed_values_are_errors() {
        assert!(matches!(
            resolve(&Flags::default(), &[("READ_ONLY", "maybe")]),
            Err(ConfigError::Bool { .. })
        ));
        assert!(matches!(
            resolve(&Flags::default(), &[("FORGEJO_URL", "ftp://x")]),
            Err(ConfigError::Url { .. })
        ));
        assert!(matches!(
            resolve(&Flags::default(), &[("FORGELENS_TIMEOUT", "soon")]),
            Err(ConfigError::Seconds { .. })
        ));
    }

    #[test]
    fn catalog_sources() {
        let c = resolve(&Flags::default(), &[("FORGELENS_CATALOG", "/c.yaml")]).unwrap();
        assert_eq!(c.catalog, Some(CatalogSource::File("/c.yaml".into())));
        let from_instance = Flags {
            catalog_from_instance: true,
            ..Flags::default()
        };
        let c = resolve(&from_instance, &[("HOME", "/home/u")]).unwrap();
        assert_eq!(
            c.catalog,
            Some(CatalogSource::Instance {
                cache_dir: "/home/u/.cache/forgelens".into()
            })
        );
        let c = resolve(
            &Flags::default(),
            &[
                ("FORGELENS_CATALOG_FROM_INSTANCE", "1"),
                ("XDG_CACHE_HOME", "/x"),
                ("FORGELENS_CACHE_DIR", "/c"),
            ],
        )
        .unwrap();
        assert_eq!(
            c.catalog,
            Some(CatalogSource::Instance {
                cache_dir: "/c".into()
            })
        );
        assert_eq!(
            resolve(&from_instance, &[("FORGELENS_CATALOG", "/c.yaml")]).unwrap_err(),
            ConfigError::CatalogConflict
        );
        assert_eq!(
            resolve(&from_instance, &[]).unwrap_err(),
            ConfigError::NoCacheDir
        );
        assert!(resolve(&Flags::default(), &[]).unwrap().catalog.is_none());
    }

    #[test]
    fn token_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "abc\n").unwrap();
        let flags = Flags {
            token_file: Some(path),
            ..Flags::default()
        };
        let c = resolve(&flags, &[("FORGEJO_TOKEN", "ignored")]).unwrap();
        assert_eq!(c.token, Token::new("abc"));
    }
}
