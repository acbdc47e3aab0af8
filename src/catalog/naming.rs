//! Tool names: `forgejo_<domain>_<action>`, snake_case in lower case, 64 characters at most,
//! unique, and the same every time for the same spec.
//!
//! - The **domain** comes from the path: `/admin/…` is `admin`; otherwise the first literal
//!   segment after the first that names a domain (`issues`, `pulls`, `releases`, `wiki`,
//!   `hooks`, `actions`, `packages`, `notifications`, `teams`; `labels` and `milestones` under
//!   `/repos`); otherwise the first segment (`repos` → `repo`, `orgs` → `org`, `user(s)` →
//!   `user`, `teams` → `team`, …); anything else is `misc`.
//! - The **action** comes from the operationId split into words (`repoListPullReviews` →
//!   repo, list, pull, reviews): a leading scope word (repo, issue, org, user, admin, notify,
//!   team, package) is dropped, then every word that only restates the domain (`pull` and a
//!   following `request` in the pull domain). A single capital joins the word after it and
//!   digits join the word before them, so `OAuth2` stays one word.
//! - Names longer than 64 characters lose trailing action words.
//! - **Collisions** are settled in steps, each applied only to names still shared: the dropped
//!   scope word is put back (`forgejo_hook_org_create`), then `by_<parameter>` when the path
//!   ends in one, then the method, then a counter in path order.
//! - The override map (`catalog/overrides.yaml`) names an operation outright; derived names
//!   never take an overridden one.

use std::collections::{HashMap, HashSet};

use super::overrides::Overrides;
use super::{CatalogError, PREFIX};
use crate::engine::MAX_TOOL_NAME;
use crate::forge::Method;

/// The toolsets of generated tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    Admin,
    Repo,
    Issue,
    Pull,
    Release,
    Wiki,
    Org,
    Team,
    User,
    Actions,
    Hook,
    Package,
    Notification,
    Misc,
}

