//! The fake forge's world for the resource catalog: everything the catalog's resources read, the
//! `resources/list` source and the completion sources. Built from `tests/fixtures/catalog/`
//! (written by the project, shaped like Forgejo's answers) on top of the standard world.
//!
//! | what | route(s) | shape |
//! |---|---|---|
//! | org `acme`; user `alice`; `/users/acme` also answers, as the forge does | `/orgs/{name}`, `/users/{name}` | |
//! | repo `acme/widgets` | `/repos/acme/widgets` | |
//! | issue #12 with [`ISSUE_COMMENTS`] comments (ids from 1001, the last one long) | `…/issues/12`, `…/issues/12/comments` | thread ignores paging |
//! | issue #3 with 2 comments | `…/issues/3`, `…/issues/3/comments` | |
//! | PR #14 with [`PR_COMMENTS`] comments (ids from 2001) and [`PR_REVIEWS`] reviews (ids from 3001) | `…/pulls/14`, `…/issues/14`, `…/issues/14/comments`, `…/pulls/14/reviews` | reviews paged, `X-Total-Count` only |
//! | every comment above by id | `…/issues/comments/{id}` | |
//! | issues #12, #3, #5; pulls #14, #15 | `…/issues`, `…/pulls` | paged with `Link` |
//! | branch protection rules `main` and `release/*` | `…/branch_protections[/{name}]` | list whole |
//! | hooks 5 and 6, carrying [`HOOK_SECRETS`] | `…/hooks[/{id}]` | |
//! | wiki page `Home` ([`WIKI_REVISIONS`] revisions, 50 per answer), `Huge` (over the markdown cap) | `…/wiki/page/{name}`, `…/wiki/revisions/{name}` | |
//! | `src/lib.rs` ([`FILE_LINES`] lines), `assets/logo.png` (binary), `src/` ([`SRC_ENTRIES`] entries), root (3) | `…/contents[/{path}]` | directories whole |
//! | releases (3), release `team/v2.0`; milestones (2), milestone 1; branches `main`, `feature/login` | | |
//! | [`USER_REPOS`] repositories of the token's user | `/user/repos` | paged with `Link` |
//! | user search (alice, albert, bob), orgs (acme, anvil), repo search | `/users/search`, `/orgs`, `/repos/search` | |

use serde_json::{Value, json};

use super::fake_forge::{FakeForge, Reply};
use super::fixtures::load;

pub const ISSUE_COMMENTS: u64 = 45;
pub const PR_COMMENTS: u64 = 33;
pub const PR_REVIEWS: u64 = 35;
pub const WIKI_REVISIONS: u64 = 60;
/// How many revisions the forge puts in one answer (its fixed page size).
pub const WIKI_REVISIONS_PAGE: u64 = 50;
pub const FILE_LINES: u64 = 12;
pub const SRC_ENTRIES: u64 = 35;
pub const USER_REPOS: u64 = 60;
/// Strings set on the hooks that no output may ever contain.
pub const HOOK_SECRETS: [&str; 3] = [
    "hunter2-webhook-secret",
    "hook-auth-t0ken",
    "pa55word-in-url",
];
/// The body of the last comment of issue #12: longer than an excerpt.
pub fn long_body() -> String {
    "The cache keeps every widget. ".repeat(20)
}

/// The text of `src/lib.rs`: `// line 1` … `// line 12`.
pub fn lib_rs() -> String {
    (1..=FILE_LINES).map(|i| format!("// line {i}\n")).collect()
}

/// The markdown of the wiki page `Home`.
pub const WIKI_HOME: &str =
    "# Widgets\n\nThe cache keeps at most `cache.max_entries` widgets (1024 by default).\n";

/// The standard forge plus this world.
pub async fn forge() -> FakeForge {
    let forge = FakeForge::standard().await;
    populate(&forge);
    forge
}

fn fixture(name: &str) -> Value {
    load(&format!("catalog/{name}"))
}

fn user(id: u64, login: &str) -> Value {
    json!({"id": id, "login": login, "full_name": "", "email": format!("{login}@example.org"),
           "avatar_url": format!("http://fake/avatars/{id}"), "username": login})
}

