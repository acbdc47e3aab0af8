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

    /// Why the request to `path` must not be sent, or `None` when it may be.
    pub fn refusal(&self, path: &str) -> Option<String> {
        match target(path) {
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
