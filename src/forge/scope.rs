//! The forge's token scopes (`read:repository`, `write:issue`, …) and which one a request needs.
//!
//! A token signed in through forgelens's OAuth carries the scopes its sign-in was granted; the
//! client checks every request against them before sending it ([`Need::of`]), whichever path
//! built the request (a resource, a curated or generated tool, the escape hatch, a lockdown
//! lookup), so a sign-in never reaches further than its grant. The categories and the
//! write-implies-read rule are the forge's own; which category a path falls in follows how the
//! forge groups its routes.

use std::fmt;

use super::Method;

/// What a scope is about, as the forge names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    ActivityPub,
    Admin,
    Issue,
    Misc,
    Notification,
    Organization,
    Package,
    Repository,
    User,
}

impl Category {
    /// Every category, in the forge's order.
    pub const ALL: [Category; 9] = [
        Category::ActivityPub,
        Category::Admin,
        Category::Issue,
        Category::Misc,
        Category::Notification,
        Category::Organization,
        Category::Package,
        Category::Repository,
        Category::User,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::ActivityPub => "activitypub",
            Category::Admin => "admin",
            Category::Issue => "issue",
            Category::Misc => "misc",
            Category::Notification => "notification",
            Category::Organization => "organization",
            Category::Package => "package",
            Category::Repository => "repository",
            Category::User => "user",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    fn named(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// Reading or changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Read,
    Write,
}

/// The scope one request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Need {
    pub category: Category,
    pub level: Level,
}

impl Need {
    /// The scope a request of `method` to `path` (under `/api/v1`, a template or a concrete
    /// path) needs; `None` for what the forge serves to anyone (`/version`).
    pub fn of(method: Method, path: &str) -> Option<Need> {
        let segments: Vec<&str> = path
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let first = *segments.first()?;
        let category = match first {
            "version" => return None,
            "repos" => match (segments.get(1), segments.get(3)) {
                (Some(&"issues"), _) => Category::Issue,
                (_, Some(&("issues" | "labels" | "milestones"))) => Category::Issue,
                (_, Some(&"notifications")) => Category::Notification,
                _ => Category::Repository,
            },
            "user" => match segments.get(1) {
                Some(&("repos" | "starred" | "subscriptions")) => Category::Repository,
                Some(&("orgs" | "teams")) => Category::Organization,
                _ => Category::User,
            },
            "users" => Category::User,
            "orgs" | "teams" => Category::Organization,
            "notifications" => Category::Notification,
            "admin" => Category::Admin,
            "packages" => Category::Package,
            "activitypub" => Category::ActivityPub,
            "topics" => Category::Repository,
            _ => Category::Misc,
        };
        // Rendering markdown is a POST that changes nothing.
        let reads = matches!(method, Method::Get) || matches!(first, "markdown" | "markup");
        let level = if reads { Level::Read } else { Level::Write };
        Some(Need { category, level })
    }

    /// `read:issue`, `write:repository`: the forge's name for the scope.
    pub fn name(self) -> String {
        let level = match self.level {
            Level::Read => "read",
            Level::Write => "write",
        };
        format!("{level}:{}", self.category.as_str())
    }
}

/// A set of scopes; a write scope includes the read scope of its category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scopes {
    read: u16,
    write: u16,
}

/// A scope name the forge does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a forge scope; scopes are read:CATEGORY or write:CATEGORY with CATEGORY one of activitypub, admin, issue, misc, notification, organization, package, repository, user"
)]
pub struct UnknownScope(pub String);

impl Scopes {
    /// Every scope the forge has.
    pub fn all() -> Scopes {
        let every = Category::ALL.iter().fold(0, |bits, c| bits | c.bit());
        Scopes {
            read: every,
            write: every,
        }
    }

    /// The scopes of a list separated by spaces or commas (OAuth writes spaces).
    pub fn parse(text: &str) -> Result<Scopes, UnknownScope> {
        let mut scopes = Scopes::default();
        for word in text.split([' ', ',']).filter(|w| !w.is_empty()) {
            let unknown = || UnknownScope(word.to_owned());
            let (level, name) = word.split_once(':').ok_or_else(unknown)?;
            let category = Category::named(name).ok_or_else(unknown)?;
            match level {
                "read" => scopes.read |= category.bit(),
                "write" => scopes.write |= category.bit(),
                _ => return Err(unknown()),
            }
        }
        Ok(scopes)
    }

    pub fn is_empty(self) -> bool {
        self.read == 0 && self.write == 0
    }

    /// Whether a token of these scopes may send a request that needs `need`.
    pub fn allows(self, need: Need) -> bool {
        let bit = need.category.bit();
        match need.level {
            Level::Read => (self.read | self.write) & bit != 0,
            Level::Write => self.write & bit != 0,
        }
    }

