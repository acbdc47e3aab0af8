//! The forge answers the benches measure against: one repository `acme/widgets` with an issue
//! carrying 30 comments, a pull request with comments and reviews, 20 labels and a commit.
//!
//! The shapes are those a real Forgejo sends, not the trimmed ones some test fixtures use: every
//! user is the full user object (the forge never sends a short form), and a pull request's
//! `base.repo` and `head.repo` are full repositories. That matters for the byte ratios: a
//! trimmed raw body would flatter nothing but make the comparison meaningless. The JSON
//! fixtures of `tests/fixtures/` are the starting point; bodies and counts are generated here,
//! deterministically, so every run serves the same bytes.

use serde_json::{Value, json};

pub const OWNER: &str = "acme";
pub const REPO: &str = "widgets";
pub const ISSUE: u64 = 12;
pub const PULL: u64 = 7;
pub const SHA: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432";
/// Comments on the issue: the "issue with 30 embedded comments" of the targets.
pub const ISSUE_COMMENTS: usize = 30;
pub const PULL_COMMENTS: usize = 12;
pub const PULL_REVIEWS: usize = 4;
pub const LABELS: usize = 20;

/// A fixture of `tests/fixtures/`, parsed.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const LOGINS: [&str; 5] = ["alice", "bob", "carol", "dmitri", "eve"];

/// The full user object for `login`, as the forge embeds it everywhere.
pub fn user(login: &str) -> Value {
    let mut u = fixture("user.json");
    let id = 7 + LOGINS.iter().position(|l| *l == login).unwrap_or(9) as u64;
    u["id"] = json!(id);
    u["login"] = json!(login);
    u["username"] = json!(login);
    u["full_name"] = json!(format!(
        "{}{} Example",
        login[..1].to_uppercase(),
        &login[1..]
    ));
    u["email"] = json!(format!("{login}@example.org"));
    u["avatar_url"] = json!(format!("http://fake/avatars/{id}"));
    u["html_url"] = json!(format!("http://fake/{login}"));
    u
}

/// Prose of roughly `chars` characters, varied by `seed`: comments and descriptions need
/// bodies of realistic length (some past the 280-character excerpt, some short).
pub fn prose(seed: usize, chars: usize) -> String {
    const SENTENCES: [&str; 8] = [
        "The cache keeps every rendered widget until the process exits.",
        "On a long session that is several hundred megabytes.",
        "A bound by entry count is the simplest fix; a bound by bytes would be fairer.",
        "I measured the eviction with `cargo bench` and it stays flat up to 10k entries.",
        "Could we make the limit configurable through `WIDGETS_CACHE_MAX`?",
        "The least recently used entry goes first, which matches what the docs promise.",
        "See the trace below:\n\n```\nwidget::cache::insert (1024 entries)\nwidget::cache::evict oldest=17\n```",
        "Thanks, this reproduces here too on 1.2.0 and on main.",
    ];
    let mut out = String::new();
    let mut i = seed;
    while out.len() < chars {
        if !out.is_empty() {
            out.push_str(if i.is_multiple_of(3) { "\n\n" } else { " " });
        }
        out.push_str(SENTENCES[i % SENTENCES.len()]);
        i += 1;
    }
    out
}

fn label(id: u64, name: &str, color: &str, description: &str) -> Value {
    let mut l = fixture("label.json");
    l["id"] = json!(id);
    l["name"] = json!(name);
    l["color"] = json!(color);
    l["description"] = json!(description);
    l["url"] = json!(format!(
        "http://fake/api/v1/repos/{OWNER}/{REPO}/labels/{id}"
    ));
    l
}

/// The repository's labels.
pub fn labels() -> Vec<Value> {
    (0..LABELS as u64)
        .map(|i| {
            label(
                335_058 + i,
                &format!("area/part-{i}"),
                "d73a4a",
                &format!("Work on part {i} of the widgets"),
            )
        })
        .collect()
}

/// The issue, with `comments` as its comment count.
pub fn issue(comments: usize) -> Value {
    let mut i = fixture("tools/issue.json");
    i["user"] = user("alice");
    i["assignee"] = user("bob");
    i["assignees"] = json!([user("bob"), user("carol")]);
    i["body"] = json!(prose(0, 1200));
    i["comments"] = json!(comments);
    let ls = labels();
    i["labels"] = json!([ls[0], ls[3], ls[7]]);
    i
}

/// `n` comments on issue `index`, oldest first.
pub fn comments(index: u64, n: usize) -> Vec<Value> {
    let template = fixture("tools/comment.json");
    (0..n)
        .map(|k| {
            let mut c = template.clone();
            let id = 77_001 + k as u64;
            c["id"] = json!(id);
            c["user"] = user(LOGINS[k % LOGINS.len()]);
            // Lengths cycle through short notes, paragraphs and long write-ups.
            c["body"] = json!(prose(k, [60, 200, 450, 900][k % 4]));
            c["html_url"] = json!(format!(
                "http://fake/{OWNER}/{REPO}/issues/{index}#issuecomment-{id}"
            ));
            c["issue_url"] = json!(format!("http://fake/{OWNER}/{REPO}/issues/{index}"));
            let stamp = format!("2026-11-{:02}T{:02}:00:00Z", 3 + k / 24, k % 24);
            c["created_at"] = json!(stamp);
            c["updated_at"] = json!(stamp);
            c
        })
        .collect()
}

/// The repository.
pub fn repo() -> Value {
    let mut r = fixture("tools/repo.json");
    r["owner"] = user(OWNER);
    r
}

/// The pull request, with full repositories in `base` and `head`.
pub fn pull() -> Value {
    let mut p = fixture("tools/pull.json");
    p["number"] = json!(PULL);
    p["url"] = json!(format!(
        "http://fake/api/v1/repos/{OWNER}/{REPO}/pulls/{PULL}"
    ));
    p["html_url"] = json!(format!("http://fake/{OWNER}/{REPO}/pulls/{PULL}"));
    p["user"] = user("bob");
    p["body"] = json!(prose(3, 900));
    p["comments"] = json!(PULL_COMMENTS);
    p["requested_reviewers"] = json!([user("alice")]);
    p["assignee"] = user("alice");
    p["assignees"] = json!([user("alice")]);
    let ls = labels();
    p["labels"] = json!([ls[0]]);
    let base = repo();
    let mut head = repo();
    head["id"] = json!(31);
    head["owner"] = user("bob");
    head["full_name"] = json!("bob/widgets");
    head["fork"] = json!(true);
    p["base"]["repo"] = base;
    p["head"]["repo"] = head;
    p
}

/// The pull request's reviews, oldest first.
pub fn reviews() -> Vec<Value> {
    let template = fixture("tools/review.json");
    (0..PULL_REVIEWS)
        .map(|k| {
            let mut r = template.clone();
            r["id"] = json!(61 + k as u64);
            r["user"] = user(LOGINS[k % LOGINS.len()]);
            r["body"] = json!(prose(k + 2, 150 + 100 * k));
            r["state"] = json!(["COMMENT", "REQUEST_CHANGES", "COMMENT", "APPROVED"][k % 4]);
            r
        })
        .collect()
}

/// The commit `SHA`, with its stats.
pub fn commit() -> Value {
    let mut c = fixture("commit.json");
    c["author"] = user("alice");
    c["stats"] = json!({"total": 46, "additions": 40, "deletions": 6});
    c
}
