//! Lockdown (`--lockdown`): on a public repository, text written by accounts that cannot write
//! to it is withheld, and replaced by a notice that names the author and how to read it on
//! purpose (`include_untrusted: true` for a tool, `include_untrusted=true` in a resource's URI).
//!
//! Which fields are user-written, and which field names each one's author, is what an answer's
//! `_meta` says (see `engine::untrusted`); text whose author the answer does not name (a file,
//! a wiki page: both change only through accounts with write access) is not filtered. Whether
//! an author may write is asked of the forge (`/repos/{owner}/{repo}/collaborators/{login}/
//! permission`), and whether the repository is private (`/repos/{owner}/{repo}`); each verdict
//! is kept for [`TTL`] per repository and account, so that an author costs at most one request
//! per repository in that time. The repository's owner is trusted without asking. A verdict the
//! forge cannot give (no token, an error) withholds: lockdown fails closed.
//!
//! Lockdown makes a planted instruction from a stranger less likely to reach the model; it is
//! not an authorization boundary (a collaborator's text passes, and so does anything a tool
//! without repository context serves, such as a user's profile).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::engine::ReadOutput;
use crate::engine::untrusted::META_KEY;
use crate::forge::{self, Request, Token};

/// How long a verdict on an author, or on a repository's visibility, is reused.
pub const TTL: Duration = Duration::from_secs(300);

/// The tool argument, and the URI query flag, that read withheld text on purpose.
pub const REVEAL: &str = "include_untrusted";

/// The kept verdicts: whether a repository is private, and whether an account may write to it.
#[derive(Debug, Default)]
pub struct Lockdown {
    verdicts: Mutex<HashMap<Asked, (bool, Instant)>>,
}

/// One question to the forge. Verdicts depend on who asks: a token that cannot see a
/// repository gets none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Asked {
    token: Option<Token>,
    /// `owner/repo`, lowercase.
    repo: String,
    /// The account whose write access is asked; `None`: the repository's visibility.
    login: Option<String>,
}

