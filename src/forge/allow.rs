//! The repository allow-list (`--allow-repos`): which repositories forgelens may ask the forge
//! about, and which repository a request path is about.
//!
//! The client checks every request against the list before it is sent, so nothing outside it
//! is ever requested, whichever tool or resource built the request. A path that names a
//! repository the list does not hold is refused, and so is one whose repository cannot be told
//! from the path (`/repositories/{id}`, dot segments that the URL parser would resolve): an
//! allow-list fails closed. Paths about no repository (`/user`, `/orgs/{org}`) pass here; what
//! their answers list is filtered by the engine, and tools that could reach anything (generated
//! ones, the escape hatch) are held to repository paths by the service.

use std::fmt;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use serde_json::Value;

use super::Method;

/// One entry: `owner/repo`, or `owner/*` for every repository of an owner.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Lowercase: forge names are case-insensitive.
    owner: String,
    /// `None` for `*`.
    repo: Option<String>,
}

/// The repositories forgelens may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Entry>,
}

/// What a request path is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One repository, by owner and name (decoded, as written).
    Repo(String, String),
    /// A repository that the path does not name: why.
    Unknown(&'static str),
    /// No repository in particular.
    Other,
}

/// Why an allow-list does not read: each kind with its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadAllowList {
    #[error("`{0}` is not `owner/repo` or `owner/*`; separate entries with commas")]
    NotAPair(String),
    #[error(
        "`{0}`: the owner must be a name (letters, digits, `-`, `_`, `.`); `*` is allowed only for the repository"
    )]
    Owner(String),
    #[error("`{0}`: the repository must be a name or `*`")]
    Repo(String),
    #[error(
        "the allow-list names no repository; give `owner/repo` or `owner/*`, separated by commas"
    )]
    Empty,
}

impl FromStr for AllowList {
    type Err = BadAllowList;

    fn from_str(text: &str) -> Result<AllowList, BadAllowList> {
        let mut entries = Vec::new();
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let Some((owner, repo)) = item.split_once('/') else {
                return Err(BadAllowList::NotAPair(item.to_owned()));
            };
            if !is_name(owner) {
                return Err(BadAllowList::Owner(item.to_owned()));
            }
            let repo = match repo {
                "*" => None,
                name if is_name(name) => Some(name.to_lowercase()),
                _ => return Err(BadAllowList::Repo(item.to_owned())),
            };
            entries.push(Entry {
                owner: owner.to_lowercase(),
                repo,
            });
        }
        if entries.is_empty() {
            return Err(BadAllowList::Empty);
        }
        Ok(AllowList { entries })
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}/{}", e.owner, e.repo.as_deref().unwrap_or("*"))?;
        }
        Ok(())
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl AllowList {
    /// Whether repository `owner/repo` is on the list.
    pub fn allows(&self, owner: &str, repo: &str) -> bool {
        let (owner, repo) = (owner.to_lowercase(), repo.to_lowercase());
        self.entries
            .iter()
            .any(|e| e.owner == owner && e.repo.as_ref().is_none_or(|r| *r == repo))
    }

    /// Whether `full_name` (`owner/repo`) is on the list; anything else is not.
    pub fn allows_full_name(&self, full_name: &str) -> bool {
        full_name
            .split_once('/')
            .is_some_and(|(owner, repo)| self.allows(owner, repo))
    }

    /// Whether some repository of `owner` is on the list.
    pub fn allows_owner(&self, owner: &str) -> bool {
        let owner = owner.to_lowercase();
        self.entries.iter().any(|e| e.owner == owner)
    }

    /// Why `request` must not be sent, or `None` when it may be: its path, what its body makes
    /// it reach, and for a request whose path its caller chose freely (a generated tool, the
    /// escape hatch), a path about no repository at all.
    pub fn request_refusal(&self, request: &super::Request) -> Option<String> {
        if let Some(why) = self.refusal(&request.path) {
            return Some(why);
        }
        let body = match &request.body {
            Some(super::Payload::Json(body)) => Some(body),
            _ => None,
        };
        if let Some(reached) = destination(request.method, &request.path, body)
            && let Some(why) = self.judge(reached)
        {
            return Some(format!("it reaches beyond its path: {why}"));
        }
        if request.free_path && target(&request.path) == Target::Other {
            return Some(format!(
                "its path names no repository, and it was built by a tool that may reach anything: with a repository allow-list ({self}) such a tool reaches only the listed repositories"
            ));
        }
        None
    }

    /// Why the request to `path` must not be sent, or `None` when it may be.
    pub fn refusal(&self, path: &str) -> Option<String> {
        self.judge(target(path))
    }

    fn judge(&self, target: Target) -> Option<String> {
        match target {
            Target::Repo(owner, repo) if self.allows(&owner, &repo) => None,
            Target::Repo(owner, repo) => Some(format!(
                "{owner}/{repo} is not in the repository allow-list ({self})"
            )),
            Target::Unknown(why) => Some(format!(
                "{why}, so it cannot be held to the repository allow-list ({self})"
            )),
            Target::Other => None,
        }
    }
}