impl Domain {
    pub const ALL: [Domain; 14] = [
        Domain::Admin,
        Domain::Repo,
        Domain::Issue,
        Domain::Pull,
        Domain::Release,
        Domain::Wiki,
        Domain::Org,
        Domain::Team,
        Domain::User,
        Domain::Actions,
        Domain::Hook,
        Domain::Package,
        Domain::Notification,
        Domain::Misc,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Admin => "admin",
            Domain::Repo => "repo",
            Domain::Issue => "issue",
            Domain::Pull => "pull",
            Domain::Release => "release",
            Domain::Wiki => "wiki",
            Domain::Org => "org",
            Domain::Team => "team",
            Domain::User => "user",
            Domain::Actions => "actions",
            Domain::Hook => "hook",
            Domain::Package => "package",
            Domain::Notification => "notification",
            Domain::Misc => "misc",
        }
    }

    /// The toolset of the domain's tools: the plural the curated toolsets use (`issues`,
    /// `pulls`, `repos`), so that one name selects a domain's curated and generated tools.
    pub fn toolset(self) -> &'static str {
        match self {
            Domain::Admin => "admin",
            Domain::Repo => "repos",
            Domain::Issue => "issues",
            Domain::Pull => "pulls",
            Domain::Release => "releases",
            Domain::Wiki => "wiki",
            Domain::Org => "orgs",
            Domain::Team => "teams",
            Domain::User => "user",
            Domain::Actions => "actions",
            Domain::Hook => "hooks",
            Domain::Package => "packages",
            Domain::Notification => "notifications",
            Domain::Misc => "misc",
        }
    }

    /// How titles name the domain.
    pub fn title(self) -> &'static str {
        match self {
            Domain::Admin => "Admin",
            Domain::Repo => "Repository",
            Domain::Issue => "Issue",
            Domain::Pull => "Pull request",
            Domain::Release => "Release",
            Domain::Wiki => "Wiki",
            Domain::Org => "Organization",
            Domain::Team => "Team",
            Domain::User => "User",
            Domain::Actions => "Actions",
            Domain::Hook => "Webhook",
            Domain::Package => "Package",
            Domain::Notification => "Notification",
            Domain::Misc => "Instance",
        }
    }

    /// The toolset's one-line description.
    pub fn description(self) -> &'static str {
        match self {
            Domain::Admin => {
                "Instance administration (generated; needs a site administrator's token)."
            }
            Domain::Repo => {
                "Repositories: contents, branches, tags, commits, settings (generated)."
            }
            Domain::Issue => "Issues, their comments, labels and milestones (generated).",
            Domain::Pull => "Pull requests, their reviews and merges (generated).",
            Domain::Release => "Releases and their attachments (generated).",
            Domain::Wiki => "Wiki pages (generated).",
            Domain::Org => "Organizations, their members and labels (generated).",
            Domain::Team => "Teams of organizations (generated).",
            Domain::User => "Users and the signed-in user's account (generated).",
            Domain::Actions => "Actions: runners, runs, secrets and variables (generated).",
            Domain::Hook => "Webhooks of repositories, organizations and users (generated).",
            Domain::Package => "The package registry (generated).",
            Domain::Notification => "Notifications of the signed-in user (generated).",
            Domain::Misc => "Rendering, templates, settings, version, federation (generated).",
        }
    }

    /// Words of an operationId that only restate the domain.
    fn restates(self, word: &str) -> bool {
        let words: &[&str] = match self {
            Domain::Admin => &["admin"],
            Domain::Repo => &["repo", "repos", "repository", "repositories"],
            Domain::Issue => &["issue", "issues"],
            Domain::Pull => &["pull", "pulls"],
            Domain::Release => &["release", "releases"],
            Domain::Wiki => &["wiki"],
            Domain::Org => &["org", "orgs", "organization", "organizations"],
            Domain::Team => &["team", "teams"],
            Domain::User => &["user", "users"],
            Domain::Actions => &["action", "actions"],
            Domain::Hook => &["hook", "hooks", "webhook", "webhooks"],
            Domain::Package => &["package", "packages"],
            Domain::Notification => &["notification", "notifications", "notify"],
            Domain::Misc => &[],
        };
        words.contains(&word)
    }
}

/// Segments that name a domain wherever they appear after the first.
const KEYWORDS: &[(&str, Domain)] = &[
    ("issues", Domain::Issue),
    ("pulls", Domain::Pull),
    ("releases", Domain::Release),
    ("wiki", Domain::Wiki),
    ("hooks", Domain::Hook),
    ("actions", Domain::Actions),
    ("packages", Domain::Package),
    ("notifications", Domain::Notification),
    ("teams", Domain::Team),
];

/// Segments that name the issue domain under `/repos`.
const REPO_KEYWORDS: &[(&str, Domain)] =
    &[("labels", Domain::Issue), ("milestones", Domain::Issue)];

/// First segments and their domains.
const FIRST: &[(&str, Domain)] = &[
    ("repos", Domain::Repo),
    ("repositories", Domain::Repo),
    ("orgs", Domain::Org),
    ("org", Domain::Org),
    ("user", Domain::User),
    ("users", Domain::User),
    ("teams", Domain::Team),
    ("packages", Domain::Package),
    ("notifications", Domain::Notification),
];

/// Leading operationId words that say which API area an operation is filed under.
const SCOPES: &[&str] = &[
    "repo", "issue", "org", "user", "admin", "notify", "team", "package",
];

/// The domain of a swagger path; see the module documentation.
pub fn domain(path: &str) -> Domain {
    let literals: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && !s.contains('{'))
        .collect();
    let Some(first) = literals.first() else {
        return Domain::Misc;
    };
    if *first == "admin" {
        return Domain::Admin;
    }
    let lookup = |table: &[(&str, Domain)], segment: &str| {
        table.iter().find(|(s, _)| *s == segment).map(|(_, d)| *d)
    };
    for segment in &literals[1..] {
        if let Some(d) = lookup(KEYWORDS, segment) {
            return d;
        }
        if *first == "repos"
            && let Some(d) = lookup(REPO_KEYWORDS, segment)
        {
            return d;
        }
    }
    lookup(FIRST, first).unwrap_or(Domain::Misc)
}

