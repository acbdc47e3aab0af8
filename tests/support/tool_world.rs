//! The world the curated tools are tested against: one answer for every read tool of
//! `tools.yaml`, at the arguments of [`sample_args`], plus the write endpoints the write tests
//! call. Fixtures are in `tests/fixtures/tools/` (written by the project, shaped like Forgejo
//! 15 answers).
//!
//! | what | where |
//! |---|---|
//! | org `acme` (team 5, hook 5, label 5) with repo `acme/widgets` | [`populate`] |
//! | issue and pull request 12, comment/review/milestone/release 5, attachment 9, run 3 | |
//! | user `alice`; user `carol` whose repositories page only by `Link` (45 of them) | |
//! | webhook 5 whose config carries [`HOOK_SECRET`] and [`HOOK_AUTH`] | |

use serde_json::{Map, Value, json};

use super::fake_forge::{FakeForge, Reply};
use super::fixtures::{SHA, load, statuses};

/// A webhook secret the fixtures carry and no tool may return.
pub const HOOK_SECRET: &str = "hook-secret-DO-NOT-LEAK-71f3";
/// A webhook authorization header the fixtures carry and no tool may return.
pub const HOOK_AUTH: &str = "auth-header-DO-NOT-LEAK-9c2e";

/// A fixture of `tests/fixtures/tools/`, parsed.
pub fn tool_fixture(name: &str) -> Value {
    load(&format!("tools/{name}"))
}

/// Starts a fake forge with the standard world and this one.
pub async fn forge() -> FakeForge {
    let forge = FakeForge::standard().await;
    populate(&forge);
    forge
}

/// `n` copies of `template` with ids from `first_id` and `field` set to `{prefix}-{i}`.
pub fn many(template: &Value, first_id: u64, n: u64, field: &str, prefix: &str) -> Vec<Value> {
    (1..=n)
        .map(|i| {
            let mut v = template.clone();
            v["id"] = json!(first_id + i - 1);
            v[field] = json!(format!("{prefix}-{i}"));
            v
        })
        .collect()
}

fn user(login: &str, id: u64) -> Value {
    let mut u = load("user.json");
    u["id"] = json!(id);
    u["login"] = json!(login);
    u["username"] = json!(login);
    u["html_url"] = json!(format!("http://fake/{login}"));
    u
}

fn repo(full_name: &str) -> Value {
    let mut r = tool_fixture("repo.json");
    let (owner, name) = full_name.split_once('/').unwrap();
    r["full_name"] = json!(full_name);
    r["name"] = json!(name);
    r["owner"]["login"] = json!(owner);
    r["html_url"] = json!(format!("http://fake/{full_name}"));
    r
}

/// Valid arguments for a read tool: the world answers every read tool called with them.
/// Arguments are chosen by name; [`OVERRIDES`] holds the few per-tool exceptions.
pub fn sample_args(tool: &str, required: &[String]) -> Result<Value, String> {
    let mut args = Map::new();
    for name in required {
        let over = OVERRIDES
            .iter()
            .find(|(t, n, _)| *t == tool && n == name)
            .map(|(_, _, v)| json!(v));
        let value = match over {
            Some(v) => v,
            None => match name.as_str() {
                "owner" | "org" => json!("acme"),
                "repo" => json!("widgets"),
                "username" => json!("alice"),
                "collaborator" => json!("bob"),
                "index" => json!(12),
                "id" => json!(5),
                "attachment_id" => json!(9),
                "run_id" => json!(3),
                "sha" => json!(SHA),
                "ref" | "branch" | "name" | "base" => json!("main"),
                "head" => json!("feature"),
                "tag" => json!("v1.2.0"),
                "path" => json!("src"),
                "basehead" => json!("main...feature"),
                "page_name" => json!("Home"),
                "job_id" => json!(42),
                "variable_name" => json!("DEPLOY_ENV"),
                "q" => json!("widget"),
                other => return Err(format!("{tool}: no sample value for `{other}`")),
            },
        };
        args.insert(name.clone(), value);
    }
    Ok(Value::Object(args))
}

