//! The standard world of the fake forge, built from the JSON fixtures in `tests/fixtures/`
//! (written by the project, shaped like real Forgejo answers).
//!
//! | what | where |
//! |---|---|
//! | org `acme` with repos `widgets` (3 labels), `many-labels` (45), private `secret` | [`populate`] |
//! | org `acme` labels (2), org `bigorg` labels (35) | |
//! | commit [`SHA`] with a multi-line message, 35 statuses; commit [`SHA_FEW`] with 2 | |
//! | an unknown sha answers 200 with `state: ""` like the real forge | [`SHA_UNKNOWN`] |

use serde_json::{Value, json};

use super::fake_forge::{FakeForge, Reply};

pub const SHA: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432";
pub const SHA_FEW: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
pub const SHA_UNKNOWN: &str = "ffffffffffffffffffffffffffffffffffffffff";
pub const LABEL_ID: u64 = 335058;

/// A fixture file, parsed.
pub fn load(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `n` labels with ids from `first_id`, named `label-1` … `label-n`.
pub fn labels(scope: &str, first_id: u64, n: u64) -> Vec<Value> {
    let template = load("label.json");
    (1..=n)
        .map(|i| {
            let mut l = template.clone();
            l["id"] = json!(first_id + i - 1);
            l["name"] = json!(format!("label-{i}"));
            l["url"] = json!(format!(
                "http://fake/api/v1/{scope}/labels/{}",
                first_id + i - 1
            ));
            l
        })
        .collect()
}

/// `n` commit statuses, newest first, contexts `ci/job-1` … `ci/job-n`.
pub fn statuses(n: u64) -> Vec<Value> {
    let template = load("status.json");
    (1..=n)
        .map(|i| {
            let mut s = template.clone();
            s["id"] = json!(i);
            s["context"] = json!(format!("ci/job-{i}"));
            s
        })
        .collect()
}

pub fn populate(forge: &FakeForge) {
    forge.route("GET", "/version", Reply::Json(load("version.json")));
    forge.route(
        "GET",
        "/settings/api",
        Reply::Json(load("settings_api.json")),
    );

    let label = load("label.json");
    forge.route(
        "GET",
        &format!("/repos/acme/widgets/labels/{LABEL_ID}"),
        Reply::Json(label.clone()),
    );
    forge.route("GET", "/repos/acme/secret/labels/7", Reply::Json(label));
    forge.private_repo("acme/secret");
    forge.route(
        "GET",
        "/repos/acme/widgets/labels",
        Reply::List {
            items: labels("repos/acme/widgets", 100, 3),
            link: false,
        },
    );
    forge.route(
        "GET",
        "/repos/acme/many-labels/labels",
        Reply::List {
            items: labels("repos/acme/many-labels", 200, 45),
            link: false,
        },
    );
    forge.route(
        "GET",
        "/repos/acme/secret/labels",
        Reply::List {
            items: labels("repos/acme/secret", 300, 2),
            link: false,
        },
    );
    forge.route(
        "GET",
        "/orgs/acme/labels",
        Reply::List {
            items: labels("orgs/acme", 400, 2),
            link: false,
        },
    );
    forge.route(
        "GET",
        "/orgs/bigorg/labels",
        Reply::List {
            items: labels("orgs/bigorg", 500, 35),
            link: false,
        },
    );

    forge.route(
        "GET",
        &format!("/repos/acme/widgets/git/commits/{SHA}"),
        Reply::Json(load("commit.json")),
    );
    let mut combined = load("combined_status.json");
    combined["statuses"] = Value::Array(statuses(35));
    forge.route(
        "GET",
        &format!("/repos/acme/widgets/commits/{SHA}/status"),
        Reply::PagedObject {
            body: combined,
            inner: "statuses".into(),
        },
    );
    let mut few = load("combined_status.json");
    few["sha"] = json!(SHA_FEW);
    few["statuses"] = Value::Array(statuses(2));
    forge.route(
        "GET",
        &format!("/repos/acme/widgets/commits/{SHA_FEW}/status"),
        Reply::PagedObject {
            body: few,
            inner: "statuses".into(),
        },
    );
    let unknown = json!({"state": "", "sha": "", "total_count": 0, "statuses": null, "repository": null, "commit_url": "", "url": ""});
    forge.route(
        "GET",
        &format!("/repos/acme/widgets/commits/{SHA_UNKNOWN}/status"),
        Reply::Json(unknown),
    );
    forge.route(
        "GET",
        &format!("/repos/acme/widgets/statuses/{SHA}"),
        Reply::List {
            items: statuses(35),
            link: true,
        },
    );
    forge.route(
        "GET",
        "/repos/acme/widgets/releases/tags/v1.2.0",
        Reply::Json(load("release.json")),
    );
}
