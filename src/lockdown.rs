//! Lockdown (`--lockdown`): on a public repository, text that accounts without write access
//! wrote is withheld, and replaced by a notice that names the author and how to read it on
//! purpose (`include_untrusted: true` for a tool, `include_untrusted=true` in a resource's URI).
//! It runs on the projected answer, before the byte budget, on every path: resources, curated
//! and generated tools, the escape hatch.
//!
//! Which text is whose is the engine's to say (`engine::policy`): a manifest's marks for
//! curated answers, the shape of the forge's objects for unshaped ones. What is asked of the
//! forge lives here: whether the repository the request is about is private
//! (`GET /repos/{owner}/{repo}`), and whether an author may write to it
//! (`GET /repos/{owner}/{repo}/collaborators/{login}/permission`). Each verdict is kept for
//! [`TTL`] per token, repository and account, so that an author costs at most one request per
//! repository in that time. The repository's owner is trusted without asking. A verdict the
//! forge cannot give (no token, an error) withholds: lockdown fails closed. An answer about no
//! one repository (a search across repositories, a user's profile) has no one to ask about, so
//! nobody's text in it is kept but what only accounts with write access can write.
//!
//! Lockdown makes a planted instruction from a stranger less likely to reach the model; it is
//! not an authorization boundary.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use crate::engine::policy::generic;
use crate::engine::policy::marks::{Mark, TextMark};
use crate::engine::policy::withhold::{self, Verdicts, Withheld};
use crate::engine::request::Args;
use crate::forge::allow::{self, Target};
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

/// What one answer is held to: the marks of a curated answer, or the generic policy of an
/// unshaped one.
pub enum Held<'a> {
    Marked(&'a [(String, Mark)]),
    Unshaped,
}

/// What lockdown did to one answer.
#[derive(Debug, Default)]
pub struct Outcome {
    pub withheld: Vec<Withheld>,
    /// The notice shown instead of the answer's text (a file, a diff, a log), when it was
    /// withheld.
    pub text: Option<String>,
}

impl Outcome {
    /// The notice for top-level text, when some was withheld: what a markdown block showing
    /// the answer's top-level fields shows instead.
    pub fn top_notice(&self, notice: impl Fn(Option<&str>) -> String) -> Option<String> {
        self.withheld
            .iter()
            .find(|w| w.at.is_empty())
            .map(|w| notice(w.who.as_deref()))
    }
}

/// Whose write access decides for an answer.
enum Scope {
    /// A private repository: nothing is withheld.
    Private,
    /// A public repository: its writers' text is kept.
    Public(String, String),
    /// No one repository: only what only writers can write is kept.
    Nowhere,
}

impl Lockdown {
    /// Withholds, in `value`, the text lockdown does not keep of an answer to a request at
    /// `path`; `text` is the answer's own text mark, when it is a text.
    #[allow(clippy::too_many_arguments)]
    pub async fn hold(
        &self,
        forge: &forge::Client,
        token: Option<&Token>,
        path: &str,
        held: Held<'_>,
        text: Option<&TextMark>,
        args: &Args,
        value: &mut Value,
        reveal: Reveal<'_>,
    ) -> Outcome {
        let scope = self.scope(forge, token, path).await;
        let repo = match &scope {
            Scope::Private => return Outcome::default(),
            Scope::Public(owner, repo) => Some((owner.as_str(), repo.as_str())),
            Scope::Nowhere => None,
        };
        let logins = match held {
            Held::Marked(marks) => withhold::authors(value, marks),
            Held::Unshaped => generic::authors(value),
        };
        let trusted: HashMap<String, bool> = match repo {
            Some((owner, name)) => {
                // Asked at once: a thread of many authors costs one round trip, not one each.
                let asked = logins
                    .iter()
                    .map(|login| self.may_write(forge, token, owner, name, login));
                let verdicts = futures::future::join_all(asked).await;
                logins.into_iter().zip(verdicts).collect()
            }
            None => HashMap::new(),
        };
        let trusts = |login: &str| trusted.get(login) == Some(&true);
        let notice = |who: Option<&str>| notice(who, repo, &reveal);
        let verdicts = Verdicts {
            trusts: &trusts,
            notice: &notice,
        };
        let withheld = match held {
            Held::Marked(marks) => withhold::withhold(value, marks, args, &verdicts),
            Held::Unshaped => generic::withhold(value, &verdicts),
        };
        let text = text
            .filter(|mark| !mark.writer.only_writers(args))
            .map(|_| notice(None));
        Outcome { withheld, text }
    }

    async fn scope(&self, forge: &forge::Client, token: Option<&Token>, path: &str) -> Scope {
        match allow::target(path) {
            Target::Repo(owner, repo) => match self.is_private(forge, token, &owner, &repo).await {
                true => Scope::Private,
                false => Scope::Public(owner, repo),
            },
            Target::Unknown(_) | Target::Other => Scope::Nowhere,
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
                    "lockdown: no verdict on {} for {owner}/{repo}, withheld: {error}",
                    forge::printable(login)
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

/// The notice in place of what `who` wrote (`None`: an account the answer does not name).
pub fn notice(who: Option<&str>, repo: Option<(&str, &str)>, reveal: &Reveal) -> String {
    let how = match reveal {
        Reveal::Tool(name) => format!("call {name} again with {REVEAL}: true"),
        Reveal::Uri(uri) => format!("read {uri}"),
    };
    let who = match who {
        Some(login) => login.to_owned(),
        None => "an account this answer does not name".to_owned(),
    };
    let why = match repo {
        Some((owner, repo)) => format!("who cannot write to {owner}/{repo}"),
        None => "in an answer without one repository to check write access against".into(),
    };
    format!("[withheld by lockdown: written by {who}, {why}; to read it on purpose, {how}]")
}

/// `uri` with the flag that reads withheld text.
pub fn reveal_uri(uri: &str) -> String {
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
    fn the_notice_names_the_author_and_the_way_to_read_it() {
        let tool = notice(
            Some("mallory"),
            Some(("acme", "widgets")),
            &Reveal::Tool("get_issue"),
        );
        assert!(
            tool.contains("mallory") && tool.contains("acme/widgets"),
            "{tool}"
        );
        assert!(
            tool.contains("get_issue again with include_untrusted: true"),
            "{tool}"
        );
        let nobody = notice(
            None,
            None,
            &Reveal::Uri("forgejo://x?include_untrusted=true"),
        );
        assert!(
            nobody.contains("does not name")
                && nobody.contains("read forgejo://x?include_untrusted=true")
        );
    }
}