    /// What both sets allow.
    pub fn intersect(self, other: Scopes) -> Scopes {
        let (mine, theirs) = (self.read | self.write, other.read | other.write);
        Scopes {
            read: mine & theirs,
            write: self.write & other.write,
        }
        .normalized()
    }

    /// The same set with every write scope dropped (its read scope kept).
    pub fn read_only(self) -> Scopes {
        Scopes {
            read: self.read | self.write,
            write: 0,
        }
    }

    /// Whether any write scope is in the set.
    pub fn writes(self) -> bool {
        self.write != 0
    }

    /// A read bit where the write bit is set says nothing more: dropped, so equal sets
    /// compare equal.
    fn normalized(self) -> Scopes {
        Scopes {
            read: self.read & !self.write,
            write: self.write,
        }
    }

    /// The scopes' names, the forge's order, a write scope standing for its read scope too.
    pub fn names(self) -> Vec<String> {
        let set = self.normalized();
        Category::ALL
            .into_iter()
            .filter_map(|category| {
                let level = if set.write & category.bit() != 0 {
                    Level::Write
                } else if set.read & category.bit() != 0 {
                    Level::Read
                } else {
                    return None;
                };
                Some(Need { category, level }.name())
            })
            .collect()
    }

    /// The names, space-separated, as OAuth writes a scope.
    pub fn to_text(self) -> String {
        self.names().join(" ")
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn need(method: Method, path: &str) -> String {
        Need::of(method, path).map(Need::name).unwrap_or_default()
    }

    #[test]
    fn paths_fall_in_the_forges_categories() {
        let cases = [
            (
                Method::Get,
                "/repos/{owner}/{repo}/issues/{index}",
                "read:issue",
            ),
            (Method::Post, "/repos/o/r/labels", "write:issue"),
            (Method::Patch, "/repos/o/r/milestones/3", "write:issue"),
            (Method::Get, "/repos/issues/search", "read:issue"),
            (Method::Get, "/repos/o/r/pulls/2", "read:repository"),
            (Method::Post, "/repos/o/r/pulls/2/merge", "write:repository"),
            (Method::Get, "/repos/o/r/notifications", "read:notification"),
            (Method::Get, "/repos/search?q=x", "read:repository"),
            (Method::Get, "/user", "read:user"),
            (Method::Post, "/user/repos", "write:repository"),
            (Method::Get, "/user/orgs", "read:organization"),
            (
                Method::Delete,
                "/orgs/acme/members/bob",
                "write:organization",
            ),
            (Method::Get, "/notifications", "read:notification"),
            (Method::Get, "/admin/cron", "read:admin"),
            (Method::Get, "/packages/bob", "read:package"),
            (Method::Post, "/markdown", "read:misc"),
            (Method::Get, "/version", ""),
        ];
        for (method, path, expected) in cases {
            assert_eq!(need(method, path), expected, "{method:?} {path}");
        }
    }

    #[test]
    fn a_write_scope_includes_its_read_scope() {
        let scopes = Scopes::parse("write:issue read:repository").unwrap();
        let of = |m, p| Need::of(m, p).unwrap();
        assert!(scopes.allows(of(Method::Get, "/repos/o/r/issues")));
        assert!(scopes.allows(of(Method::Post, "/repos/o/r/issues")));
        assert!(scopes.allows(of(Method::Get, "/repos/o/r")));
        assert!(!scopes.allows(of(Method::Delete, "/repos/o/r")));
        assert!(!scopes.allows(of(Method::Get, "/user")));
        assert_eq!(scopes.names(), ["write:issue", "read:repository"]);
        assert_eq!(
            scopes.read_only().to_text(),
            "read:issue read:repository",
            "read-only keeps the reading"
        );
    }

    #[test]
    fn unknown_scopes_are_refused_by_name() {
        assert_eq!(
            Scopes::parse("read:issue openid"),
            Err(UnknownScope("openid".into()))
        );
        assert!(Scopes::parse("admin:repository").is_err());
        assert!(Scopes::parse("").unwrap().is_empty());
    }

    fn scopes() -> impl Strategy<Value = Scopes> {
        (0u16..512, 0u16..512).prop_map(|(read, write)| Scopes { read, write })
    }

    proptest! {
        /// A set's names read back as the same set, and the intersection allows exactly
        /// what both allow.
        #[test]
        fn names_round_trip_and_intersection_is_both(a in scopes(), b in scopes()) {
            prop_assert_eq!(Scopes::parse(&a.to_text()).unwrap().normalized(), a.normalized());
            let both = a.intersect(b);
            for category in Category::ALL {
                for level in [Level::Read, Level::Write] {
                    let need = Need { category, level };
                    prop_assert_eq!(both.allows(need), a.allows(need) && b.allows(need));
                }
            }
        }
    }
}