/// An operationId (or any identifier) split into lowercase words; see the module documentation.
pub fn words(id: &str) -> Vec<String> {
    let chars: Vec<char> = id.chars().collect();
    let mut raw: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                raw.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if p.is_ascii_alphanumeric() => {
                (c.is_ascii_uppercase() && (p.is_ascii_lowercase() || p.is_ascii_digit()))
                    || (c.is_ascii_uppercase()
                        && p.is_ascii_uppercase()
                        && next.is_some_and(|n| n.is_ascii_lowercase()))
                    || (c.is_ascii_lowercase() && p.is_ascii_digit())
            }
            _ => false,
        };
        if boundary && !current.is_empty() {
            raw.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        raw.push(current);
    }
    // A lone capital before a word is part of it (`OAuth`).
    let mut out: Vec<String> = Vec::new();
    let mut carry = String::new();
    for w in raw {
        if w.len() == 1 && w.chars().all(|c| c.is_ascii_uppercase()) {
            carry.push_str(&w);
            continue;
        }
        out.push(format!("{carry}{w}").to_ascii_lowercase());
        carry.clear();
    }
    if !carry.is_empty() {
        out.push(carry.to_ascii_lowercase());
    }
    out
}

/// What the namer needs to know of one operation.
#[derive(Debug, Clone)]
pub struct Subject {
    pub method: Method,
    pub path: String,
    /// The operationId, or words of the method and path when the spec gives none.
    pub operation_id: String,
}

/// A name being derived.
#[derive(Debug)]
struct Draft {
    domain: Domain,
    /// The scope word dropped from the front of the action, when one was.
    scope: Option<String>,
    /// Whether a collision asked for the scope word back.
    show_scope: bool,
    action: Vec<String>,
    /// Qualifiers added to settle collisions.
    extra: Vec<String>,
    fixed: Option<String>,
}

impl Draft {
    fn name(&self) -> String {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        let mut action = self.action.clone();
        loop {
            let mut parts = vec![PREFIX.to_owned(), self.domain.as_str().to_owned()];
            if self.show_scope {
                parts.extend(self.scope.clone());
            }
            parts.extend(action.iter().cloned());
            parts.extend(self.extra.iter().cloned());
            let name = parts.join("_");
            if name.len() <= MAX_TOOL_NAME || action.len() <= 1 {
                return cut(name);
            }
            action.pop();
        }
    }
}

/// A name still too long after losing its action words is cut at a word boundary.
fn cut(name: String) -> String {
    if name.len() <= MAX_TOOL_NAME {
        return name;
    }
    let mut cut = name[..MAX_TOOL_NAME].to_owned();
    if let Some(i) = cut.rfind('_') {
        cut.truncate(i);
    }
    cut
}

/// The names of `subjects`, in the same order; see the module documentation.
pub fn assign(subjects: &[Subject], overrides: &Overrides) -> Result<Vec<String>, CatalogError> {
    let mut drafts: Vec<Draft> = subjects.iter().map(|s| draft(s, overrides)).collect();
    let fixed: HashSet<String> = drafts.iter().filter_map(|d| d.fixed.clone()).collect();
    type Step = fn(&Subject, &mut Draft);
    let steps: [Step; 3] = [
        |_, d| d.show_scope = d.scope.is_some(),
        |s, d| {
            let last = s.path.rsplit('/').next().unwrap_or_default();
            if let Some(param) = last.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                d.extra.push(format!("by_{}", words(param).join("_")));
            }
        },
        |s, d| d.extra.push(s.method.as_str().to_ascii_lowercase()),
    ];
    for step in steps {
        for i in colliding(&drafts, &fixed) {
            step(&subjects[i], &mut drafts[i]);
        }
    }
    // Whatever is still shared gets a counter in path order; overridden names are never moved.
    let mut seen: HashMap<String, usize> = fixed.iter().map(|n| (n.clone(), 1)).collect();
    let mut names = Vec::with_capacity(drafts.len());
    for d in &drafts {
        let mut name = d.name();
        if d.fixed.is_none() {
            let count = seen.entry(name.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                name = cut(format!("{name}_{count}"));
            }
        }
        names.push(name);
    }
    // A counter can land on another derived name; nothing but a duplicate gets past this.
    let mut unique = HashSet::new();
    for n in &names {
        if !unique.insert(n) {
            return Err(CatalogError::Naming(format!(
                "two operations are both named `{n}`; name one of them in catalog/overrides.yaml"
            )));
        }
    }
    Ok(names)
}