/// Comments `first_id ..` of issue or pull request `index`, oldest first, an hour apart.
fn comments(index: u64, pull: bool, first_id: u64, n: u64) -> Vec<Value> {
    let template = fixture("comment.json");
    (0..n)
        .map(|i| {
            let id = first_id + i;
            let mut c = template.clone();
            c["id"] = json!(id);
            c["body"] = json!(format!("Comment {} on #{index}", i + 1));
            c["user"] = user(10 + i % 3, ["alice", "bob", "carol"][(i % 3) as usize]);
            let time = format!("2026-10-{:02}T{:02}:00:00Z", 3 + i / 24, i % 24);
            c["created_at"] = json!(time);
            c["updated_at"] = json!(time);
            let kind = if pull { "pulls" } else { "issues" };
            let parent = format!("http://fake/acme/widgets/{kind}/{index}");
            c["html_url"] = json!(format!("{parent}#issuecomment-{id}"));
            if pull {
                c["issue_url"] = json!("");
                c["pull_request_url"] = json!(parent);
            } else {
                c["issue_url"] = json!(parent);
                c["pull_request_url"] = json!("");
            }
            c
        })
        .collect()
}

fn reviews(n: u64) -> Vec<Value> {
    let template = fixture("review.json");
    (1..=n)
        .map(|i| {
            let mut r = template.clone();
            r["id"] = json!(3000 + i);
            r["body"] = json!(format!("Review {i}"));
            r["state"] = json!(if i == n { "APPROVED" } else { "COMMENT" });
            r["submitted_at"] = json!(format!("2026-11-{:02}T10:00:00Z", i % 28 + 1));
            r
        })
        .collect()
}

/// An issue as the list (and the issue endpoint) show it.
fn issue(number: u64, title: &str, comments: u64) -> Value {
    let mut i = fixture("issue.json");
    i["id"] = json!(9000 + number);
    i["number"] = json!(number);
    i["title"] = json!(title);
    i["comments"] = json!(comments);
    i["url"] = json!(format!(
        "http://fake/api/v1/repos/acme/widgets/issues/{number}"
    ));
    i["html_url"] = json!(format!("http://fake/acme/widgets/issues/{number}"));
    i
}

/// A pull request's issue view: an issue with `pull_request` set.
fn pull_as_issue(number: u64, comments: u64) -> Value {
    let mut i = issue(number, "Bound the widget cache by entry count", comments);
    i["html_url"] = json!(format!("http://fake/acme/widgets/pulls/{number}"));
    i["pull_request"] = json!({"merged": false, "merged_at": null, "draft": false,
                               "html_url": format!("http://fake/acme/widgets/pulls/{number}")});
    i
}

fn content_entry(path: &str, kind: &str, size: u64) -> Value {
    let mut e = fixture("file.json");
    let name = path.rsplit('/').next().unwrap_or(path);
    e["name"] = json!(name);
    e["path"] = json!(path);
    e["type"] = json!(kind);
    e["size"] = json!(size);
    // A directory listing carries no content.
    e["content"] = Value::Null;
    e["encoding"] = Value::Null;
    e
}

fn file(path: &str, bytes: &[u8]) -> Value {
    let mut f = content_entry(path, "file", bytes.len() as u64);
    f["content"] = json!(base64(bytes));
    f["encoding"] = json!("base64");
    f
}

fn repo(owner: &str, name: &str, id: u64) -> Value {
    let mut r = fixture("repo.json");
    r["id"] = json!(id);
    r["name"] = json!(name);
    r["full_name"] = json!(format!("{owner}/{name}"));
    r["owner"]["login"] = json!(owner);
    r["owner"]["username"] = json!(owner);
    r["description"] = json!(format!("Repository {name}"));
    r
}

pub fn populate(forge: &FakeForge) {
    owners(forge);
    threads(forge);
    repo_lists(forge);
    settings(forge);
    wiki(forge);
    contents(forge);
    discovery(forge);
}

fn owners(forge: &FakeForge) {
    forge.route("GET", "/orgs/acme", Reply::Json(fixture("org.json")));
    forge.route("GET", "/users/alice", Reply::Json(load("user.json")));
    // Forgejo answers the user lookup for an organization too, as a user.
    let mut acme_as_user = load("user.json");
    acme_as_user["id"] = json!(21);
    acme_as_user["login"] = json!("acme");
    acme_as_user["username"] = json!("acme");
    forge.route("GET", "/users/acme", Reply::Json(acme_as_user));
    forge.route(
        "GET",
        "/repos/acme/widgets",
        Reply::Json(fixture("repo.json")),
    );
}