/// (tool, argument, value) where the value by name does not fit.
const OVERRIDES: &[(&str, &str, &str)] = &[
    ("get_repo_tree", "sha", "main"),
    ("get_file_metadata", "path", "src/lib.rs"),
    ("get_file_contents", "path", "src/lib.rs"),
];

/// Registers every answer of this world.
pub fn populate(forge: &FakeForge) {
    let r = |path: &str, reply: Reply| {
        forge.route("GET", path, reply);
    };
    // Text answers: a file, a pull request's and a commit's diff, a job's log, a wiki page.
    let diff = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-a\n+b\n";
    r(
        "/repos/acme/widgets/raw/src/lib.rs",
        Reply::Text("fn main() {}\n".into()),
    );
    r(
        "/repos/acme/widgets/pulls/12.diff",
        Reply::Text(diff.into()),
    );
    r(
        &format!("/repos/acme/widgets/git/commits/{SHA}.diff"),
        Reply::Text(diff.into()),
    );
    r(
        "/repos/acme/widgets/actions/jobs/42/logs",
        Reply::Text("step 1\nstep 2\n".into()),
    );
    let list = |items: Vec<Value>| Reply::List { items, link: false };
    let linked = |items: Vec<Value>| Reply::List { items, link: true };
    let paged_object = |body: Value, inner: &str| Reply::PagedObject {
        body,
        inner: inner.into(),
    };
    let w = "/repos/acme/widgets";

    let alice = load("user.json");
    let users = vec![alice.clone(), user("bob", 8), user("dave", 10)];
    let widgets = tool_fixture("repo.json");
    let repos = vec![widgets.clone(), repo("acme/gadgets"), repo("acme/gizmos")];

    // user
    r("/user", Reply::Json(alice.clone()));
    r("/users/alice", Reply::Json(alice.clone()));
    r("/user/repos", linked(repos.clone()));
    r("/users/alice/repos", linked(repos.clone()));
    let carol_repos: Vec<Value> = (1..=45).map(|i| repo(&format!("carol/r{i}"))).collect();
    r("/users/carol/repos", Reply::LinkOnly(carol_repos));
    r("/user/starred", linked(repos.clone()));
    r("/users/alice/followers", linked(users[1..].to_vec()));
    r("/users/alice/following", linked(users[1..2].to_vec()));

    // notifications
    let notification = tool_fixture("notification.json");
    r("/notifications", linked(vec![notification.clone()]));
    r(
        &format!("{w}/notifications"),
        linked(vec![notification.clone()]),
    );
    r("/notifications/threads/5", Reply::Json(notification));
    r("/notifications/new", Reply::Json(json!({"new": 2})));

    // search
    r(
        "/users/search",
        paged_object(json!({"ok": true, "data": users.clone()}), "data"),
    );
    r(
        "/repos/search",
        paged_object(json!({"ok": true, "data": repos.clone()}), "data"),
    );
    let team = tool_fixture("team.json");
    r(
        "/orgs/acme/teams/search",
        paged_object(json!({"ok": true, "data": [team.clone()]}), "data"),
    );
    let issue = tool_fixture("issue.json");
    r("/repos/issues/search", linked(vec![issue.clone()]));
    r(
        "/topics/search",
        paged_object(
            json!({"topics": [{"id": 1, "topic_name": "widgets", "repo_count": 4,
                "created": "2024-03-01T10:00:00Z", "updated": "2026-11-01T10:00:00Z"}]}),
            "topics",
        ),
    );

    // repos
    r(w, Reply::Json(widgets.clone()));
    r("/orgs/acme/repos", linked(repos.clone()));
    r(&format!("{w}/forks"), linked(vec![repo("bob/widgets")]));
    r(
        &format!("{w}/topics"),
        paged_object(json!({"topics": ["widgets", "rust"]}), "topics"),
    );
    r(
        &format!("{w}/languages"),
        Reply::Json(json!({"Rust": 40960, "Shell": 512})),
    );
    r(&format!("{w}/collaborators"), linked(users[1..].to_vec()));
    r(
        &format!("{w}/collaborators/bob/permission"),
        Reply::Json(json!({"permission": "write", "role_name": "write", "user": users[1]})),
    );
    r(&format!("{w}/assignees"), Reply::Whole(users.clone()));
    r(&format!("{w}/stargazers"), linked(users.clone()));

    // branches and tags
    let branch = tool_fixture("branch.json");
    let mut feature = branch.clone();
    feature["name"] = json!("feature");
    feature["protected"] = json!(false);
    r(
        &format!("{w}/branches"),
        linked(vec![branch.clone(), feature]),
    );
    r(&format!("{w}/branches/main"), Reply::Json(branch));
    let protection = tool_fixture("branch_protection.json");
    r(
        &format!("{w}/branch_protections"),
        Reply::Whole(vec![protection.clone()]),
    );
    r(
        &format!("{w}/branch_protections/main"),
        Reply::Json(protection),
    );
    let tag = tool_fixture("tag.json");
    r(&format!("{w}/tags"), linked(vec![tag.clone()]));
    r(&format!("{w}/tags/v1.2.0"), Reply::Json(tag));

    // files
    let file = tool_fixture("content_file.json");
    let mut dir = file.clone();
    for key in ["content", "encoding"] {
        dir[key] = Value::Null;
    }
    dir["name"] = json!("src");
    dir["path"] = json!("src");
    dir["type"] = json!("dir");
    let mut entry = file.clone();
    for key in ["content", "encoding"] {
        entry[key] = Value::Null;
    }
    r(&format!("{w}/contents"), Reply::Whole(vec![dir]));
    r(&format!("{w}/contents/src"), Reply::Whole(vec![entry]));
    r(&format!("{w}/contents/src/lib.rs"), Reply::Json(file));
    r(
        &format!("{w}/git/trees/main"),
        Reply::Json(tool_fixture("tree.json")),
    );

    // commits
    let commit = load("commit.json");
    r(&format!("{w}/commits"), linked(vec![commit.clone()]));
    let mut combined = load("combined_status.json");
    combined["statuses"] = Value::Array(statuses(35));
    r(
        &format!("{w}/commits/main/status"),
        paged_object(combined, "statuses"),
    );
    r(
        &format!("{w}/compare/main...feature"),
        Reply::Json(json!({"total_commits": 1, "commits": [commit], "files": []})),
    );
    let pull = tool_fixture("pull.json");
    r(
        &format!("{w}/commits/{SHA}/pull"),
        Reply::Json(pull.clone()),
    );

    // issues
    let mut closed = issue.clone();
    closed["number"] = json!(11);
    closed["state"] = json!("closed");
    closed["title"] = json!("Render widgets in the dark theme");
    r(&format!("{w}/issues"), linked(vec![issue.clone(), closed]));
    r(&format!("{w}/issues/12"), Reply::Json(issue.clone()));
    let comment = tool_fixture("comment.json");
    let comments = many(&comment, 77001, 3, "body", "comment");
    r(
        &format!("{w}/issues/12/comments"),
        Reply::Whole(comments.clone()),
    );
    r(&format!("{w}/issues/comments"), linked(comments));
    r(&format!("{w}/issues/comments/5"), Reply::Json(comment));
    r(
        &format!("{w}/issues/12/timeline"),
        linked(vec![tool_fixture("timeline_event.json")]),
    );
    r(
        &format!("{w}/issues/12/dependencies"),
        linked(vec![issue.clone()]),
    );
    let reaction = json!({"user": users[1], "content": "+1", "created_at": "2026-11-03T11:00:00Z"});
    r(
        &format!("{w}/issues/12/reactions"),
        linked(vec![reaction.clone()]),
    );
    r(
        &format!("{w}/issues/comments/5/reactions"),
        Reply::Whole(vec![reaction]),
    );

    // labels
    let label = load("label.json");
    r(&format!("{w}/labels/5"), Reply::Json(label.clone()));
    r("/orgs/acme/labels/5", Reply::Json(label));
    r(
        &format!("{w}/issues/12/labels"),
        Reply::Whole(issue["labels"].as_array().unwrap().clone()),
    );

    // milestones
    let milestone = tool_fixture("milestone.json");
    r(&format!("{w}/milestones"), list(vec![milestone.clone()]));
    r(&format!("{w}/milestones/5"), Reply::Json(milestone));

    // pulls and reviews
    r(&format!("{w}/pulls"), linked(vec![pull.clone()]));
    r(&format!("{w}/pulls/12"), Reply::Json(pull.clone()));
    r(&format!("{w}/pulls/main/feature"), Reply::Json(pull));
    r(
        &format!("{w}/pulls/12/commits"),
        linked(vec![load("commit.json")]),
    );
    r(
        &format!("{w}/pulls/12/files"),
        linked(vec![tool_fixture("changed_file.json")]),
    );
    let review = tool_fixture("review.json");
    r(&format!("{w}/pulls/12/reviews"), list(vec![review.clone()]));
    r(&format!("{w}/pulls/12/reviews/5"), Reply::Json(review));
    r(
        &format!("{w}/pulls/12/reviews/5/comments"),
        Reply::Whole(vec![tool_fixture("review_comment.json")]),
    );
    r(&format!("{w}/reviewers"), Reply::Whole(users.clone()));

    // actions
    let run = tool_fixture("action_run.json");
    r(
        &format!("{w}/actions/runs"),
        paged_object(
            json!({"total_count": 1, "workflow_runs": [run.clone()]}),
            "workflow_runs",
        ),
    );
    r(&format!("{w}/actions/runs/3"), Reply::Json(run));
    r(
        &format!("{w}/actions/runs/3/jobs"),
        paged_object(
            json!({"total_count": 1, "jobs": [tool_fixture("action_job.json")]}),
            "jobs",
        ),
    );
    r(
        &format!("{w}/actions/tasks"),
        paged_object(
            json!({"total_count": 1, "workflow_runs": [tool_fixture("action_task.json")]}),
            "workflow_runs",
        ),
    );
    let variable = json!({"owner_id": 0, "repo_id": 21, "name": "DEPLOY_ENV", "data": "staging"});
    r(
        &format!("{w}/actions/variables"),
        list(vec![variable.clone()]),
    );
    r(
        &format!("{w}/actions/variables/DEPLOY_ENV"),
        Reply::Json(variable),
    );
    r(
        &format!("{w}/actions/secrets"),
        list(vec![
            json!({"name": "REGISTRY_TOKEN", "created_at": "2026-01-01T00:00:00Z"}),
        ]),
    );

    // orgs and teams
    let org = tool_fixture("org.json");
    r("/orgs/acme", Reply::Json(org.clone()));
    r("/orgs", list(vec![org.clone()]));
    r("/user/orgs", list(vec![org.clone()]));
    r("/users/alice/orgs", list(vec![org]));
    r("/orgs/acme/members", list(users.clone()));
    r("/orgs/acme/public_members", list(users[..1].to_vec()));
    r(
        "/users/alice/orgs/acme/permissions",
        Reply::Json(
            json!({"is_owner": true, "is_admin": true, "can_write": true,
            "can_read": true, "can_create_repository": true}),
        ),
    );
    r("/orgs/acme/teams", list(vec![team.clone()]));
    r("/teams/5", Reply::Json(team.clone()));
    r("/teams/5/members", list(users.clone()));
    r("/teams/5/repos", list(repos));
    r("/user/teams", list(vec![team.clone()]));
    r(&format!("{w}/teams"), Reply::Whole(vec![team]));

    // releases
    let release = tool_fixture("release.json");
    r(&format!("{w}/releases"), linked(vec![release.clone()]));
    r(&format!("{w}/releases/5"), Reply::Json(release.clone()));
    r(
        &format!("{w}/releases/tags/v1.2.0"),
        Reply::Json(release.clone()),
    );
    r(
        &format!("{w}/releases/latest"),
        Reply::Json(release.clone()),
    );
    let attachment = release["assets"][0].clone();
    r(
        &format!("{w}/releases/5/assets"),
        Reply::Whole(vec![attachment.clone()]),
    );
    r(&format!("{w}/releases/5/assets/9"), Reply::Json(attachment));

    // wiki
    let page = tool_fixture("wiki_page.json");
    let mut meta = page.clone();
    if let Some(m) = meta.as_object_mut() {
        for key in ["content_base64", "commit_count", "sidebar", "footer"] {
            m.remove(key);
        }
    }
    r(&format!("{w}/wiki/pages"), list(vec![meta]));
    r(&format!("{w}/wiki/page/Home"), Reply::Json(page));
    let revisions = many(&tool_fixture("wiki_commit.json"), 1, 3, "sha", "rev");
    r(
        &format!("{w}/wiki/revisions/Home"),
        paged_object(json!({"commits": revisions, "count": 3}), "commits"),
    );

    // time
    let time = tool_fixture("tracked_time.json");
    r(&format!("{w}/issues/12/times"), list(vec![time.clone()]));
    r(&format!("{w}/times"), list(vec![time.clone()]));
    r("/user/times", list(vec![time]));
    r(
        "/user/stopwatches",
        list(vec![tool_fixture("stopwatch.json")]),
    );

    // hooks
    let hook = tool_fixture("hook.json");
    r(&format!("{w}/hooks"), list(vec![hook.clone()]));
    r(&format!("{w}/hooks/5"), Reply::Json(hook.clone()));
    r("/orgs/acme/hooks", list(vec![hook.clone()]));
    r("/orgs/acme/hooks/5", Reply::Json(hook));

    // misc
    r(
        "/licenses",
        Reply::Whole(vec![
            json!({"key": "mit", "name": "MIT License", "url": "http://fake/api/v1/licenses/mit"}),
        ]),
    );
    r(
        "/gitignore/templates",
        Reply::Whole(vec![json!("Rust"), json!("Go")]),
    );

    write_routes(forge);
}