/// How to read withheld text on purpose, for the notice.
pub enum Reveal<'a> {
    Tool(&'a str),
    Uri(&'a str),
}

impl Lockdown {
    /// Withholds what accounts without write access to `owner/repo` wrote in `value`, by the
    /// fields `meta` names; returns who was withheld, and where (see [`withhold`]).
    pub async fn filter(
        &self,
        forge: &forge::Client,
        token: Option<&Token>,
        (owner, repo): (&str, &str),
        value: &mut Value,
        meta: &Value,
        reveal: Reveal<'_>,
    ) -> Vec<(String, String)> {
        let authored = authored_fields(meta);
        if authored.is_empty() || self.is_private(forge, token, owner, repo).await {
            return Vec::new();
        }
        let mut logins: Vec<Option<String>> = Vec::new();
        for (author, _) in &authored {
            let (parent, name) = split(author);
            for object in objects(value, parent) {
                logins.push(object.get(name).and_then(Value::as_str).map(str::to_owned));
            }
        }
        logins.sort();
        logins.dedup();
        // Asked at once: a thread of many authors costs one round trip, not one per author.
        let asked = logins
            .iter()
            .flatten()
            .map(|login| self.may_write(forge, token, owner, repo, login));
        let verdicts = futures::future::join_all(asked).await;
        let trusted: HashMap<&str, bool> = logins
            .iter()
            .flatten()
            .map(String::as_str)
            .zip(verdicts)
            .collect();
        withhold(
            value,
            &authored,
            |login| trusted.get(login) == Some(&true),
            |who| notice(who, Some((owner, repo)), &reveal),
        )
    }

    /// [`Lockdown::filter`] on a read's JSON block, and its markdown block when an author
    /// withheld wrote it.
    pub async fn filter_read(
        &self,
        forge: &forge::Client,
        token: Option<&Token>,
        scope: (&str, &str),
        output: &mut ReadOutput,
        uri: &str,
    ) {
        let Some(meta) = output.meta.clone() else {
            return;
        };
        let Some(json) = output
            .blocks
            .iter_mut()
            .find(|b| b.mime == "application/json")
        else {
            return;
        };
        let Ok(mut value) = serde_json::from_str::<Value>(&json.text) else {
            // The engine always writes JSON; were it not, nothing could be checked: withhold.
            output.blocks = vec![crate::engine::Block {
                mime: "text/plain",
                text: "[withheld by lockdown: the answer could not be checked]".into(),
            }];
            return;
        };
        let reveal_uri = reveal_uri(uri);
        let withheld = self
            .filter(
                forge,
                token,
                scope,
                &mut value,
                &meta,
                Reveal::Uri(&reveal_uri),
            )
            .await;
        if withheld.is_empty() {
            return;
        }
        json.text = serde_json::to_string(&value).expect("a JSON value always serializes");
        // The markdown block shows the top-level fields: withheld with them.
        if let Some((_, who)) = withheld.iter().find(|(at, _)| at.is_empty())
            && let Some(markdown) = output.blocks.iter_mut().find(|b| b.mime == "text/markdown")
        {
            markdown.text = notice(who, Some(scope), &Reveal::Uri(&reveal_uri));
        }
    }

    async fn is_private(
        &self,
        forge: &forge::Client,
        token: Option<&Token>,
        owner: &str,
        repo: &str,
    ) -> bool {
        let key = Asked {
            token: token.cloned(),
            repo: format!("{owner}/{repo}").to_lowercase(),
            login: None,
        };
        if let Some(private) = self.kept(&key) {
            return private;
        }
        let path = format!("/repos/{}/{}", segment(owner), segment(repo));
        // Unknown is public: the filter applies.
        let private = match forge.send(&Request::get(path), token).await {
            Ok(answer) => answer.body.into_json()["private"] == Value::Bool(true),
            Err(_) => false,
        };
        self.keep(key, private);
        private
    }

    async fn may_write(
        &self,
        forge: &forge::Client,
        token: Option<&Token>,
        owner: &str,
        repo: &str,
        login: &str,
    ) -> bool {
        if login.eq_ignore_ascii_case(owner) {
            return true;
        }
        let key = Asked {
            token: token.cloned(),
            repo: format!("{owner}/{repo}").to_lowercase(),
            login: Some(login.to_lowercase()),
        };
        if let Some(verdict) = self.kept(&key) {
            return verdict;
        }
        let path = format!(
            "/repos/{}/{}/collaborators/{}/permission",
            segment(owner),
            segment(repo),
            segment(login)
        );
        let verdict = match forge.send(&Request::get(path), token).await {
            Ok(answer) => matches!(
                answer.body.into_json()["permission"].as_str(),
                Some("write" | "admin" | "owner")
            ),
            Err(error) => {
                tracing::info!(
                    "lockdown: no verdict on {login} for {owner}/{repo}, withheld: {error}"
                );
                false
            }
        };
        self.keep(key, verdict);
        verdict
    }

    fn kept(&self, key: &Asked) -> Option<bool> {
        let verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        verdicts
            .get(key)
            .filter(|(_, at)| at.elapsed() < TTL)
            .map(|(v, _)| *v)
    }

    fn keep(&self, key: Asked, verdict: bool) {
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        // Expired verdicts go when a new one comes: the map holds at most one period's.
        verdicts.retain(|_, (_, at)| at.elapsed() < TTL);
        verdicts.insert(key, (verdict, Instant::now()));
    }
}

fn segment(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

/// The `_meta`'s author fields that name an author, each with the fields it wrote.
fn authored_fields(meta: &Value) -> Vec<(String, Vec<String>)> {
    let Some(by_author) = meta.get(META_KEY).and_then(Value::as_object) else {
        return Vec::new();
    };
    by_author
        .iter()
        .filter(|(author, _)| !author.is_empty())
        .map(|(author, fields)| {
            let fields = fields
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
            (author.clone(), fields)
        })
        .collect()
}

/// `a.b[].c` → (`a.b[]`, `c`).
fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('.').unwrap_or(("", path))
}

/// The objects at `path` (`""`: the value; `items[]`: each item; `head`: one member).
fn objects<'v>(value: &'v mut Value, path: &str) -> Vec<&'v mut serde_json::Map<String, Value>> {
    let mut nodes = vec![value];
    for step in path.split('.').filter(|s| !s.is_empty()) {
        let (name, each) = match step.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (step, false),
        };
        nodes = nodes
            .into_iter()
            .filter_map(|n| n.get_mut(name))
            .flat_map(|n| match (each, n) {
                (true, Value::Array(items)) => items.iter_mut().collect::<Vec<_>>(),
                (true, _) => Vec::new(),
                (false, n) => vec![n],
            })
            .collect();
    }
    nodes.into_iter().filter_map(Value::as_object_mut).collect()
}