fn threads(forge: &FakeForge) {
    let base = "/repos/acme/widgets";
    let mut long = comments(12, false, 1001, ISSUE_COMMENTS);
    long.last_mut().unwrap()["body"] = json!(long_body());
    let short = comments(3, false, 1101, 2);
    let pr = comments(14, true, 2001, PR_COMMENTS);
    for c in long.iter().chain(&short).chain(&pr) {
        forge.route(
            "GET",
            &format!("{base}/issues/comments/{}", c["id"]),
            Reply::Json(c.clone()),
        );
    }
    forge.route(
        "GET",
        &format!("{base}/issues/12"),
        Reply::Json(issue(
            12,
            "The widget cache grows without bound",
            ISSUE_COMMENTS,
        )),
    );
    forge.route(
        "GET",
        &format!("{base}/issues/12/comments"),
        Reply::Whole(long),
    );
    let mut three = issue(3, "Document the cache settings", 2);
    three["body"] = json!("Where is `max_entries` explained?");
    forge.route("GET", &format!("{base}/issues/3"), Reply::Json(three));
    forge.route(
        "GET",
        &format!("{base}/issues/3/comments"),
        Reply::Whole(short),
    );
    forge.route(
        "GET",
        &format!("{base}/issues/14"),
        Reply::Json(pull_as_issue(14, PR_COMMENTS)),
    );
    forge.route(
        "GET",
        &format!("{base}/issues/14/comments"),
        Reply::Whole(pr),
    );
    forge.route(
        "GET",
        &format!("{base}/pulls/14"),
        Reply::Json(fixture("pull.json")),
    );
    forge.route(
        "GET",
        &format!("{base}/pulls/14/reviews"),
        Reply::List {
            items: reviews(PR_REVIEWS),
            link: false,
        },
    );
}

fn repo_lists(forge: &FakeForge) {
    let base = "/repos/acme/widgets";
    let mut five = issue(5, "Start-up is slow", 0);
    five["labels"] = json!([]);
    forge.route(
        "GET",
        &format!("{base}/issues"),
        Reply::List {
            items: vec![
                issue(12, "The widget cache grows without bound", ISSUE_COMMENTS),
                issue(3, "Document the cache settings", 2),
                five,
            ],
            link: true,
        },
    );
    let mut fifteen = fixture("pull.json");
    fifteen["number"] = json!(15);
    fifteen["title"] = json!("Faster start-up");
    fifteen["draft"] = json!(true);
    fifteen["head"]["ref"] = json!("fast-start");
    // A branch of the same repository: its label is its name.
    fifteen["head"]["label"] = json!("fast-start");
    forge.route(
        "GET",
        &format!("{base}/pulls"),
        Reply::List {
            items: vec![fixture("pull.json"), fifteen],
            link: true,
        },
    );
    let mut releases = Vec::new();
    for (i, tag) in ["v1.2.0", "v1.1.0", "v1.0.0"].iter().enumerate() {
        let mut r = load("release.json");
        r["id"] = json!(42 - i as u64);
        r["tag_name"] = json!(tag);
        r["name"] = json!(format!("Widgets {}", &tag[1..]));
        releases.push(r);
    }
    forge.route(
        "GET",
        &format!("{base}/releases"),
        Reply::List {
            items: releases,
            link: true,
        },
    );
    let mut team = load("release.json");
    team["id"] = json!(50);
    team["tag_name"] = json!("team/v2.0");
    team["name"] = json!("Team preview 2.0");
    team["prerelease"] = json!(true);
    forge.route(
        "GET",
        &format!("{base}/releases/tags/team/v2.0"),
        Reply::Json(team),
    );
    let milestone = fixture("milestone.json");
    let mut closed = milestone.clone();
    closed["id"] = json!(2);
    closed["title"] = json!("1.2");
    closed["state"] = json!("closed");
    forge.route(
        "GET",
        &format!("{base}/milestones"),
        Reply::List {
            items: vec![milestone.clone(), closed],
            link: false,
        },
    );
    forge.route(
        "GET",
        &format!("{base}/milestones/1"),
        Reply::Json(milestone),
    );
    let main = fixture("branch.json");
    let mut feature = main.clone();
    feature["name"] = json!("feature/login");
    feature["protected"] = json!(false);
    feature["effective_branch_protection_name"] = json!("");
    feature["commit"]["message"] = json!("Log in with a token\n");
    forge.route(
        "GET",
        &format!("{base}/branches"),
        Reply::List {
            items: vec![main.clone(), feature.clone()],
            link: true,
        },
    );
    forge.route("GET", &format!("{base}/branches/main"), Reply::Json(main));
    forge.route(
        "GET",
        &format!("{base}/branches/feature/login"),
        Reply::Json(feature),
    );
}

