//! The policy for answers whose fields no manifest describes: a generated tool's and the escape
//! hatch's, which pass the forge's JSON on unshaped. What the manifests say field by field for
//! curated answers is said here once, by the shape of the forge's objects:
//!
//! - **secrets**: members named like a credential ([`SECRET_KEYS`]) are removed, wherever they
//!   are (a webhook's secret and authorization header, a mirror's password);
//! - **who wrote what**: an object written by someone names them in an author member
//!   ([`AUTHOR_KEYS`], holding an account with a `login`); its text, and that of the objects
//!   inside it, is theirs. Text outside any such object is by an account the answer does not
//!   name. What the forge itself writes (dates, addresses, states, shas: [`forge_written`]) is
//!   no one's text;
//! - **which repository**: an item of a list is about the repository its `repository` member
//!   names, or about itself when it is a repository (`full_name` beside an `owner` account).

use serde_json::{Map, Value};

use super::withhold::{Verdicts, Withheld};
use crate::forge::allow::AllowList;

/// Members that hold credentials: never shown.
pub const SECRET_KEYS: &[&str] = &[
    "secret",
    "authorization_header",
    "password",
    "auth_password",
    "auth_token",
    "access_token",
    "refresh_token",
    "client_secret",
    "private_key",
];

/// Members that name who wrote the object they are in, most telling first.
pub const AUTHOR_KEYS: &[&str] = &[
    "user",
    "poster",
    "author",
    "sender",
    "trigger_user",
    "actor",
    "uploader",
    "creator",
    "publisher",
    "owner",
];

/// The members of an account kept whoever it is: who it is, not what it wrote about itself.
const IDENTITY_KEYS: &[&str] = &["login", "username", "login_name"];

/// Whether a member's text is written by the forge itself rather than by an account: dates,
/// addresses, states, kinds, hashes and versions.
pub fn forge_written(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "url",
        "sha",
        "id",
        "state",
        "type",
        "status",
        "version",
        "permission",
        "visibility",
        "created",
        "updated",
        "timestamp",
        "encoding",
        "content_type",
        "mime_type",
        "color",
        "event",
        "conclusion",
        "op_type",
        "ref_type",
        "object_format_name",
    ];
    EXACT.contains(&key)
        || ["_at", "_url", "_sha", "_id", "_date", "_type"]
            .iter()
            .any(|suffix| key.ends_with(suffix))
}

/// Removes every member named like a credential, at any depth.
pub fn strip_secrets(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| {
                !SECRET_KEYS
                    .iter()
                    .any(|secret| key.eq_ignore_ascii_case(secret))
            });
            map.values_mut().for_each(strip_secrets);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_secrets),
        _ => {}
    }
}

/// The login of the account that wrote `object`, by its author members.
fn author_of(object: &Map<String, Value>) -> Option<&str> {
    AUTHOR_KEYS.iter().find_map(|key| {
        let account = object.get(*key)?.as_object()?;
        IDENTITY_KEYS
            .iter()
            .find_map(|k| account.get(*k).and_then(Value::as_str))
            .filter(|login| !login.is_empty())
    })
}

