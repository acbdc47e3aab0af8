//! Titles of generated tools in the words people ask with: a verb, the thing acted on and whose
//! it is ("Create an SSH key for your account"), built from an operation's method and path alone,
//! never from the spec's operationId or prose. The path's words that people say otherwise
//! (`keys` under a repository are deploy keys) come from the `nouns` of the overrides.
//!
//! ```
//! use forgelens::catalog::{Overrides, title};
//! use forgelens::forge::Method;
//! let nouns = Overrides::builtin().unwrap().nouns;
//! let t = title::of(Method::Post, "/user/keys", false, &nouns);
//! assert_eq!(t.text, "Create an SSH key for your account");
//! assert_eq!(t.verb, "create");
//! let t = title::of(Method::Get, "/repos/{owner}/{repo}/issues/{index}/comments", false, &nouns);
//! assert_eq!(t.text, "List the comments of an issue of a repository");
//! // PUT adds a thing by its name, unless POST on the same path is what creates it.
//! let t = title::of(Method::Put, "/user/actions/variables/{name}", true, &nouns);
//! assert_eq!(t.text, "Update an Actions variable of your account");
//! ```

use indexmap::IndexMap;

use crate::forge::Method;

/// A title, and the verb of the search vocabulary it asks for (`list`, `get`, `create`, `add`,
/// `update`, `delete`, `remove`, or an action of the path such as `merge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    pub verb: String,
    pub text: String,
}

/// Whose the thing is, by how the path starts: the words after the object, and the words of
/// the owner itself when the path names nothing below it.
struct Scope {
    /// The literal and parameter segments the scope takes.
    len: usize,
    /// How the object is tied to its owner: in general, when created, when added.
    of: &'static str,
    made: &'static str,
    to: &'static str,
    /// The owner when it is the object (`GET /repos/{owner}/{repo}`).
    itself: &'static str,
    /// The key prefix of the nouns that apply under this scope (`repos:keys`).
    key: &'static str,
}

/// A path's scopes, the longest first.
fn scope(segments: &[Segment]) -> Option<Scope> {
    let lit = |i: usize, s: &str| matches!(segments.get(i), Some(Segment::Literal(l)) if l == s);
    let var = |i: usize| matches!(segments.get(i), Some(Segment::Param));
    let make = |len, of, made, to, itself, key| {
        Some(Scope {
            len,
            of,
            made,
            to,
            itself,
            key,
        })
    };
    let admin = "as a site administrator";
    if lit(0, "repos") && var(1) && var(2) {
        let r = "a repository";
        make(
            3,
            "of a repository",
            "in a repository",
            "to a repository",
            r,
            "repos",
        )
    } else if lit(0, "orgs") && var(1) {
        let o = "an organization";
        make(
            2,
            "of an organization",
            "in an organization",
            "to an organization",
            o,
            "orgs",
        )
    } else if lit(0, "users") && var(1) {
        make(2, "of a user", "for a user", "to a user", "a user", "users")
    } else if lit(0, "user") {
        let y = "your account";
        make(
            1,
            "of your account",
            "for your account",
            "to your account",
            y,
            "user",
        )
    } else if lit(0, "teams") && var(1) {
        make(2, "of a team", "in a team", "to a team", "a team", "teams")
    } else if lit(0, "packages") && var(1) {
        let p = "a package of an owner";
        make(
            2,
            "of an owner",
            "for an owner",
            "to an owner",
            p,
            "packages",
        )
    } else if lit(0, "admin") {
        make(1, admin, admin, admin, "the instance", "admin")
    } else {
        None
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param,
}

/// Path segments that name an action rather than a thing, and the verb they ask for.
const ACTIONS: &[(&str, &str)] = &[
    ("merge", "merge"),
    ("mirror-sync", "sync"),
    ("push_mirrors-sync", "sync"),
    ("sync_fork", "sync"),
    ("transfer", "transfer"),
    ("accept", "accept"),
    ("reject", "reject"),
    ("rename", "rename"),
    ("start", "start"),
    ("stop", "stop"),
    ("dispatches", "dispatch"),
    ("tests", "test"),
    ("convert", "convert"),
    ("migrate", "migrate"),
    ("generate", "generate"),
    ("archive", "download"),
    ("validate", "validate"),
    ("unblock", "unblock"),
    ("undismissals", "undismiss"),
    ("dismissals", "dismiss"),
    ("link", "link"),
    ("unlink", "unlink"),
    ("search", "search"),
];

/// The title of `method` on `path`, which also takes POST when `posted` (POST then creates
/// what the path names, so PUT replaces it); `nouns` says how the path's words are said.
pub fn of(method: Method, path: &str, posted: bool, nouns: &IndexMap<String, String>) -> Title {
    let segments: Vec<Segment> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| match s.starts_with('{') {
            true => Segment::Param,
            false => Segment::Literal(s.to_owned()),
        })
        .collect();
    let scope = scope(&segments);
    let rest = &segments[scope.as_ref().map_or(0, |s| s.len)..];
    let literals: Vec<&str> = rest
        .iter()
        .filter_map(|s| match s {
            // `-` only separates (`/packages/{owner}/{type}/{name}/-/link`).
            Segment::Literal(l) if l != "-" => Some(l.as_str()),
            _ => None,
        })
        .collect();
    let key = scope.as_ref().map_or("", |s| s.key);
    let say = |segment: &str| -> String {
        nouns
            .get(&format!("{key}:{segment}"))
            .or_else(|| nouns.get(segment))
            .cloned()
            .unwrap_or_else(|| segment.replace(['_', '-', '.'], " "))
    };
    let ends_in_param = rest.last() == Some(&Segment::Param);
    let mut literals = literals.as_slice();
    let mut action = None;
    if let Some((last, before)) = literals.split_last()
        && let Some((_, verb)) = ACTIONS.iter().find(|(segment, _)| segment == last)
    {
        action = Some(*verb);
        literals = before;
    }
    // The segment before the object: an item it belongs to when a parameter follows it
    // (`issues/{index}/comments`: of an issue), else a group that qualifies it
    // (`gitignore/templates`: gitignore templates).
    let (object, context) = match literals.split_last() {
        Some((last, before)) => {
            let object = say(last);
            match before.last() {
                Some(c) if follows_param(rest, c) => (
                    Some(object),
                    Some(format!(" of {}", with_article(&singular(&say(c)), true))),
                ),
                Some(c) if say(c).contains(' ') => {
                    (Some(object), Some(format!(" of the {}", say(c))))
                }
                Some(c) if !object.to_lowercase().contains(&say(c).to_lowercase()) => {
                    (Some(format!("{} {object}", say(c))), None)
                }
                _ => (Some(object), None),
            }
        }
        None => (None, None),
    };
    // The owner is the object when the path names nothing below it.
    let (thing, whose) = match (&object, &scope) {
        (Some(o), _) => (o.clone(), scope.as_ref()),
        (None, Some(s)) => (s.itself.to_owned(), None),
        (None, None) => ("the instance".to_owned(), None),
    };
    let plural = thing.ends_with('s') && !thing.ends_with("ss") && !thing.ends_with("us");
    let one = || with_article(&singular(&thing), object.is_some());
    let (verb, phrase) = match (action, method) {
        (Some("search"), _) => ("search".to_owned(), the(&thing)),
        (Some(verb), _) => (verb.to_owned(), one()),
        (None, Method::Get) if plural && !ends_in_param => ("list".to_owned(), the(&thing)),
        (None, Method::Get) => ("get".to_owned(), one_or_the(&thing, ends_in_param, &object)),
        (None, Method::Post) => match plural || ends_in_param {
            true => ("create".to_owned(), one()),
            false => ("update".to_owned(), the(&thing)),
        },
        (None, Method::Put) if ends_in_param && !posted => ("add".to_owned(), one()),
        (None, Method::Put | Method::Patch) if ends_in_param => ("update".to_owned(), one()),
        (None, Method::Put | Method::Patch) => ("update".to_owned(), the(&thing)),
        (None, Method::Delete) => (
            "delete".to_owned(),
            one_or_the(&thing, ends_in_param, &object),
        ),
    };
    let mut text = format!("{} {phrase}", capital(&verb));
    if let Some(c) = context {
        text.push_str(&c);
    }
    if let Some(s) = whose {
        text.push(' ');
        text.push_str(match verb.as_str() {
            "add" => s.to,
            "create" => s.made,
            _ => s.of,
        });
    }
    Title { verb, text }
}