fn settings(forge: &FakeForge) {
    let base = "/repos/acme/widgets";
    let main = fixture("branch_protection.json");
    let mut release = main.clone();
    release["rule_name"] = json!("release/*");
    release["branch_name"] = json!("release/*");
    release["required_approvals"] = json!(2);
    forge.route(
        "GET",
        &format!("{base}/branch_protections"),
        Reply::Whole(vec![main.clone(), release.clone()]),
    );
    forge.route(
        "GET",
        &format!("{base}/branch_protections/main"),
        Reply::Json(main),
    );
    forge.route(
        "GET",
        &format!("{base}/branch_protections/release/*"),
        Reply::Json(release),
    );
    let hook = fixture("hook.json");
    let mut other = hook.clone();
    other["id"] = json!(6);
    other["type"] = json!("gitea");
    other["active"] = json!(false);
    forge.route(
        "GET",
        &format!("{base}/hooks"),
        Reply::List {
            items: vec![hook.clone(), other],
            link: false,
        },
    );
    forge.route("GET", &format!("{base}/hooks/5"), Reply::Json(hook));
}

fn wiki(forge: &FakeForge) {
    let base = "/repos/acme/widgets/wiki";
    let mut home = fixture("wiki_page.json");
    home["content_base64"] = json!(base64(WIKI_HOME.as_bytes()));
    forge.route("GET", &format!("{base}/page/Home"), Reply::Json(home));
    // Newest first, at most one page of the forge's fixed size; `count` counts them all.
    let template = fixture("wiki_commit.json");
    let commits: Vec<Value> = (0..WIKI_REVISIONS_PAGE)
        .map(|i| {
            let n = WIKI_REVISIONS - i;
            let mut c = template.clone();
            c["sha"] = json!(format!("{:040x}", 0x5d00 + n));
            c["message"] = json!(format!("Revision {n} of Home\n\nDetails."));
            c
        })
        .collect();
    forge.route(
        "GET",
        &format!("{base}/revisions/Home"),
        Reply::Json(json!({"commits": commits, "count": WIKI_REVISIONS})),
    );
    let mut huge = fixture("wiki_page.json");
    huge["title"] = json!("Huge");
    huge["sub_url"] = json!("Huge");
    huge["content_base64"] = json!(base64("x".repeat(25_000).as_bytes()));
    forge.route("GET", &format!("{base}/page/Huge"), Reply::Json(huge));
    forge.route(
        "GET",
        &format!("{base}/revisions/Huge"),
        Reply::Json(json!({"commits": [template], "count": 1})),
    );
}

fn contents(forge: &FakeForge) {
    let base = "/repos/acme/widgets/contents";
    forge.route(
        "GET",
        &format!("{base}/src/lib.rs"),
        Reply::Json(file("src/lib.rs", lib_rs().as_bytes())),
    );
    let png = [
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe,
    ];
    forge.route(
        "GET",
        &format!("{base}/assets/logo.png"),
        Reply::Json(file("assets/logo.png", &png)),
    );
    let entries: Vec<Value> = (1..=SRC_ENTRIES)
        .map(|i| content_entry(&format!("src/mod_{i:02}.rs"), "file", 100 + i))
        .collect();
    forge.route("GET", &format!("{base}/src"), Reply::Whole(entries));
    forge.route(
        "GET",
        base,
        Reply::Whole(vec![
            content_entry("README.md", "file", 240),
            content_entry("assets", "dir", 0),
            content_entry("src", "dir", 0),
        ]),
    );
}

fn discovery(forge: &FakeForge) {
    let repos: Vec<Value> = (1..=USER_REPOS)
        .map(|i| repo("alice", &format!("project-{i:02}"), 1000 + i))
        .collect();
    forge.route(
        "GET",
        "/user/repos",
        Reply::List {
            items: repos,
            link: true,
        },
    );
    forge.route(
        "GET",
        "/users/search",
        Reply::Json(
            json!({"ok": true, "data": [user(7, "alice"), user(12, "albert"), user(8, "bob")]}),
        ),
    );
    let mut anvil = fixture("org.json");
    anvil["id"] = json!(22);
    anvil["name"] = json!("anvil");
    anvil["username"] = json!("anvil");
    forge.route(
        "GET",
        "/orgs",
        Reply::List {
            items: vec![fixture("org.json"), anvil],
            link: false,
        },
    );
    forge.route(
        "GET",
        "/repos/search",
        Reply::Json(json!({"ok": true, "data": [
            repo("acme", "widgets", 101),
            repo("acme", "wombat", 103),
            repo("bob", "widgets-fork", 102),
        ]})),
    );
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
