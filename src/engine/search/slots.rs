//! What a tool's request path takes and what a query gives for it: things named by their
//! number, values (a tag, a file path, a topic), a repository, somebody's name. A query that
//! names a repository and one comment fits the tool that takes exactly those, not the one that
//! also wants an issue's number.

use super::Shape;

/// The slots of a request path, or what a query gives for them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    /// Things named by their number (`{index}`, `{id}`, `{run_id}`; `#12`, `run 1182`).
    pub numbers: usize,
    /// Values that are neither (`{tag}`, `{filepath}`; `'iot'`, `v1.2.0`, `src/main.rs`).
    pub values: usize,
    /// A repository (`/repos/{owner}/{repo}`; `acme/api`).
    pub repository: bool,
    /// Somebody's name, a user's or an organization's (`/users/{username}`; `marta-k`).
    pub someone: bool,
}

/// What one placeholder of a path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Number,
    /// A repository's name, or its owner's just before it.
    Repository,
    Someone,
    Value,
}

/// Placeholder names (or their ends) that take somebody's name.
const SOMEONE: &[&str] = &["username", "user", "org", "owner", "collaborator", "target"];

fn slot(name: &str, next: Option<&str>) -> Slot {
    if name == "index" || name.ends_with("id") {
        Slot::Number
    } else if name.ends_with("repo") || next.is_some_and(|n| n.ends_with("repo")) {
        Slot::Repository
    } else if SOMEONE.iter().any(|end| name.ends_with(end)) {
        Slot::Someone
    } else {
        Slot::Value
    }
}

impl Slots {
    /// What a request path takes, by its placeholders' names.
    pub fn of_path(path: &str) -> Slots {
        let names: Vec<String> = path
            .split('{')
            .skip(1)
            .map(|rest| {
                let name = rest.split('}').next().unwrap_or_default();
                name.trim_start_matches('+').to_ascii_lowercase()
            })
            .collect();
        let mut slots = Slots::default();
        for (i, name) in names.iter().enumerate() {
            match slot(name, names.get(i + 1).map(String::as_str)) {
                Slot::Number => slots.numbers += 1,
                Slot::Value => slots.values += 1,
                Slot::Repository => slots.repository = true,
                Slot::Someone => slots.someone = true,
            }
        }
        slots
    }

    /// What the tokens of a query give (all but somebody's name, which takes the vocabulary to
    /// tell from a word): `quoted` spans already taken out of them count as values.
    pub fn of_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>, quoted: usize) -> Slots {
        let mut slots = Slots {
            values: quoted,
            ..Slots::default()
        };
        for token in tokens {
            // `acme/api#12` names a repository and one of its issues.
            let (head, number) = match token.split_once('#') {
                Some((head, number)) if !head.is_empty() => (head, Some(number)),
                _ => (token, None),
            };
            slots.numbers +=
                usize::from(is_number(head)) + usize::from(number.is_some_and(is_number));
            match Shape::of(head) {
                Some(Shape::Repository) => slots.repository = true,
                Some(
                    Shape::Version
                    | Shape::Path
                    | Shape::Directory
                    | Shape::Sha
                    | Shape::Identifier,
                ) => slots.values += 1,
                _ => {}
            }
        }
        slots
    }
}