/// The answers of the writes the write tests make.
fn write_routes(forge: &FakeForge) {
    let w = "/repos/acme/widgets";
    let label = load("label.json");
    let issue = tool_fixture("issue.json");
    forge.route("POST", &format!("{w}/issues"), Reply::Json(issue.clone()));
    forge.route(
        "POST",
        &format!("{w}/issues/12/comments"),
        Reply::Json(tool_fixture("comment.json")),
    );
    forge.route(
        "POST",
        &format!("{w}/issues/12/labels"),
        Reply::Json(issue["labels"].clone()),
    );
    forge.route(
        "DELETE",
        &format!("{w}/issues/12/labels/kind/bug"),
        Reply::NoContent,
    );
    forge.route("POST", &format!("{w}/labels"), Reply::Json(label.clone()));
    forge.route("PATCH", &format!("{w}/labels/5"), Reply::Json(label));
    forge.route("DELETE", &format!("{w}/labels/5"), Reply::NoContent);
    forge.route(
        "POST",
        &format!("{w}/pulls/12/merge"),
        Reply::Raw {
            status: 200,
            content_type: "text/plain".into(),
            body: Vec::new(),
        },
    );
    forge.route(
        "POST",
        &format!("{w}/releases"),
        Reply::Json(tool_fixture("release.json")),
    );
    forge.route(
        "POST",
        &format!("{w}/hooks"),
        Reply::Json(tool_fixture("hook.json")),
    );
    forge.route(
        "PATCH",
        &format!("{w}/issues/12"),
        Reply::Json(tool_fixture("issue.json")),
    );
    forge.route(
        "DELETE",
        &format!("{w}/contents/src/lib.rs"),
        Reply::Json(json!({"content": null, "commit": {"sha": SHA, "html_url": "http://fake/c"}})),
    );
}
