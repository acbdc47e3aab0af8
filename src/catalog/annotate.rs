//! Annotations of generated tools: what the method implies, and where the catalog says more.
//!
//! The engine derives from the method alone: GET is read-only and idempotent, DELETE
//! destructive and idempotent, PUT destructive and idempotent, PATCH destructive. The
//! generator changes that in three places, and writes only the differences into the catalog:
//!
//! - a PUT without a body sets a flag or a membership (star, follow, add a topic): it adds, it
//!   does not replace, so it is not destructive;
//! - the POSTs listed under `read_only` in `catalog/overrides.yaml` (rendering, reading file
//!   contents) change nothing: read-only and idempotent;
//! - the POSTs listed under `destructive` (merging, transfers, renames, cron runs, mirror
//!   syncs, adoption) overwrite or remove state: destructive.

use super::overrides::Overrides;
use crate::forge::Method;

/// The annotations a tool declares beyond those of its method; `None` keeps the method's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
}

impl Hints {
    pub fn is_empty(&self) -> bool {
        *self == Hints::default()
    }
}

/// The hints of `METHOD path`; `has_body` says whether the operation sends a body or a form.
pub fn hints(method: Method, path: &str, has_body: bool, overrides: &Overrides) -> Hints {
    match method {
        Method::Put if !has_body => Hints {
            destructive: Some(false),
            ..Hints::default()
        },
        Method::Post if Overrides::lists(&overrides.read_only, method, path) => Hints {
            read_only: Some(true),
            idempotent: Some(true),
            ..Hints::default()
        },
        Method::Post if Overrides::lists(&overrides.destructive, method, path) => Hints {
            destructive: Some(true),
            ..Hints::default()
        },
        _ => Hints::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_differences_from_the_method_are_hinted() {
        let o = Overrides::builtin().unwrap();
        let cases = [
            (Method::Get, "/version", false, Hints::default()),
            (
                Method::Delete,
                "/repos/{owner}/{repo}",
                false,
                Hints::default(),
            ),
            (
                Method::Patch,
                "/repos/{owner}/{repo}",
                true,
                Hints::default(),
            ),
            (
                Method::Put,
                "/repos/{owner}/{repo}/topics",
                true,
                Hints::default(),
            ),
            (
                Method::Put,
                "/user/starred/{owner}/{repo}",
                false,
                Hints {
                    destructive: Some(false),
                    ..Hints::default()
                },
            ),
            (
                Method::Post,
                "/repos/{owner}/{repo}/issues",
                true,
                Hints::default(),
            ),
            (
                Method::Post,
                "/markdown",
                true,
                Hints {
                    read_only: Some(true),
                    idempotent: Some(true),
                    ..Hints::default()
                },
            ),
            (
                Method::Post,
                "/repos/{owner}/{repo}/pulls/{index}/merge",
                true,
                Hints {
                    destructive: Some(true),
                    ..Hints::default()
                },
            ),
        ];
        for (method, path, body, expected) in cases {
            assert_eq!(hints(method, path, body, &o), expected, "{method:?} {path}");
        }
    }
}