/// Withholds, in `value`, what every author but the trusted ones wrote; returns who, each with
/// where the object they wrote in sits (`""` at the top).
fn withhold(
    value: &mut Value,
    authored: &[(String, Vec<String>)],
    trusted: impl Fn(&str) -> bool,
    notice: impl Fn(&str) -> String,
) -> Vec<(String, String)> {
    let mut withheld = Vec::new();
    for (author, fields) in authored {
        let (parent, name) = split(author);
        for object in objects(value, parent) {
            let login = object.get(name).and_then(Value::as_str).map(str::to_owned);
            if login.as_deref().is_some_and(&trusted) {
                continue;
            }
            let who = login.unwrap_or_else(|| "an unknown account".into());
            for field in fields {
                let (_, field) = split(field);
                if let Some(slot) = object.get_mut(field)
                    && !slot.is_null()
                {
                    *slot = Value::String(notice(&who));
                }
            }
            withheld.push((parent.to_owned(), who));
        }
    }
    withheld.sort();
    withheld.dedup();
    withheld
}

/// Withholds everything an author wrote in `value`: for an answer with text from many
/// repositories or none, where no one's write access can be asked.
pub fn withhold_all(value: &mut Value, meta: &Value, reveal: &Reveal) {
    withhold(
        value,
        &authored_fields(meta),
        |_| false,
        |who| notice(who, None, reveal),
    );
}

fn notice(who: &str, repo: Option<(&str, &str)>, reveal: &Reveal) -> String {
    let how = match reveal {
        Reveal::Tool(name) => format!("call {name} again with {REVEAL}: true"),
        Reveal::Uri(uri) => format!("read {uri}"),
    };
    let why = match repo {
        Some((owner, repo)) => format!("who cannot write to {owner}/{repo}"),
        None => "in an answer without one repository to check write access against".into(),
    };
    format!("[withheld by lockdown: written by {who}, {why}; to read it on purpose, {how}]")
}

/// `uri` with the flag that reads withheld text.
fn reveal_uri(uri: &str) -> String {
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{REVEAL}=true")
}

/// `uri` without the reveal flag, and whether it had it.
pub fn strip_reveal(uri: &str) -> (String, bool) {
    let Some((base, query)) = uri.split_once('?') else {
        return (uri.to_owned(), false);
    };
    let flag = format!("{REVEAL}=true");
    let kept: Vec<&str> = query.split('&').filter(|p| *p != flag).collect();
    let had = kept.len() != query.split('&').count();
    match kept.is_empty() {
        true => (base.to_owned(), had),
        false => (format!("{base}?{}", kept.join("&")), had),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_reveal_flag_comes_off_the_uri_whatever_else_it_holds() {
        assert_eq!(
            strip_reveal("forgejo://repo/a/b/issue/1?include_untrusted=true"),
            ("forgejo://repo/a/b/issue/1".to_owned(), true)
        );
        assert_eq!(
            strip_reveal("forgejo://repo/a/b/issues?state=open&include_untrusted=true&limit=5"),
            (
                "forgejo://repo/a/b/issues?state=open&limit=5".to_owned(),
                true
            )
        );
        assert_eq!(
            strip_reveal("forgejo://repo/a/b/issues?state=open"),
            ("forgejo://repo/a/b/issues?state=open".to_owned(), false)
        );
    }

    #[test]
    fn objects_are_found_at_their_paths() {
        let mut v =
            json!({"author": "a", "items": [{"author": "b"}, {"author": "c"}], "head": {"x": 1}});
        assert_eq!(objects(&mut v, "").len(), 1);
        assert_eq!(objects(&mut v, "items[]").len(), 2);
        assert_eq!(objects(&mut v, "head").len(), 1);
        assert!(objects(&mut v, "missing[]").is_empty());
        assert_eq!(split("items[].body"), ("items[]", "body"));
        assert_eq!(split("body"), ("", "body"));
    }
}
