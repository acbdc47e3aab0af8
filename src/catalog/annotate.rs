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
    use crate::engine::tool::Annotations;

    /// `/repos/{owner}/{repo}/pulls/{index}` → `/repos/{}/{}/pulls/{}`: placeholder names differ
    /// between the manifests and the spec.
    fn shape(path: &str) -> String {
        let mut out = String::new();
        let mut inside = false;
        for c in path.chars() {
            match c {
                '{' => {
                    inside = true;
                    out.push_str("{}");
                }
                '}' => inside = false,
                _ if inside => {}
                c => out.push(c),
            }
        }
        out
    }

    /// A curated tool is as cautious as the generated tool of the same operation where the
    /// catalog's overrides speak: destructive for every operation listed as destructive, and
    /// read-only only for a GET or a POST listed as read-only. (The method's own default may be
    /// relaxed by hand, as for a PATCH that marks a notification read.)
    #[test]
    fn curated_tools_follow_the_generated_rules() {
        let overrides = Overrides::builtin().unwrap();
        let catalog = crate::service::compile(&crate::manifest::Sources::builtin()).unwrap();
        let listed = |lines: &[String], method: Method, path: &str| {
            lines
                .iter()
                .filter_map(|l| l.trim().split_once(' '))
                .any(|(m, p)| Method::parse(m) == Some(method) && shape(p.trim()) == shape(path))
        };
        let mut checked = 0;
        for tool in catalog.tools() {
            let Some(method) = tool.method() else {
                continue;
            };
            let path = tool.endpoint.request.path_pattern();
            let base = Annotations::for_method(Some(method));
            let actual = &tool.annotations;
            assert!(
                !listed(&overrides.destructive, method, &path) || actual.destructive,
                "{} ({method:?} {path}) must be destructive, as its generated tool is",
                tool.name
            );
            assert!(
                !actual.read_only || base.read_only || listed(&overrides.read_only, method, &path),
                "{} ({method:?} {path}) claims to be read-only",
                tool.name
            );
            checked += 1;
        }
        assert!(checked > 200, "{checked} tools checked");
    }

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