/// Whether a token is a thing's number: `12`, `#12` (with punctuation around it).
pub fn is_number(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '#');
    let digits = t.strip_prefix('#').unwrap_or(t);
    !digits.is_empty() && digits.len() < 10 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `query` without its quoted spans (from a token that opens a quote to the token that closes
/// it), and how many there were. Quoted text is a value for the tool (a title, a comment, a
/// name), not words about which tool. A quote never closed is no quote.
pub fn unquoted(query: &str) -> (String, usize) {
    const QUOTES: [(char, char); 4] = [
        ('"', '"'),
        ('\'', '\''),
        ('`', '`'),
        ('\u{201c}', '\u{201d}'),
    ];
    let mut kept: Vec<&str> = Vec::new();
    let mut open: Option<(char, Vec<&str>)> = None;
    let mut spans = 0;
    for token in query.split_whitespace() {
        let end = token.trim_end_matches(|c: char| ",.;:!?)".contains(c));
        if let Some((close, inside)) = open.as_mut() {
            inside.push(token);
            if end.ends_with(*close) {
                open = None;
                spans += 1;
            }
            continue;
        }
        match QUOTES
            .iter()
            .find(|(opening, _)| token.starts_with(*opening))
        {
            Some(&(opening, close)) => {
                let inner = &end[opening.len_utf8()..];
                match inner.ends_with(close) && !inner.is_empty() {
                    true => spans += 1,
                    false => open = Some((close, vec![token])),
                }
            }
            None => kept.push(token),
        }
    }
    if let Some((_, inside)) = open {
        kept.extend(inside);
    }
    (kept.join(" "), spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_s_placeholders_are_numbers_values_a_repository_or_somebody() {
        let path = |numbers, values, repository, someone| Slots {
            numbers,
            values,
            repository,
            someone,
        };
        for (p, slots) in [
            (
                "/repos/{owner}/{repo}/issues/{index}/comments/{id}",
                path(2, 0, true, false),
            ),
            (
                "/repos/{owner}/{repo}/issues/comments/{id}",
                path(1, 0, true, false),
            ),
            ("/repos/{owner}/{repo}/tags/{tag}", path(0, 1, true, false)),
            ("/users/{username}/repos", path(0, 0, false, true)),
            ("/orgs/{org}/members/{username}", path(0, 0, false, true)),
            ("/teams/{id}/repos/{org}/{repo}", path(1, 0, true, false)),
            ("/user/starred/{owner}/{repo}", path(0, 0, true, false)),
            (
                "/repos/{template_owner}/{template_repo}/generate",
                path(0, 0, true, false),
            ),
            (
                "/repos/{owner}/{repo}/collaborators/{collaborator}",
                path(0, 0, true, true),
            ),
            (
                "/repos/{owner}/{repo}/actions/runs/{run_id}",
                path(1, 0, true, false),
            ),
            ("/label/templates/{name}", path(0, 1, false, false)),
            ("/user/repos", path(0, 0, false, false)),
        ] {
            assert_eq!(Slots::of_path(p), slots, "{p}");
        }
    }

    #[test]
    fn a_query_gives_numbers_values_and_a_repository() {
        let given = |q: &str| {
            let (text, quoted) = unquoted(q);
            Slots::of_tokens(text.split_whitespace(), quoted)
        };
        let g = given("delete comment 7788 in acme/app");
        assert_eq!((g.numbers, g.values, g.repository), (1, 0, true));
        let g = given("remove attachment 12 from acme/app#42");
        assert_eq!((g.numbers, g.values, g.repository), (2, 0, true));
        let g = given("tag acme/widgets with the topic 'iot'");
        assert_eq!((g.numbers, g.values, g.repository), (0, 1, true));
        let g = given("what changed between v1.2.0 and v1.3.0");
        assert_eq!((g.numbers, g.values, g.repository), (0, 2, false));
        let g = given("list my notifications");
        assert_eq!(g, Slots::default());
    }

    #[test]
    fn quoted_text_is_taken_out_whole() {
        assert_eq!(
            unquoted("post 'LGTM, merging once CI is green' on PR 17"),
            ("post on PR 17".to_owned(), 1)
        );
        assert_eq!(
            unquoted("search \"timeout\", then \"panic\"."),
            ("search then".to_owned(), 2)
        );
        assert_eq!(
            unquoted("label it \u{201c}needs review\u{201d} now"),
            ("label it now".to_owned(), 1)
        );
        // An apostrophe inside a word opens nothing; a quote never closed is kept.
        assert_eq!(unquoted("what's in PR 3"), ("what's in PR 3".to_owned(), 0));
        assert_eq!(
            unquoted("the 'main branch"),
            ("the 'main branch".to_owned(), 0)
        );
    }

    #[test]
    fn numbers_are_digits_or_hash_digits() {
        for yes in ["12", "#12", "(12)", "12,", "#4410."] {
            assert!(is_number(yes), "{yes}");
        }
        for no in ["v12", "12a", "#", "1234567890", "acme/app"] {
            assert!(!is_number(no), "{no}");
        }
    }
}