/// Whether a parameter follows the literal `segment` in `rest`.
fn follows_param(rest: &[Segment], segment: &str) -> bool {
    rest.windows(2)
        .any(|w| w[0] == Segment::Literal(segment.to_owned()) && w[1] == Segment::Param)
}

/// "a pull request", "an issue"; `the` for a thing named by the owner itself.
fn with_article(noun: &str, article: bool) -> String {
    if !article
        || noun.starts_with("a ")
        || noun.starts_with("an ")
        || noun.starts_with("the ")
        || noun.starts_with("your ")
    {
        return noun.to_owned();
    }
    let vowel = (noun.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U'])
        && !noun.starts_with("us")
        && !noun.starts_with("uni"))
        || noun.starts_with("SSH")
        || noun.starts_with("OAuth");
    format!("{} {noun}", if vowel { "an" } else { "a" })
}

fn the(noun: &str) -> String {
    match noun.starts_with("your ") || noun.starts_with("a ") || noun.starts_with("an ") {
        true => noun.to_owned(),
        false => format!("the {noun}"),
    }
}

/// One of a collection by its id, or the one thing the path names.
fn one_or_the(thing: &str, ends_in_param: bool, object: &Option<String>) -> String {
    match (ends_in_param, object) {
        (true, Some(_)) => with_article(&singular(thing), true),
        (_, None) => thing.to_owned(),
        (false, Some(_)) => the(thing),
    }
}

/// The singular of a plural noun phrase (its last word).
fn singular(phrase: &str) -> String {
    let (head, last) = match phrase.rsplit_once(' ') {
        Some((h, l)) => (format!("{h} "), l),
        None => (String::new(), phrase),
    };
    let one = if let Some(stem) = last.strip_suffix("ies").filter(|s| s.len() > 1) {
        format!("{stem}y")
    } else if ["ches", "shes", "sses", "xes", "uses"]
        .iter()
        .any(|s| last.ends_with(s))
    {
        last[..last.len() - 2].to_owned()
    } else if last.len() > 3
        && last.ends_with('s')
        && !last.ends_with("ss")
        && !last.ends_with("us")
    {
        last[..last.len() - 1].to_owned()
    } else {
        last.to_owned()
    };
    format!("{head}{one}")
}

fn capital(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