/// The indexes of derived names that equal another name.
fn colliding(drafts: &[Draft], fixed: &HashSet<String>) -> Vec<usize> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for d in drafts {
        *count.entry(d.name()).or_insert(0) += 1;
    }
    drafts
        .iter()
        .enumerate()
        .filter(|(_, d)| d.fixed.is_none())
        .filter(|(_, d)| {
            let n = d.name();
            count[&n] > 1 || fixed.contains(&n)
        })
        .map(|(i, _)| i)
        .collect()
}

fn draft(subject: &Subject, overrides: &Overrides) -> Draft {
    let domain = domain(&subject.path);
    let fixed = overrides.names.get(&subject.operation_id).cloned();
    let mut all = words(&subject.operation_id);
    let scope = match all.first() {
        Some(first) if all.len() > 1 && SCOPES.contains(&first.as_str()) => Some(all.remove(0)),
        _ => None,
    };
    let mut action = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let w = &all[i];
        if domain == Domain::Pull
            && w == "pull"
            && matches!(
                all.get(i + 1).map(String::as_str),
                Some("request" | "requests")
            )
        {
            i += 2;
            continue;
        }
        if !domain.restates(w) {
            action.push(w.clone());
        }
        i += 1;
    }
    if action.is_empty() {
        action = all;
    }
    Draft {
        domain,
        // A scope that restates the domain would only repeat it.
        scope: scope.filter(|s| !domain.restates(s)),
        show_scope: false,
        action,
        extra: Vec::new(),
        fixed,
    }
}