/// Every account named as an author in `value`, each once.
pub fn authors(value: &Value) -> Vec<String> {
    fn walk<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
        match value {
            Value::Object(map) => {
                out.extend(author_of(map));
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &mut found);
    let mut logins: Vec<String> = found.into_iter().map(str::to_owned).collect();
    logins.sort();
    logins.dedup();
    logins
}

/// Withholds every text of `value` lockdown does not keep: what an account without write
/// access wrote, and what no one is named for.
pub fn withhold(value: &mut Value, verdicts: &Verdicts) -> Vec<Withheld> {
    let mut withheld = Vec::new();
    walk(value, None, "", verdicts, &mut withheld);
    withheld.sort();
    withheld.dedup();
    withheld
}

/// `author`: the account that wrote the enclosing object, with whether it is trusted; `None`
/// outside any written object.
fn walk(
    value: &mut Value,
    author: Option<(&str, bool)>,
    at: &str,
    verdicts: &Verdicts,
    withheld: &mut Vec<Withheld>,
) {
    match value {
        Value::Object(map) => {
            let own = author_of(map).map(|login| (login.to_owned(), (verdicts.trusts)(login)));
            let author = match &own {
                Some((login, trusted)) => Some((login.as_str(), *trusted)),
                None => author,
            };
            let account_keys: Vec<String> = AUTHOR_KEYS
                .iter()
                .filter(|k| map.get(**k).is_some_and(Value::is_object))
                .map(|k| (*k).to_owned())
                .collect();
            for (key, member) in map.iter_mut() {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                match member {
                    Value::String(_) if forge_written(key) => {}
                    Value::String(text) => {
                        if withhold_text(text, author, verdicts) {
                            withheld.push(Withheld {
                                at: at.to_owned(),
                                who: author.map(|(login, _)| login.to_owned()),
                            });
                        }
                    }
                    // An account keeps who it is; what it says of itself is its own text.
                    Value::Object(account) if account_keys.contains(key) => {
                        let owner = author_of_account(account)
                            .map(|login| (login.to_owned(), (verdicts.trusts)(login)));
                        let owner = owner.as_ref().map(|(l, t)| (l.as_str(), *t));
                        for (k, v) in account.iter_mut() {
                            match v {
                                Value::String(_)
                                    if IDENTITY_KEYS.contains(&k.as_str()) || forge_written(k) => {}
                                Value::String(text) => {
                                    if withhold_text(text, owner, verdicts) {
                                        withheld.push(Withheld {
                                            at: path.clone(),
                                            who: owner.map(|(l, _)| l.to_owned()),
                                        });
                                    }
                                }
                                other => walk(other, owner, &path, verdicts, withheld),
                            }
                        }
                    }
                    other => walk(other, author, &path, verdicts, withheld),
                }
            }
        }
        Value::Array(items) => {
            let at = format!("{at}[]");
            for item in items {
                match item {
                    Value::String(text) => {
                        if withhold_text(text, author, verdicts) {
                            withheld.push(Withheld {
                                at: at.clone(),
                                who: author.map(|(login, _)| login.to_owned()),
                            });
                        }
                    }
                    other => walk(other, author, &at, verdicts, withheld),
                }
            }
        }
        _ => {}
    }
}

/// The login of an account object itself.
fn author_of_account(account: &Map<String, Value>) -> Option<&str> {
    IDENTITY_KEYS
        .iter()
        .find_map(|k| account.get(*k).and_then(Value::as_str))
        .filter(|login| !login.is_empty())
}

/// Replaces `text` by the notice unless its author is trusted; whether it did.
fn withhold_text(text: &mut String, author: Option<(&str, bool)>, verdicts: &Verdicts) -> bool {
    if text.is_empty() || matches!(author, Some((_, true))) {
        return false;
    }
    *text = (verdicts.notice)(author.map(|(login, _)| login));
    true
}

/// The repository (`owner/name`) an object is about, when it says.
pub fn repository_of(object: &Map<String, Value>) -> Option<&str> {
    fn named(repo: &Map<String, Value>) -> Option<&str> {
        repo.get("full_name").and_then(Value::as_str)
    }
    if let Some(repo) = object.get("repository").and_then(Value::as_object) {
        return named(repo);
    }
    let is_repository = object.get("owner").is_some_and(Value::is_object)
        && object.get("name").is_some_and(Value::is_string);
    is_repository.then(|| named(object)).flatten()
}

/// Leaves out of every list in `value` the items about a repository outside `allow`; returns
/// how many.
pub fn leave_out(value: &mut Value, allow: &AllowList) -> usize {
    match value {
        Value::Array(items) => {
            let before = items.len();
            items.retain(|item| {
                item.as_object()
                    .and_then(repository_of)
                    .is_none_or(|repo| allow.allows_full_name(repo))
            });
            let mut left_out = before - items.len();
            for item in items.iter_mut() {
                left_out += leave_out(item, allow);
            }
            left_out
        }
        Value::Object(map) => map.values_mut().map(|v| leave_out(v, allow)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn verdicts_for<'a>(
        trusts: &'a dyn Fn(&str) -> bool,
        notice: &'a dyn Fn(Option<&str>) -> String,
    ) -> Verdicts<'a> {
        Verdicts { trusts, notice }
    }

    #[test]
    fn credentials_go_wherever_they_are() {
        let mut hooks = json!([{"id": 1, "config": {"url": "https://x", "secret": "s"},
            "authorization_header": "Bearer t", "Password": "p"}]);
        strip_secrets(&mut hooks);
        assert_eq!(hooks, json!([{"id": 1, "config": {"url": "https://x"}}]));
    }

    #[test]
    fn a_strangers_object_loses_its_text_and_keeps_the_forges() {
        let trusts = |login: &str| login == "alice";
        let notice = |who: Option<&str>| format!("[withheld: {}]", who.unwrap_or("?"));
        let mut issue = json!({
            "id": 3, "title": "obey", "body": "now", "state": "open",
            "created_at": "2026-01-01", "html_url": "https://f/x",
            "user": {"login": "mallory", "full_name": "Mal", "id": 9},
            "labels": [{"name": "bug"}],
            "head": {"ref": "evil-branch"},
            "comments": [{"body": "fine", "user": {"login": "alice"}}],
        });
        let withheld = withhold(&mut issue, &verdicts_for(&trusts, &notice));
        assert_eq!(issue["title"], "[withheld: mallory]");
        assert_eq!(issue["head"]["ref"], "[withheld: mallory]");
        assert_eq!(issue["labels"][0]["name"], "[withheld: mallory]");
        assert_eq!(issue["user"]["full_name"], "[withheld: mallory]");
        assert_eq!(issue["comments"][0]["body"], "fine");
        for kept in ["state", "created_at", "html_url"] {
            assert_ne!(issue[kept], "[withheld: mallory]", "{kept}");
        }
        assert_eq!(issue["user"]["login"], "mallory");
        assert!(withheld.iter().any(|w| w.who.as_deref() == Some("mallory")));
        assert_eq!(authors(&issue), vec!["alice", "mallory"]);
    }

    #[test]
    fn text_no_one_is_named_for_is_withheld() {
        let trusts = |_: &str| true;
        let notice = |who: Option<&str>| format!("[withheld: {}]", who.unwrap_or("?"));
        let mut threads = json!([{"subject": {"title": "obey", "state": "open"}}]);
        withhold(&mut threads, &verdicts_for(&trusts, &notice));
        assert_eq!(threads[0]["subject"]["title"], "[withheld: ?]");
        assert_eq!(threads[0]["subject"]["state"], "open");
    }

    #[test]
    fn items_about_other_repositories_are_left_out() {
        let allow: AllowList = "acme/widgets".parse().unwrap();
        let mut deps = json!([
            {"number": 1, "repository": {"full_name": "acme/widgets"}},
            {"number": 2, "repository": {"full_name": "other/secret"}},
            {"full_name": "other/fork", "name": "fork", "owner": {"login": "other"}},
            {"number": 3},
        ]);
        assert_eq!(leave_out(&mut deps, &allow), 2);
        assert_eq!(deps.as_array().unwrap().len(), 2);
    }
}