/// The repository a request creates, moves its repository to, or reads through its body,
/// beside the one its path names: a fork's or a generated copy's destination, a transfer's new
/// owner, a rename, a new repository of an organization or a user, the other issue of a
/// dependency. `None` when the request names no other repository.
pub fn destination(method: Method, path: &str, body: Option<&Value>) -> Option<Target> {
    let text = |key: &str| {
        body.and_then(|b| b.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let unknown = Target::Unknown;
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    let pair = |owner: Option<String>, name: Option<String>, why| match (owner, name) {
        (Some(owner), Some(name)) => Target::Repo(owner, name),
        _ => unknown(why),
    };
    Some(match (method, s.as_slice()) {
        (Method::Post, ["repos", _, repo, "forks"]) => match text("organization") {
            Some(org) => Target::Repo(org, text("name").unwrap_or_else(|| (*repo).to_owned())),
            None => unknown(
                "a fork without `organization` lands in the authenticated user's own account",
            ),
        },
        (Method::Post, ["repos", _, _, "generate"]) => pair(
            text("owner"),
            text("name"),
            "a generated repository needs its `owner` and `name`",
        ),
        (Method::Post, ["repos", _, repo, "transfer"]) => pair(
            text("new_owner"),
            Some((*repo).to_owned()),
            "a transfer needs its `new_owner`",
        ),
        (Method::Patch, ["repos", owner, _]) => Target::Repo((*owner).to_owned(), text("name")?),
        (Method::Post, ["user", "repos"]) => {
            unknown("a repository created in the authenticated user's own account")
        }
        (Method::Post, ["orgs", org, "repos"] | ["admin", "users", org, "repos"]) => pair(
            Some((*org).to_owned()),
            text("name"),
            "a new repository needs its `name`",
        ),
        (
            Method::Post | Method::Delete,
            ["repos", _, _, "issues", _, "dependencies" | "blocks"],
        ) => pair(
            text("owner"),
            text("repo"),
            "the other issue's repository is not named",
        ),
        (Method::Put, ["notifications"]) => {
            unknown("marking every notification read reaches every repository")
        }
        (Method::Patch, ["notifications", "threads", _]) => {
            unknown("a notification thread may be about any repository")
        }
        _ => return None,
    })
}

/// The repository a forge API path (below `/api/v1`, percent-encoded) is about.
pub fn target(path: &str) -> Target {
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    // The URL parser resolves dot segments, so `/repos/a/b/../../c/d` would reach `c/d`.
    if segments
        .iter()
        .any(|s| s == "." || s == ".." || s.contains('/'))
    {
        return Target::Unknown("the path has dot segments or an encoded slash");
    }
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["repos", "search"] | ["repos", "issues", "search"] => Target::Other,
        ["repos", "migrate"] => Target::Unknown("a migration creates a repository"),
        ["repos", owner, repo, ..] if !owner.is_empty() && !repo.is_empty() => {
            Target::Repo((*owner).to_owned(), (*repo).to_owned())
        }
        ["repositories", ..] => Target::Unknown("the path names a repository by its id"),
        ["user", "starred", owner, repo] | ["teams", _, "repos", owner, repo] => {
            Target::Repo((*owner).to_owned(), (*repo).to_owned())
        }
        ["repos", ..] => Target::Unknown("the path names no whole repository"),
        _ => Target::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(text: &str) -> AllowList {
        text.parse().expect("a valid list")
    }

    #[test]
    fn entries_match_case_insensitively_and_owner_star_covers_an_owner() {
        let l = list("acme/widgets, Tools/*");
        assert!(l.allows("ACME", "Widgets"));
        assert!(!l.allows("acme", "gadgets"));
        assert!(l.allows("tools", "anything"));
        assert!(l.allows_owner("acme") && !l.allows_owner("other"));
        assert!(l.allows_full_name("tools/x") && !l.allows_full_name("tools"));
        assert_eq!(l.to_string(), "acme/widgets, tools/*");
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (text, words) in [
            ("acme", "not `owner/repo`"),
            ("*/x", "the owner must be a name"),
            ("acme/wid*", "the repository must be a name"),
            (" , ", "names no repository"),
            ("acme/..", "the repository must be a name"),
        ] {
            let err = text.parse::<AllowList>().unwrap_err();
            assert!(err.to_string().contains(words), "{text}: {err}");
        }
    }

    #[test]
    fn paths_name_their_repository() {
        assert_eq!(
            target("/repos/acme/widgets/issues/1"),
            Target::Repo("acme".into(), "widgets".into())
        );
        assert_eq!(
            target("/repos/acme/wid%67ets"),
            Target::Repo("acme".into(), "widgets".into())
        );
        assert_eq!(
            target("/user/starred/acme/widgets"),
            Target::Repo("acme".into(), "widgets".into())
        );
        assert_eq!(
            target("/teams/5/repos/acme/widgets"),
            Target::Repo("acme".into(), "widgets".into())
        );
        for other in [
            "/repos/search",
            "/repos/issues/search",
            "/user",
            "/orgs/acme/teams",
        ] {
            assert_eq!(target(other), Target::Other, "{other}");
        }
        for unknown in [
            "/repositories/12",
            "/repos/acme/widgets/../../other/secret",
            "/repos/acme/widgets/%2e%2e/%2E%2E/other/secret",
            "/repos/acme%2fwidgets",
            "/repos/migrate",
        ] {
            assert!(matches!(target(unknown), Target::Unknown(_)), "{unknown}");
        }
    }

    #[test]
    fn the_refusal_names_the_repository_and_the_list() {
        let l = list("acme/widgets");
        assert_eq!(l.refusal("/repos/acme/widgets/pulls"), None);
        assert_eq!(l.refusal("/user"), None);
        let why = l.refusal("/repos/other/secret").unwrap();
        assert!(
            why.contains("other/secret") && why.contains("acme/widgets"),
            "{why}"
        );
        assert!(l.refusal("/repositories/3").unwrap().contains("by its id"));
    }

    #[test]
    fn what_a_body_makes_a_request_reach_is_held_to_the_list() {
        let l = list("acme/*");
        let post = |path: &str, body: serde_json::Value| super::super::Request {
            method: Method::Post,
            body: Some(super::super::Payload::Json(body)),
            ..super::super::Request::get(path)
        };
        let cases = [
            (
                post(
                    "/repos/acme/w/forks",
                    serde_json::json!({"organization": "other"}),
                ),
                false,
            ),
            (
                post(
                    "/repos/acme/w/forks",
                    serde_json::json!({"organization": "acme", "name": "w2"}),
                ),
                true,
            ),
            (post("/repos/acme/w/forks", serde_json::json!({})), false),
            (
                post(
                    "/repos/acme/w/generate",
                    serde_json::json!({"owner": "other", "name": "x"}),
                ),
                false,
            ),
            (
                post(
                    "/repos/acme/w/transfer",
                    serde_json::json!({"new_owner": "other"}),
                ),
                false,
            ),
            (
                post("/orgs/other/repos", serde_json::json!({"name": "x"})),
                false,
            ),
            (
                post("/orgs/acme/repos", serde_json::json!({"name": "x"})),
                true,
            ),
            (post("/user/repos", serde_json::json!({"name": "x"})), false),
            (
                post(
                    "/repos/acme/w/issues/1/dependencies",
                    serde_json::json!({"owner": "other", "repo": "s", "index": 1}),
                ),
                false,
            ),
            (
                post(
                    "/repos/acme/w/issues/1/comments",
                    serde_json::json!({"body": "x"}),
                ),
                true,
            ),
        ];
        for (request, allowed) in cases {
            let why = l.request_refusal(&request);
            assert_eq!(
                why.is_none(),
                allowed,
                "{} {:?}: {why:?}",
                request.path,
                request.body
            );
        }
        let mut free = super::super::Request::get("/version");
        free.free_path = true;
        assert!(l.request_refusal(&free).is_some());
        assert!(
            l.request_refusal(&super::super::Request::get("/version"))
                .is_none()
        );
    }

    proptest! {
        /// Whatever the path, a request that reaches a repository path outside the list (as
        /// the URL parser would resolve it) is refused.
        #[test]
        fn no_path_reaches_a_repository_outside_the_list(
            segs in proptest::collection::vec(
                prop_oneof![
                    Just("repos".to_owned()), Just("acme".to_owned()), Just("widgets".to_owned()),
                    Just("other".to_owned()), Just("..".to_owned()), Just("%2e%2e".to_owned()),
                    Just(".".to_owned()), Just("issues".to_owned()), Just("%2F".to_owned()),
                    Just("".to_owned()), "[a-z]{1,3}",
                ],
                1..8,
            )
        ) {
            let path = format!("/{}", segs.join("/"));
            let l = list("acme/widgets");
            if l.refusal(&path).is_none() {
                let url = reqwest::Url::parse(&format!("http://forge/api/v1{path}")).unwrap();
                let resolved = url.path().strip_prefix("/api/v1").unwrap_or("").to_owned();
                match target(&resolved) {
                    Target::Repo(o, r) => prop_assert!(l.allows(&o, &r), "{path} → {resolved}"),
                    Target::Unknown(_) => prop_assert!(false, "{path} → {resolved}"),
                    Target::Other => {}
                }
            }
        }
    }
}