/// The words of an operation without an operationId: its method and literal path segments.
pub fn fallback_id(method: Method, path: &str) -> String {
    let mut id = method.as_str().to_ascii_lowercase();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        let literal = segment.trim_matches(|c| c == '{' || c == '}');
        id.push('_');
        id.push_str(literal);
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::is_tool_name;

    #[test]
    fn domains_come_from_the_path() {
        let cases = [
            ("/admin/hooks/{id}", Domain::Admin),
            ("/repos/{owner}/{repo}", Domain::Repo),
            ("/repos/{owner}/{repo}/issues/{index}/labels", Domain::Issue),
            ("/repos/{owner}/{repo}/labels", Domain::Issue),
            ("/orgs/{org}/labels", Domain::Org),
            ("/repos/{owner}/{repo}/pulls/{index}/reviews", Domain::Pull),
            (
                "/repos/{owner}/{repo}/releases/{id}/assets",
                Domain::Release,
            ),
            ("/repos/{owner}/{repo}/wiki/page/{pageName}", Domain::Wiki),
            ("/orgs/{org}/hooks", Domain::Hook),
            ("/user/actions/runners", Domain::Actions),
            ("/packages/{owner}", Domain::Package),
            ("/repos/{owner}/{repo}/notifications", Domain::Notification),
            ("/orgs/{org}/teams", Domain::Team),
            ("/teams/{id}", Domain::Team),
            ("/users/{username}/repos", Domain::User),
            ("/markdown", Domain::Misc),
            ("/", Domain::Misc),
        ];
        for (path, expected) in cases {
            assert_eq!(domain(path), expected, "{path}");
        }
    }

    #[test]
    fn operation_ids_split_into_words() {
        let cases: &[(&str, &[&str])] = &[
            ("repoListPullReviews", &["repo", "list", "pull", "reviews"]),
            ("getSSHSigningKey", &["get", "ssh", "signing", "key"]),
            (
                "userGetOAuth2Applications",
                &["user", "get", "oauth2", "applications"],
            ),
            ("repoGetByID", &["repo", "get", "by", "id"]),
            ("ListActionRuns", &["list", "action", "runs"]),
            ("user-id", &["user", "id"]),
        ];
        for (id, expected) in cases {
            assert_eq!(words(id), *expected, "{id}");
        }
    }

    fn subject(method: Method, path: &str, id: &str) -> Subject {
        Subject {
            method,
            path: path.into(),
            operation_id: id.into(),
        }
    }

    fn names(subjects: &[Subject], overrides: &str) -> Vec<String> {
        assign(subjects, &Overrides::parse(overrides).unwrap()).unwrap()
    }

    #[test]
    fn scope_and_domain_words_are_dropped() {
        let got = names(
            &[
                subject(
                    Method::Get,
                    "/repos/{owner}/{repo}/pulls",
                    "repoListPullRequests",
                ),
                subject(
                    Method::Get,
                    "/repos/{owner}/{repo}/issues/{index}",
                    "issueGetIssue",
                ),
                subject(Method::Get, "/version", "getVersion"),
                subject(
                    Method::Post,
                    "/repos/{owner}/{repo}/pulls/{index}/requested_reviewers",
                    "repoCreatePullReviewRequests",
                ),
            ],
            "{}",
        );
        assert_eq!(
            got,
            [
                "forgejo_pull_list",
                "forgejo_issue_get",
                "forgejo_misc_get_version",
                "forgejo_pull_create_review_requests"
            ]
        );
    }

    #[test]
    fn collisions_are_settled_step_by_step() {
        let got = names(
            &[
                subject(Method::Get, "/orgs/{org}/hooks", "orgListHooks"),
                subject(Method::Get, "/user/hooks", "userListHooks"),
                subject(Method::Get, "/repos/{o}/{r}/times", "repoTrackedTimes"),
                subject(
                    Method::Get,
                    "/repos/{o}/{r}/times/{user}",
                    "repoTrackedTimes",
                ),
                subject(Method::Get, "/a", "getThing"),
                subject(Method::Post, "/a", "getThing"),
                subject(Method::Get, "/b", "getOther"),
                subject(Method::Get, "/b", "getOther"),
            ],
            "{}",
        );
        assert_eq!(
            got,
            [
                "forgejo_hook_org_list",
                "forgejo_hook_user_list",
                "forgejo_repo_tracked_times",
                "forgejo_repo_tracked_times_by_user",
                "forgejo_misc_get_thing_get",
                "forgejo_misc_get_thing_post",
                "forgejo_misc_get_other_get",
                "forgejo_misc_get_other_get_2",
            ]
        );
    }

    #[test]
    fn an_override_wins_and_derived_names_step_aside() {
        let got = names(
            &[
                subject(Method::Get, "/orgs/{org}/hooks", "orgListHooks"),
                subject(Method::Get, "/user/hooks", "userListHooks"),
            ],
            "names: {userListHooks: forgejo_hook_list}\n",
        );
        assert_eq!(got, ["forgejo_hook_org_list", "forgejo_hook_list"]);
    }

    #[test]
    fn long_names_lose_trailing_words() {
        let id = "repoGetTheVeryLongAndWindingNameOfAnOperationThatNeverEndsAtAll";
        let got = names(&[subject(Method::Get, "/repos/{o}/{r}/x", id)], "{}");
        assert!(got[0].len() <= MAX_TOOL_NAME, "{}", got[0]);
        assert!(is_tool_name(&got[0]));
        assert_eq!(
            got[0],
            "forgejo_repo_get_the_very_long_and_winding_name_of_an_operation"
        );
    }

    #[test]
    fn tool_names_are_checked() {
        assert!(is_tool_name("forgejo_repo_get"));
        for bad in ["Forgejo", "a__b", "_a", "a_", "a-b", &"a".repeat(65)] {
            assert!(!is_tool_name(bad), "{bad}");
        }
    }
}
