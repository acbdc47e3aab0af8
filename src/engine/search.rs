//! Ranking tools for a task described in words (`search_tools`).
//!
//! Each tool (and each operation of the forge's API no tool serves) is a small document: the
//! words of its name, title, toolset, summary, the rest of its description, its argument names
//! and its keywords, each field weighted by how much it says about what the tool does. A query
//! is cut into words, stripped of function words, stemmed the same way, and widened with
//! `search.yaml`'s synonyms (what people say → the words the tools use). Its terms are what it
//! names: a word that only asks for something to be done (`show`, `add`, `delete`) is no term,
//! unless some tool acts on it (`merge`, `review`), and neither is a number. What is asked to
//! be done is scored apart, against each tool's verb and whether it reads, changes or removes
//! (an order's first word is its verb: `tag commit 7a6b5c4`); so are where the thing lives
//! (`search.scopes`: an organization, your account, the site administrator's, against the
//! tool's path), what the query gives against what the path takes (numbers, values, a
//! repository, somebody: `search/slots.rs`), and a thing named only in the singular (a tool
//! that gets one). Quoted text is a value, not words about which tool. The words of a tool's
//! name the query does not mention cost part of their worth. Generated tools rank a little
//! below curated ones that match as well, since the curated ones are shaped for agents.
//!
//! ```
//! use forgelens::engine::search::stem;
//! assert_eq!(stem("branches"), stem("branch"));
//! assert_eq!(stem("merging"), stem("merged"));
//! assert_eq!(stem("statuses"), "status");
//! ```

use std::collections::HashMap;

use super::tool::Tool;
use crate::forge::Method;

mod slots;
use slots::{Slots, is_number, unquoted};

/// The weights of the ranking. [`Weights::default`] is what `search_tools` uses; the fields
/// are public so that the evaluation can try others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// How much a query word says when it is in each field of a tool: its name (after the
    /// verb), title, toolset, summary, the rest of its description, its argument names.
    pub name: f32,
    pub title: f32,
    pub toolset: f32,
    pub summary: f32,
    pub detail: f32,
    pub argument: f32,
    /// The manifest's `keywords` of the tool: how people ask for it.
    pub keywords: f32,
    /// Each pair of consecutive query words found together in the tool's title, summary or a
    /// keyword.
    pub pair: f32,
    /// A synonym's words, against the query's own.
    pub expansion: f32,
    /// What a word of the tool's name that the query does not mention costs, against its worth.
    pub unnamed: f32,
    /// A tool whose verb the query asks for, or not (when the query asks for any).
    pub verb_asked: f32,
    pub verb_other: f32,
    /// A tool that reads or changes as the query asks, or the other way.
    pub agrees: f32,
    pub disagrees: f32,
    /// A generated tool's score, against a curated one's.
    pub generated: f32,
    /// A query that names a thing by its number (`#12`, `run 1182`): a tool that takes one
    /// thing's number, or one that does not.
    pub numbered: f32,
    pub unnumbered: f32,
    /// A query that asks neither to read nor to change ("deploy keys of acme/api"): a tool
    /// that reads, since such a query names what it wants to see.
    pub unasked_read: f32,
    /// A query that says where the thing lives (`org-wide`, `my`, `admin`): a tool whose path
    /// is there, or one whose path is elsewhere.
    pub scoped: f32,
    pub unscoped: f32,
    /// A query that names its things only in the singular and asks to read ("the MIT license
    /// template"): a tool that gets one thing.
    pub singular: f32,
    /// A query that names somebody (`marta-k`, `user tlee`): a tool whose path takes a user's
    /// or an organization's name, or one whose path does not.
    pub someone: f32,
    pub no_one: f32,
    /// What each number a tool's path takes and the query does not give costs ("delete comment
    /// 7788" gives one: not the tool that also wants the issue's).
    pub number_short: f32,
    /// A query that names a repository (`acme/api`): a tool whose path takes one, or one whose
    /// path does not.
    pub repository: f32,
    pub no_repository: f32,
    /// A query that names no repository: a tool whose path takes one.
    pub repository_unnamed: f32,
    /// A word that asks for a change and names a field the tool sets (`archive` → `archived`).
    pub field: f32,
    /// A query that gives a value (`'iot'`, `v1.2.0`, `src/main.rs`): a tool whose path takes
    /// one, or one whose path takes none.
    pub valued: f32,
    pub unvalued: f32,
}

impl Default for Weights {
    /// Chosen by hill climbing (`cargo bench --bench search -- --tune N --climb --on …`) on
    /// evaluation phrasings already used for tuning (the fifth round: api_dev to final8), then
    /// checked on final9 and final10, which that climb did not see; never on a set held out
    /// for a blind measure (docs/performance.md, "Finding a tool").
    fn default() -> Weights {
        Weights {
            name: 2.28,
            title: 3.0,
            toolset: 0.3,
            summary: 2.15,
            detail: 0.1,
            argument: 1.6,
            keywords: 1.3,
            pair: 4.18,
            expansion: 0.45,
            unnamed: 0.74,
            verb_asked: 3.4,
            verb_other: -0.05,
            agrees: 3.79,
            disagrees: -1.75,
            generated: 1.0,
            numbered: 5.83,
            unnumbered: -1.63,
            unasked_read: 1.73,
            scoped: 0.66,
            unscoped: -1.55,
            singular: 2.03,
            someone: 2.0,
            no_one: -0.26,
            number_short: -3.39,
            repository: 2.5,
            no_repository: -3.0,
            repository_unnamed: -2.0,
            field: 2.0,
            valued: 1.0,
            unvalued: -0.12,
        }
    }
}

/// The shortest word read as a slip of another, and what the word it is taken for counts.
const MIN_MISSPELT: usize = 4;
const MISSPELT: f32 = 0.8;

/// Whether `a` and `b` differ by one slip of the keyboard: a letter added, dropped, changed, or
/// two neighbours swapped.
fn one_slip(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a == b || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[start..], &b[start..]);
    match ra.len().cmp(&rb.len()) {
        std::cmp::Ordering::Equal => {
            ra[1..] == rb[1..]
                || (ra.len() >= 2 && ra[0] == rb[1] && ra[1] == rb[0] && ra[2..] == rb[2..])
        }
        std::cmp::Ordering::Less => ra == &rb[1..],
        std::cmp::Ordering::Greater => &ra[1..] == rb,
    }
}

/// The shortest verb stem read as the start of the noun of what it makes (`protect` →
/// `protection`); shorter ones start too many words.
const MIN_MAKER: usize = 5;

/// The verb of tools that read one thing.
const GET: &str = "get";

/// What a verb's past form counts for as a term where it describes the word after it.
const DESCRIBING: f32 = 0.5;

/// A verb the query asks for after another one counts for this much of the first.
const LATER_VERB: f32 = 0.5;

/// Words that say nothing about which tool is meant, in byte order (looked up by binary search:
/// every word of every query and tool text is).
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "do", "does", "for", "from", "has", "have", "he", "her", "here", "him", "how",
    "i", "if", "in", "into", "is", "it", "its", "just", "let", "lets", "like", "me", "mine", "my",
    "need", "needs", "of", "on", "one", "or", "our", "out", "please", "pls", "so", "some", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up", "us",
    "wanna", "want", "was", "we", "were", "what", "whats", "when", "where", "which", "who", "whos",
    "whose", "why", "will", "with", "would", "you", "your",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// A word reduced to a stem shared by its inflections (`branches`/`branch`,
/// `merging`/`merged`/`merge`). Not a linguist's stemmer: it only has to map the query and the
/// tools' texts alike.
pub fn stem(word: &str) -> String {
    let mut w = word.to_ascii_lowercase();
    let ends = |w: &str, s: &str| w.len() > s.len() + 2 && w.ends_with(s);
    if ends(&w, "ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if ["sses", "ses", "xes", "ches", "shes"]
        .iter()
        .any(|s| ends(&w, s))
    {
        w.truncate(w.len() - 2);
    } else if w.len() > 3 && w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s))
    {
        w.pop();
    }
    let inflected = ends(&w, "ing") || ends(&w, "ed");
    if ends(&w, "ing") {
        w.truncate(w.len() - 3);
    } else if ends(&w, "ed") {
        w.truncate(w.len() - 2);
    }
    // A doubled final consonant is the inflection's: committed, tagged, labelled.
    let bytes = w.as_bytes();
    if inflected && bytes.len() > 3 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2] {
        let last = bytes[bytes.len() - 1];
        let doubled_l = last == b'l' && w.len() >= 6 && w.ends_with("ell");
        if (!b"aeioulsz".contains(&last)) || doubled_l {
            w.pop();
        }
    }
    if w.len() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// The words of a text: runs of letters and digits, lower-cased.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Kinds of token a query names by their shape rather than by a word: a file path, a
/// directory, a version, a commit sha.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Path,
    Directory,
    Version,
    Sha,
    /// `#12`: the forge's way of naming an issue or a pull request.
    Number,
    /// A span of time written the way trackers take it: `1h30m`, `45m`, `2h`.
    Duration,
    /// `acme/api`: a repository by its owner and name.
    Repository,
    /// `DOCKER_PASSWORD`, `REGION=eu`: a secret's or a variable's name (with its value), which
    /// says which one, not what kind of thing it is.
    Identifier,
}

impl Shape {
    /// The shape of one whitespace-separated token of a query, if it has one.
    pub fn of(token: &str) -> Option<Shape> {
        if !token.bytes().any(in_shapes) {
            return None;
        }
        let t = token.trim_matches(|c: char| "\"'`,;:!?()[]{}<>".contains(c));
        let t = t.strip_suffix('.').unwrap_or(t);
        if t.is_empty() || t.contains("://") {
            return None;
        }
        if t.strip_prefix('#')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            return Some(Shape::Number);
        }
        if is_duration(t) {
            return Some(Shape::Duration);
        }
        if is_identifier(t) {
            return Some(Shape::Identifier);
        }
        let digits_and_dots = |s: &str| {
            !s.is_empty()
                && s.chars().all(|c| c.is_ascii_digit() || c == '.')
                && s.starts_with(|c: char| c.is_ascii_digit())
        };
        let version = t.strip_prefix(['v', 'V']).unwrap_or(t);
        if digits_and_dots(version) && (version.contains('.') || version.len() < t.len()) {
            return Some(Shape::Version);
        }
        if (7..=40).contains(&t.len())
            && t.chars().all(|c| c.is_ascii_hexdigit())
            && t.chars().any(|c| c.is_ascii_digit())
            && t.chars().any(|c| c.is_ascii_alphabetic())
        {
            return Some(Shape::Sha);
        }
        // e.g., i.e.: letters between dots are an abbreviation, not a file name.
        if t.split('.').all(|part| part.len() <= 1) {
            return None;
        }
        let name = t.rsplit('/').next().unwrap_or(t);
        let extension = name.rsplit_once('.').map(|(_, e)| e);
        let file = extension.is_some_and(|e| {
            (1..=9).contains(&e.len()) && e.chars().all(|c| c.is_ascii_alphanumeric())
        }) && !name.ends_with('.');
        if file {
            return Some(Shape::Path);
        }
        if (t.len() > 1 && t.ends_with('/')) || t.matches('/').count() >= 2 {
            return Some(Shape::Directory);
        }
        let name_like = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        match t.split_once('/') {
            Some((owner, repo)) if name_like(owner) && name_like(repo) => Some(Shape::Repository),
            _ => None,
        }
    }
}

/// The name of a dotfile token without its dot (`.gitignore` → `gitignore`), if it is one.
fn dotfile(token: &str) -> Option<&str> {
    let name = token
        .trim_matches(|c: char| "\"'`,;:!?()[]{}<>".contains(c))
        .strip_prefix('.')?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric())).then_some(name)
}

/// Whether a byte is one that every token with a shape has one of (a digit, `/`, `.`, `_`, `=`
/// or `#`): a text without any has no shaped token.
fn in_shapes(b: u8) -> bool {
    b.is_ascii_digit() || b"/._=#".contains(&b)
}

/// Whether `t` is a name in capitals joined by underscores, or any name given a value:
/// `DOCKER_PASSWORD`, `NODE_VERSION=20`, `region=eu`. A capitalised word alone (`README`, `CI`)
/// is a word.
fn is_identifier(t: &str) -> bool {
    let (name, value) = match t.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (t, None),
    };
    let word_chars = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let capitals = name.contains('_') && !name.chars().any(|c| c.is_ascii_lowercase());
    word_chars && (capitals || value.is_some_and(|v| !v.is_empty()))
}

/// Whether `t` is a run of numbers each followed by a unit of time (`1h30m`, `45m`, `2h`).
fn is_duration(t: &str) -> bool {
    let mut rest = t;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Some(unit) = rest[digits..].chars().next() else {
            return false;
        };
        if digits == 0 || !"hms".contains(unit) {
            return false;
        }
        rest = &rest[digits + 1..];
        parts += 1;
    }
    parts > 0
}

/// The words `search_tools` reads a query with, as a manifest declares them (its `search:`
/// block): one value, which [`Vocabulary`] is built from.
#[derive(Debug, Clone, Default)]
pub struct Words {
    /// A word or phrase → the words it stands for.
    pub synonyms: Vec<(String, Vec<String>)>,
    /// A kind of token known by its shape (a path, a version…) → the words it stands for.
    pub shapes: Vec<(Shape, Vec<String>)>,
    /// Words that ask to read.
    pub reading: Vec<String>,
    /// Words that ask to change.
    pub changing: Vec<String>,
    /// Words that ask to remove something (a change too).
    pub deleting: Vec<String>,
    /// A tool verb → the words that ask for it.
    pub verbs: Vec<(String, Vec<String>)>,
    /// The verbs of tools that list things (they go with `verbs`).
    pub lists: Vec<String>,
    /// The start of a request path → the words that say a thing lives there.
    pub scopes: Vec<(String, Vec<String>)>,
    /// Words that say a name next to them is somebody's (`user`, `org`).
    pub whose: Vec<String>,
    /// Names the keywords use as examples (`acme`, `alice`), which no tool's text has.
    pub examples: Vec<String>,
}

impl Words {
    /// These words, with `other`'s (a generated catalog's) filling what these do not declare:
    /// a part declared here stays as it is, whole; a synonym for a word this lacks is added.
    pub fn or(mut self, other: Words) -> Words {
        if self.shapes.iter().all(|(_, words)| words.is_empty()) {
            self.shapes = other.shapes;
        }
        if self.reading.is_empty() && self.changing.is_empty() {
            self.reading = other.reading;
            self.changing = other.changing;
            self.deleting = other.deleting;
        }
        if self.verbs.is_empty() {
            self.verbs = other.verbs;
            self.lists = other.lists;
        }
        if self.scopes.is_empty() {
            self.scopes = other.scopes;
        }
        if self.whose.is_empty() {
            self.whose = other.whose;
        }
        if self.examples.is_empty() {
            self.examples = other.examples;
        }
        for (word, means) in other.synonyms {
            if !self.synonyms.iter().any(|(w, _)| *w == word) {
                self.synonyms.push((word, means));
            }
        }
        self
    }

    /// The vocabulary these words make, stemmed.
    pub fn vocabulary(&self) -> Vocabulary {
        Vocabulary::new(
            self.synonyms
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_slice())),
            self.shapes.iter().map(|(s, v)| (*s, v.as_slice())),
        )
        .with_intents(&self.reading, &self.changing, &self.deleting)
        .with_verbs(self.verbs.iter().map(|(k, v)| (k.as_str(), v.as_slice())))
        .with_lists(&self.lists)
        .with_scopes(&self.scopes)
        .with_whose(&self.whose)
        .with_examples(&self.examples)
    }
}

/// What people say, and what the tools say for it; the keys are stemmed word sequences.
#[derive(Debug, Default)]
pub struct Vocabulary {
    synonyms: Vec<(Vec<String>, Vec<String>)>,
    shapes: Vec<(Shape, Vec<String>)>,
    /// Words that ask to read (`what`, `show`…) and words that ask to change (`add`, `close`…).
    reading: Vec<Vec<String>>,
    changing: Vec<Vec<String>>,
    /// Of those that change, the words that ask to remove (`delete`, `drop`…).
    deleting: Vec<Vec<String>>,
    /// A tool verb (the first word of a tool's name) → the words that ask for it.
    verbs: Vec<(String, Vec<Vec<String>>)>,
    /// The verbs of tools that list (asked for by a plural).
    lists: Vec<String>,
    /// The start of a request path → the stem sequences that say a thing lives there.
    scopes: Vec<(String, Vec<Vec<String>>)>,
    /// The words that only ask for something to be done (`show`, `add`, `delete`) and name
    /// nothing a tool acts on: never a term. Set by the index, which knows the tools.
    intent_only: Option<std::collections::HashSet<String>>,
    /// Every word the tools' texts have, stemmed (set by the index): a word outside it may be
    /// a slip of an intent word.
    known: std::collections::HashSet<String>,
    /// Words that say a name next to them is somebody's (`user`, `org`), stemmed.
    whose: Vec<String>,
    /// Names the keywords use as examples, stemmed: no term of any tool. A few words,
    /// compared one by one (cheaper than hashing every word of every keyword).
    examples: Vec<String>,
}

/// What a query asks for: its weighted terms, and whether it asks to change something (`Some
/// (true)`), to read (`Some(false)`), or does not say.
#[derive(Debug)]
struct Query {
    terms: Vec<(String, f32)>,
    changes: Option<bool>,
    /// Whether the change it asks for is a removal.
    deletes: bool,
    /// The stems of the query's words (before synonyms), for the verbs it may ask for.
    stems: Vec<String>,
    /// The words that only ask for something to be done, stemmed.
    acts: Vec<String>,
    /// The stem of its first word where that reads as an order's verb.
    lead: Option<String>,
    /// Its pairs of consecutive words (see [`pairs_of`]).
    pairs: Vec<(String, String)>,
    /// Whether it names things in the plural ("open issues"), which asks for a list.
    plural: bool,
    /// What it gives a tool's path: numbers, values, a repository, somebody's name.
    given: Slots,
    /// The path starts of where it says the thing lives.
    scopes: Vec<String>,
}

/// How many times the stem sequences of `keys` occur in `stems`.
fn occurrences(keys: &[Vec<String>], stems: &[String]) -> usize {
    keys.iter()
        .map(|key| {
            (0..stems.len())
                .filter(|&i| stems.get(i..i + key.len()) == Some(&key[..]))
                .count()
        })
        .sum()
}

/// Whether one of the stem sequences of `keys` starts at `at` in `stems`.
fn starts_any(keys: &[Vec<String>], stems: &[String], at: usize) -> bool {
    keys.iter()
        .any(|key| stems.get(at..at + key.len()) == Some(&key[..]))
}

/// The stem of a query's first word where it reads as an order's verb: a word in its plain
/// form, first, before what it acts on (`tag commit 7a6b5c4`, `archive the repo`, `label PR
/// 15`, `fork acme/api`), and not the first of a name of two words (`deploy keys acme/api`,
/// `release id 88`).
fn lead(tokens: &[&str]) -> Option<String> {
    let bare = |t: &str| {
        t.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let (word, next) = (bare(tokens.first()?), tokens.get(1)?);
    let plain = word.len() > 2
        && word.chars().all(|c| c.is_ascii_alphabetic())
        && !is_stop_word(&word)
        && !["s", "ed", "ing"].iter().any(|end| word.ends_with(end));
    let shaped = |t: &str| {
        matches!(
            Shape::of(t),
            Some(Shape::Repository | Shape::Sha | Shape::Path | Shape::Version)
        ) || is_number(t)
    };
    let noun = |t: &str| t.ends_with('s') || t == "id";
    let acted_on = DETERMINERS.contains(&bare(next).as_str())
        || shaped(next) && !is_number(next)
        || !noun(&bare(next)) && tokens.get(2).is_some_and(|t| shaped(t));
    (plain && acted_on).then(|| stem(&word))
}

/// How a token of a query names somebody.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name {
    /// Said to be a name: `@nora`, `marta-k`, `user tlee`, `riverbend's`.
    Marked,
    /// A word no tool has, and nothing else.
    Bare,
}

/// Words after which a name is a new thing's, not somebody's ("a repo called dotfiles").
const NAMING: &[&str] = &["called", "named", "titled"];

/// Words that start what a verb acts on ("archive the repo").
const DETERMINERS: &[&str] = &[
    "a", "an", "my", "our", "that", "the", "these", "this", "those",
];

/// Stems that turn the verb after them around.
const NEGATIONS: &[&str] = &["without", "not", "never", "don", "dont", "no"];

/// Where the stem sequences of `keys` first occur in `stems`.
fn first_occurrence(keys: &[Vec<String>], stems: &[String]) -> Option<usize> {
    keys.iter()
        .filter_map(|key| (0..stems.len()).find(|&i| stems.get(i..i + key.len()) == Some(&key[..])))
        .min()
}

/// The stems of the words of one phrase.
fn phrase(text: &str) -> Vec<String> {
    words(text).map(|w| stem(&w)).collect()
}

/// The stems of the words of `texts`.
fn stems_of(texts: &[String]) -> Vec<String> {
    texts
        .iter()
        .flat_map(|m| words(m).collect::<Vec<_>>())
        .map(|w| stem(&w))
        .collect()
}

impl Vocabulary {
    /// Every word or phrase that asks for something to be done: to read, change or remove, or
    /// for a tool verb.
    fn intent_phrases(&self) -> impl Iterator<Item = &Vec<String>> {
        self.reading
            .iter()
            .chain(&self.changing)
            .chain(&self.deleting)
            .chain(self.verbs.iter().flat_map(|(_, asked)| asked))
    }

    /// The one-word intents and verb words (`show`, `add`, `list`).
    fn intent_words(&self) -> Vec<String> {
        self.intent_phrases()
            .filter(|p| p.len() == 1)
            .map(|p| p[0].clone())
            .chain(self.verbs.iter().map(|(verb, _)| verb.clone()))
            .collect()
    }

    /// Whether a phrase is one that asks for something to be done (`pull up`, `get rid of`).
    fn asks(&self, phrase: &[String]) -> bool {
        self.intent_phrases().any(|p| p == phrase)
    }

    /// `stem`, or the word that asks for something to be done it is one slip from ("asign")
    /// when it is no word any tool has.
    fn corrected(&self, stem: String) -> String {
        if stem.len() < MIN_MISSPELT || self.known.contains(&stem) {
            return stem;
        }
        let intents = self.intent_words();
        match intents.iter().find(|i| *i == &stem || one_slip(&stem, i)) {
            Some(intent) => intent.clone(),
            None => stem,
        }
    }

    /// Whether a word is one the index can read: a function word, a word some tool's text has,
    /// a word that asks for something, or part of a synonym.
    fn reads_word(&self, word: &str) -> bool {
        let stemmed = stem(word);
        is_stop_word(word)
            || self.known.contains(&stemmed)
            || self.corrected(stemmed.clone()) != stemmed
            || self.intent_phrases().any(|p| p.contains(&stemmed))
            || self.synonyms.iter().any(|(key, _)| key.contains(&stemmed))
    }

    /// Whether a token of a query is somebody's name (a user's, an organization's), and how:
    /// marked as one, `@nora`, a word no tool has that is spelt like an account (`marta-k`,
    /// `priya_s`, `troll42`) or next to one that says whose (`user tlee`, `the finco org`,
    /// `riverbend's`); or bare, any other word no tool has (`nora`) that is neither one slip
    /// from a word tools have (`isue`) nor a new thing's name (`a repo called dotfiles`).
    fn name(&self, token: &str, before: Option<&str>, after: Option<&str>) -> Option<Name> {
        let marked = |yes: bool| yes.then_some(Name::Marked);
        if Shape::of(token).is_some() {
            return None;
        }
        let t = token.trim_matches(|c: char| "\"'`,;:!?()[]{}<>.".contains(c));
        let (possessive, t) = match t.strip_suffix("'s").or_else(|| t.strip_suffix("\u{2019}s")) {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        if let Some(rest) = t.strip_prefix('@') {
            return marked(!rest.is_empty() && !rest.contains('@'));
        }
        let spelt = t.len() >= 2
            && t.starts_with(|c: char| c.is_ascii_alphabetic())
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c));
        if !spelt {
            return None;
        }
        // An account's name joins words, letters and digits (`marta-k`, `ci_bot`, `troll42`);
        // a lone letter in it is no word either.
        let account_like = t.contains(['-', '_']) || t.chars().any(|c| c.is_ascii_digit());
        if account_like {
            return marked(words(t).any(|w| w.len() < 2 || !self.reads_word(&w)));
        }
        if self.reads_word(t) {
            return None;
        }
        let cue = |w: Option<&str>| {
            w.map(|w| stem(w.trim_matches(|c: char| !c.is_alphanumeric())))
                .is_some_and(|w| self.whose.contains(&w))
        };
        let slip = || {
            let stemmed = stem(t);
            self.known.iter().any(|known| one_slip(&stemmed, known))
        };
        let naming = before.is_some_and(|b| NAMING.contains(&b.to_lowercase().as_str()));
        if possessive || cue(before) || cue(after) {
            Some(Name::Marked)
        } else {
            (t.len() >= 3 && !naming && !NAMING.contains(&t) && !slip()).then_some(Name::Bare)
        }
    }

    /// Whether a stem says what a tool acts on: not a number, and not only a word that asks
    /// for something to be done.
    fn is_content(&self, stem: &str) -> bool {
        !stem.bytes().all(|b| b.is_ascii_digit())
            && self
                .intent_only
                .as_ref()
                .is_none_or(|intents| !intents.contains(stem))
    }

    /// From the manifest's `search.synonyms` (a word or phrase → the words it stands for) and
    /// `search.shapes` (a kind of token → the words it stands for).
    pub fn new<'a>(
        synonyms: impl IntoIterator<Item = (&'a str, &'a [String])>,
        shapes: impl IntoIterator<Item = (Shape, &'a [String])>,
    ) -> Vocabulary {
        let mut list: Vec<(Vec<String>, Vec<String>)> = synonyms
            .into_iter()
            .map(|(key, means)| (phrase(key), stems_of(means)))
            .filter(|(key, _)| !key.is_empty())
            .collect();
        // Longer phrases first, so "pull request" is read before "request".
        list.sort_by_key(|(key, _)| std::cmp::Reverse(key.len()));
        Vocabulary {
            synonyms: list,
            shapes: shapes
                .into_iter()
                .map(|(shape, means)| (shape, stems_of(means)))
                .collect(),
            ..Vocabulary::default()
        }
    }

    /// With the words (or phrases) that ask to read, those that ask to change, and those that
    /// ask to remove.
    pub fn with_intents(
        mut self,
        reading: &[String],
        changing: &[String],
        deleting: &[String],
    ) -> Vocabulary {
        let phrases = |list: &[String]| -> Vec<Vec<String>> {
            list.iter()
                .map(|k| phrase(k))
                .filter(|k| !k.is_empty())
                .collect()
        };
        self.reading = phrases(reading);
        self.changing = phrases(changing);
        self.deleting = phrases(deleting);
        self
    }

    /// With the verbs of tools that list things, asked for when a query names things in the
    /// plural and asks nothing else of them.
    pub fn with_lists(mut self, lists: &[String]) -> Vocabulary {
        self.lists = lists.iter().map(|l| stem(l)).collect();
        self
    }

    /// With where things live: a path start → the words that say a thing lives there.
    pub fn with_scopes(mut self, scopes: &[(String, Vec<String>)]) -> Vocabulary {
        self.scopes = scopes
            .iter()
            .map(|(path, words)| (unnamed(path), words.iter().map(|w| phrase(w)).collect()))
            .collect();
        self
    }

    /// With the names the keywords use as examples.
    pub fn with_examples(mut self, examples: &[String]) -> Vocabulary {
        self.examples = examples.iter().map(|w| stem(w)).collect();
        self
    }

    /// With the words that say a name next to them is somebody's.
    pub fn with_whose(mut self, whose: &[String]) -> Vocabulary {
        self.whose = whose.iter().map(|w| stem(w)).collect();
        self
    }

    /// The path starts whose words the query says, judged on its stems and its terms.
    fn scopes_of(&self, stems: &[String], terms: &[(String, f32)]) -> Vec<String> {
        let terms: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
        self.scopes
            .iter()
            .filter(|(_, words)| occurrences(words, stems) + occurrences(words, &terms) > 0)
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// With the words that ask for each tool verb (`list` ← which, all, any…).
    pub fn with_verbs<'a>(
        mut self,
        verbs: impl IntoIterator<Item = (&'a str, &'a [String])>,
    ) -> Vocabulary {
        self.verbs = verbs
            .into_iter()
            .map(|(verb, asked)| (stem(verb), asked.iter().map(|a| phrase(a)).collect()))
            .collect();
        self
    }

    /// What a query asks for: what its shaped tokens stand for, what its synonyms stand for,
    /// and its other words (a word a synonym reads stands for the synonym's words only).
    fn read(&self, query: &str, expansion: f32) -> Query {
        let mut terms: Vec<(String, f32)> = Vec::new();
        let add = |term: String, weight: f32, terms: &mut Vec<(String, f32)>| match terms
            .iter_mut()
            .find(|(t, _)| *t == term)
        {
            Some((_, w)) => *w = w.max(weight),
            None => terms.push((term, weight)),
        };
        // A path's or a sha's own words would only match by accident.
        let mut plain = Vec::new();
        // Quoted text is a value the tool is given (a title, a comment, a name), not words
        // about which tool.
        let (text, quoted) = unquoted(query);
        let mut given = Slots::of_tokens(text.split_whitespace(), quoted);
        let tokens: Vec<&str> = query.split_whitespace().collect();
        let lead = lead(&tokens);
        // One bare name is somebody's; a query of several words no tool has is not about
        // people (`configure the frobnicator quantum`).
        let names: Vec<Name> = (0..tokens.len())
            .filter_map(|i| {
                let before = i.checked_sub(1).map(|b| tokens[b]);
                self.name(tokens[i], before, tokens.get(i + 1).copied())
            })
            .collect();
        let bare = names.iter().filter(|n| **n == Name::Bare).count();
        given.someone = names.contains(&Name::Marked) || bare == 1;
        for token in text.split_whitespace() {
            match Shape::of(token) {
                Some(shape) => {
                    for (_, means) in self.shapes.iter().filter(|(s, _)| *s == shape) {
                        for m in means {
                            add(m.clone(), expansion, &mut terms);
                        }
                    }
                    // A dotfile's name is also the word for what it holds (`.gitignore`).
                    if shape == Shape::Path
                        && let Some(name) = dotfile(token)
                    {
                        plain.push(name);
                    }
                }
                None => plain.push(token),
            }
        }
        let raw: Vec<String> = words(&plain.join(" ")).collect();
        let stems: Vec<String> = raw.iter().map(|w| self.corrected(stem(w))).collect();
        let mut covered = vec![false; stems.len()];
        // A phrase that names a thing ("pull request", "merge request") asks for nothing to be
        // done, whatever its words would ask alone.
        let mut named = vec![false; stems.len()];
        for (key, means) in &self.synonyms {
            for start in 0..stems.len() {
                let end = start + key.len();
                if end <= stems.len()
                    && stems[start..end] == key[..]
                    && !covered[start..end].iter().any(|&c| c)
                {
                    covered[start..end].iter_mut().for_each(|c| *c = true);
                    if key.len() > 1 && !self.asks(key) {
                        named[start..end].iter_mut().for_each(|n| *n = true);
                    }
                    for m in means {
                        // The word itself, kept among what it stands for, is still said.
                        let own = key.len() == 1 && *m == key[0];
                        add(m.clone(), if own { 1.0 } else { expansion }, &mut terms);
                    }
                }
            }
        }
        for (i, (word, stemmed)) in raw.iter().zip(&stems).enumerate() {
            // A lone letter is what an apostrophe leaves ("what's", "PR's"), not a word.
            if covered[i] || word.len() < 2 || is_stop_word(word) {
                continue;
            }
            // A verb's past form before a word it describes ("merged pull requests", "closed
            // tickets") says which of them, not what is done.
            let describes = word.ends_with("ed")
                && word != stemmed
                && raw.get(i + 1).is_some_and(|next| !is_stop_word(next));
            let weight = if describes { DESCRIBING } else { 1.0 };
            add(stemmed.clone(), weight, &mut terms);
        }
        // A word that only asks for a change may still name the field the change sets
        // (`archive` → `archived`).
        let acts = terms
            .iter()
            .filter(|(term, _)| !self.is_content(term) && !term.bytes().all(|b| b.is_ascii_digit()))
            .map(|(term, _)| term.clone())
            .collect();
        terms.retain(|(term, _)| self.is_content(term));
        // What the query asks to be done: a verb in its past form describes rather than asks
        // ("the closed tickets", "what has acme published").
        let stems: Vec<String> = raw
            .iter()
            .zip(stems)
            .zip(named)
            .map(|((word, stemmed), named)| {
                match named || (word.ends_with("ed") && *word != stemmed) {
                    true => String::new(),
                    false => stemmed,
                }
            })
            .collect();
        // "without deleting it" asks for no removal.
        let negated = |at: usize| at > 0 && NEGATIONS.contains(&stems[at - 1].as_str());
        let removals: Vec<usize> = (0..stems.len())
            .filter(|&at| starts_any(&self.deleting, &stems, at) && !negated(at))
            .collect();
        // A question reads.
        let (reads, changes) = (
            occurrences(&self.reading, &stems) + usize::from(query.trim_end().ends_with('?')),
            occurrences(&self.changing, &stems) + removals.len(),
        );
        // The first change asked for is what the query is about ("merge it and delete the
        // branch" merges); a removal phrase that starts at a change word is the longer reading
        // of it ("stop watching" removes, though "stop" alone changes).
        let removes_first = removals.first().is_some_and(|&at| {
            first_occurrence(&self.changing, &stems).is_none_or(|change| at <= change)
        });
        // As many reading words as changing ones: the first of them says what is asked
        // ("upload my key so that commits show verified").
        let first_change = [
            first_occurrence(&self.changing, &stems),
            removals.first().copied(),
        ]
        .into_iter()
        .flatten()
        .min();
        let changes = match reads.cmp(&changes) {
            std::cmp::Ordering::Less => Some(true),
            std::cmp::Ordering::Greater => Some(false),
            std::cmp::Ordering::Equal => {
                match (first_occurrence(&self.reading, &stems), first_change) {
                    (Some(read), Some(change)) => Some(change < read),
                    _ => None,
                }
            }
        };
        let scopes = self.scopes_of(&stems, &terms);
        Query {
            terms,
            changes,
            given,
            scopes,
            deletes: changes == Some(true) && removes_first,
            // A word that asks in the plural ("details") names no things.
            plural: raw.iter().zip(&stems).any(|(w, s)| {
                w.len() > 3
                    && w.ends_with('s')
                    && *w != *s
                    && !is_stop_word(w)
                    && !self.asks(std::slice::from_ref(s))
            }),
            stems,
            acts,
            lead,
            pairs: pairs_of(&text),
        }
    }
}

/// One tool as the index sees it.
#[derive(Debug)]
struct Doc {
    /// Each term, with the weight of the best field it is in.
    terms: HashMap<String, f32>,
    generated: bool,
    read_only: bool,
    /// Whether it removes something (sends DELETE).
    deletes: bool,
    /// What its path takes.
    takes: Slots,
    /// Its request's path, placeholders unnamed (`/repos/{}/{}/issues`): where what it acts on
    /// lives.
    path: String,
    /// The first word of the tool's name (its action), stemmed.
    verb: String,
    /// The other words of its name (what it acts on), stemmed.
    object: Vec<String>,
    /// The words of its argument names, stemmed: the fields it sets.
    fields: std::collections::HashSet<String>,
    /// Pairs of words that follow each other in its title, summary or a keyword ("blob sha",
    /// "who approved"), stemmed and without function words.
    pairs: std::collections::HashSet<(String, String)>,
}

/// The pairs of consecutive words of `text` that are not function words, stemmed. A token
/// known by its shape (`acme/api`, `DEPLOY_ENV=prod`) says which thing, so its words pair with
/// nothing.
fn pairs_of(text: &str) -> Vec<(String, String)> {
    let kept: Vec<String> = match text.bytes().any(in_shapes) {
        true => text
            .split_whitespace()
            .filter(|token| Shape::of(token).is_none())
            .flat_map(words)
            .collect(),
        false => words(text).collect(),
    };
    let stems: Vec<String> = kept
        .iter()
        .filter(|w| !is_stop_word(w))
        .map(|w| stem(w))
        .collect();
    stems
        .windows(2)
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect()
}

/// An index of tools.
#[derive(Debug, Default)]
pub struct SearchIndex {
    weights: Weights,
    docs: Vec<Doc>,
    /// How many documents hold each term.
    frequency: HashMap<String, u32>,
    vocabulary: Vocabulary,
    /// Every word that names what some entry acts on: such a word in a query names a thing,
    /// even where some tool's name begins with it ("push mirrors", not `mirror_sync_repo`).
    objects: std::collections::HashSet<String>,
}

/// One ranked entry: its position among the indexed entries, and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub entry: usize,
    pub score: f32,
}

/// What the index reads of one entry: a tool, or an operation of the forge's API that no tool
/// of the catalog serves.
#[derive(Debug, Clone, Default)]
pub struct Entry<'a> {
    /// Its name's words: the first is its verb (what it does), the others what it acts on. A
    /// curated tool's name; a generated tool's or an operation's title, which is built from the
    /// operation in those words (`catalog::title`).
    pub name: &'a str,
    pub title: &'a str,
    pub toolset: &'a str,
    pub toolset_description: Option<String>,
    pub summary: &'a str,
    /// The rest of its description.
    pub detail: &'a str,
    pub args: Vec<&'a str>,
    pub keywords: &'a [String],
    pub read_only: bool,
    /// Whether it removes something (sends DELETE).
    pub deletes: bool,
    /// Its request's path.
    pub path: String,
    /// Generated rather than curated (an operation without a tool is generated too).
    pub generated: bool,
}

/// A request path with its placeholders unnamed (`/repos/{}/{}/issues`), as scopes and paths
/// are compared.
fn unnamed(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push('{');
            }
            '}' => {
                inside = false;
                out.push('}');
            }
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

impl<'a> Entry<'a> {
    /// A tool of the catalog, with its toolset's description.
    pub fn tool(tool: &'a Tool, toolset_description: Option<String>) -> Entry<'a> {
        Entry {
            name: match tool.generated {
                true => &tool.title,
                false => &tool.name,
            },
            title: &tool.title,
            toolset: &tool.toolset,
            toolset_description,
            summary: &tool.summary,
            detail: tool.description.get(tool.summary.len()..).unwrap_or(""),
            args: tool.args.iter().map(|a| a.name.as_str()).collect(),
            keywords: &tool.keywords,
            read_only: tool.annotations.read_only,
            deletes: tool.method() == Some(Method::Delete),
            path: tool.path_pattern(),
            generated: tool.generated,
        }
    }
}

impl SearchIndex {
    /// Indexes `entries` with the default weights.
    pub fn new<'a>(entries: impl IntoIterator<Item = Entry<'a>>, vocabulary: Vocabulary) -> Self {
        SearchIndex::weighted(entries, vocabulary, Weights::default())
    }

    /// [`SearchIndex::new`] with other weights.
    pub fn weighted<'a>(
        entries: impl IntoIterator<Item = Entry<'a>>,
        vocabulary: Vocabulary,
        weights: Weights,
    ) -> SearchIndex {
        let entries: Vec<Entry<'a>> = entries.into_iter().collect();
        let named: Vec<(String, Vec<String>)> = entries
            .iter()
            .map(|entry| {
                let mut name = words(entry.name)
                    .filter(|w| !is_stop_word(w))
                    .map(|w| stem(&w));
                let verb = name.next().unwrap_or_default();
                (verb, name.collect())
            })
            .collect();
        // What a query asks be done is scored apart (see `score`): as a term, "show" or "add"
        // would weigh by how rare it is, which says nothing about what the tool acts on. A
        // word that also names what some tool acts on ("merge", "run", "review") stays one.
        let objects: std::collections::HashSet<String> = named
            .iter()
            .flat_map(|(_, object)| object.iter().cloned())
            .collect();
        let mut vocabulary = vocabulary;
        vocabulary.intent_only = Some(
            vocabulary
                .intent_words()
                .into_iter()
                .filter(|w| !objects.contains(w))
                .collect(),
        );
        let mut docs = Vec::with_capacity(entries.len());
        let mut frequency: HashMap<String, u32> = HashMap::new();
        for (entry, (verb, object)) in entries.iter().zip(named) {
            let mut terms: HashMap<String, f32> = HashMap::new();
            let mut put = |text: &str, weight: f32| {
                for w in words(text) {
                    let stemmed = stem(&w);
                    if vocabulary.is_content(&stemmed) && !vocabulary.examples.contains(&stemmed) {
                        let best = terms.entry(stemmed).or_default();
                        *best = best.max(weight);
                    }
                }
            };
            put(entry.name, weights.name);
            put(entry.title, weights.title);
            put(entry.toolset, weights.toolset);
            if let Some(d) = &entry.toolset_description {
                put(d, weights.detail);
            }
            put(entry.summary, weights.summary);
            put(entry.detail, weights.detail);
            for arg in &entry.args {
                put(arg, weights.argument);
            }
            for keyword in entry.keywords {
                put(keyword, weights.keywords);
            }
            let pairs = [entry.title, entry.summary]
                .into_iter()
                .chain(entry.keywords.iter().map(String::as_str))
                .flat_map(pairs_of)
                .filter(|(a, b)| {
                    !vocabulary.examples.contains(a) && !vocabulary.examples.contains(b)
                })
                .collect();
            for term in terms.keys() {
                *frequency.entry(term.clone()).or_default() += 1;
            }
            docs.push(Doc {
                terms,
                generated: entry.generated,
                read_only: entry.read_only,
                deletes: entry.deletes,
                takes: Slots::of_path(&entry.path),
                path: unnamed(&entry.path),
                verb,
                object,
                fields: entry
                    .args
                    .iter()
                    .flat_map(|arg| words(arg))
                    .map(|w| stem(&w))
                    .collect(),
                pairs,
            });
        }
        vocabulary.known = frequency.keys().cloned().collect();
        SearchIndex {
            weights,
            docs,
            frequency,
            vocabulary,
            objects,
        }
    }

    /// The best `limit` tools for `query`, best first; tools that match no word are left out.
    ///
    /// A query word is worth its rarity (idf) times the weight of the best field of the tool it
    /// is in. The words of the tool's name the query does not mention cost a part of theirs
    /// (so `get_pull_request_diff` needs the diff mentioned to beat `get_pull_request`); a verb
    /// the query asks for, and reading or changing as the query asks, add to it.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let asked = self.ask(query);
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let score = self.score(doc, &asked, &mut None)?;
                Some(Hit { entry: i, score })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry.cmp(&b.entry)));
        hits.truncate(limit);
        hits
    }

    /// How entry `entry` scores for `query`, part by part (for the evaluation's `--explain`).
    pub fn explain(&self, query: &str, entry: usize) -> Vec<(String, f32)> {
        let asked = self.ask(query);
        let mut parts = Some(Vec::new());
        let total = self.score(&self.docs[entry], &asked, &mut parts);
        let mut parts = parts.unwrap_or_default();
        parts.push(("total".to_owned(), total.unwrap_or(f32::NAN)));
        parts
    }

    /// What a query asks, read once for every entry.
    fn ask(&self, query: &str) -> Asked {
        let Query {
            mut terms,
            changes,
            deletes,
            stems,
            acts,
            lead,
            pairs,
            plural,
            given,
            scopes,
        } = self.vocabulary.read(query, self.weights.expansion);
        // A thing's name said first as an order's verb asks to change it.
        let changes = match (changes, &lead) {
            (None, Some(lead)) if self.objects.contains(lead) => Some(true),
            (changes, _) => changes,
        };
        // A word no tool has, one slip away from words tools have ("isue", "brnach"): those.
        let unknown: Vec<(String, f32)> = terms
            .iter()
            .filter(|(t, _)| t.len() >= MIN_MISSPELT && !self.frequency.contains_key(t))
            .cloned()
            .collect();
        for (word, weight) in unknown {
            for known in self.frequency.keys().filter(|k| one_slip(&word, k)) {
                if !terms.iter().any(|(t, _)| t == known) {
                    terms.push((known.clone(), weight * MISSPELT));
                }
            }
        }
        // The verbs the query asks for, where it first asks for each: the first one is what
        // the query is about ("merge #40 and delete the branch" merges). A verb only the API's
        // operations have ("unblock") asks for them as a curated tool's does.
        let mut verbs: Vec<(usize, String)> = self
            .vocabulary
            .verbs
            .iter()
            .filter_map(|(verb, words)| {
                first_occurrence(words, &stems).map(|at| (at, verb.clone()))
            })
            .chain(
                stems
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| {
                        !self.objects.contains(s.as_str())
                            && self.docs.iter().any(|d| &d.verb == *s)
                    })
                    .map(|(at, s)| (at, s.clone())),
            )
            // An order's first word is its verb, where some tool has it ("transfer acme/api").
            .chain(
                lead.filter(|l| self.docs.iter().any(|d| d.verb == *l))
                    .map(|l| (0, l)),
            )
            .collect();
        // Things named in the plural, and nothing asked of them but to be shown: a list of
        // them ("show me the open tickets").
        if plural && changes != Some(true) && verbs.iter().all(|(_, verb)| verb == GET) {
            let at = verbs.first().map_or(0, |(at, _)| *at);
            verbs.clear();
            verbs.extend(self.vocabulary.lists.iter().map(|l| (at, l.clone())));
        }
        verbs.sort();
        Asked {
            first: verbs.first().map(|(at, _)| *at),
            verbs,
            terms,
            acts,
            changes,
            deletes,
            given,
            singular: !plural,
            scopes,
            pairs,
        }
    }

    fn idf(&self, term: &str) -> f32 {
        let n = self.docs.len() as f32;
        let df = self.frequency.get(term).copied().unwrap_or(0) as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// `doc`'s score for what was asked, `None` when it matches nothing; each part is added to
    /// `parts` when that is given.
    fn score(
        &self,
        doc: &Doc,
        asked: &Asked,
        parts: &mut Option<Vec<(String, f32)>>,
    ) -> Option<f32> {
        let w = &self.weights;
        let mut note = |what: String, value: f32| {
            if let Some(parts) = parts.as_mut()
                && value != 0.0
            {
                parts.push((what, value));
            }
            value
        };
        let verb_asked = asked
            .verbs
            .iter()
            .find(|(_, v)| *v == doc.verb)
            .map(|(at, _)| Some(*at) == asked.first);
        let mut score: f32 = 0.0;
        for (term, weight) in &asked.terms {
            if let Some(field) = doc.terms.get(term) {
                score += note(format!("term {term}"), weight * field * self.idf(term));
            }
        }
        let pairs = asked
            .pairs
            .iter()
            .filter(|pair| doc.pairs.contains(*pair))
            .count() as f32;
        score += note("pairs".to_owned(), w.pair * pairs);
        // A change that names the field it sets (`archive` → `archived`), or the thing it makes
        // (`protect` → a protection rule, `attach` → an attachment).
        for act in &asked.acts {
            let makes = |o: &String| {
                act.len() >= MIN_MAKER && o.len() > act.len() && o.starts_with(act.as_str())
            };
            if doc.fields.contains(act) || doc.object.iter().any(makes) {
                score += note(format!("field {act}"), w.field);
            }
        }
        if score <= 0.0 && verb_asked.is_none() {
            return None;
        }
        let unnamed: f32 = doc
            .object
            .iter()
            .filter(|o| !asked.terms.iter().any(|(t, _)| t == *o))
            .map(|o| self.idf(o))
            .sum();
        score -= note("unnamed".to_owned(), w.unnamed * unnamed);
        score += note(
            "verb".to_owned(),
            match verb_asked {
                Some(true) => w.verb_asked,
                Some(false) => w.verb_asked * LATER_VERB,
                None if asked.verbs.is_empty() => 0.0,
                None => w.verb_other,
            },
        );
        // Reading, changing and removing are three intents: a removal asked for is not an
        // edit, nor an addition a removal.
        score += note(
            "intent".to_owned(),
            match asked.changes {
                Some(true) if !doc.read_only && asked.deletes == doc.deletes => w.agrees,
                Some(false) if doc.read_only => w.agrees,
                Some(_) => w.disagrees,
                None if doc.read_only => w.unasked_read,
                None => 0.0,
            },
        );
        if asked.singular && asked.changes != Some(true) && doc.verb == GET {
            score += note("singular".to_owned(), w.singular);
        }
        // What the query says of where, whose or which one, against what the tool's path
        // takes: it fits or it does not.
        let (given, takes) = (&asked.given, &doc.takes);
        let there = asked
            .scopes
            .iter()
            .any(|p| doc.path.starts_with(p.as_str()));
        for (part, said, fits, (fit, misfit)) in [
            (
                "scope",
                !asked.scopes.is_empty(),
                there,
                (w.scoped, w.unscoped),
            ),
            (
                "someone",
                given.someone,
                takes.someone,
                (w.someone, w.no_one),
            ),
            (
                "number",
                given.numbers > 0,
                takes.numbers > 0,
                (w.numbered, w.unnumbered),
            ),
            (
                "value",
                given.values > 0,
                takes.values > 0,
                (w.valued, w.unvalued),
            ),
            (
                "repository",
                given.repository,
                takes.repository,
                (w.repository, w.no_repository),
            ),
            (
                "no repository",
                !given.repository,
                !takes.repository,
                (0.0, w.repository_unnamed),
            ),
        ] {
            if said {
                score += note(part.to_owned(), if fits { fit } else { misfit });
            }
        }
        // The numbers the path takes that the query does not give.
        let short = takes.numbers.saturating_sub(given.numbers) as f32;
        score += note("numbers short".to_owned(), w.number_short * short);
        if doc.generated {
            score *= w.generated;
        }
        Some(score)
    }
}

/// A query as every entry is scored against it.
struct Asked {
    terms: Vec<(String, f32)>,
    /// The words that only ask for something to be done, stemmed.
    acts: Vec<String>,
    changes: Option<bool>,
    deletes: bool,
    /// What it gives a tool's path.
    given: Slots,
    /// Whether it names its things only in the singular.
    singular: bool,
    /// The path starts of where the query says the thing lives.
    scopes: Vec<String>,
    /// The tool verbs asked for, each where it is first asked, in order.
    verbs: Vec<(usize, String)>,
    /// Where the first verb is asked.
    first: Option<usize>,
    pairs: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_share_a_stem() {
        for (a, b) in [
            ("issues", "issue"),
            ("labels", "label"),
            ("branches", "branch"),
            ("repositories", "repository"),
            ("merged", "merge"),
            ("merging", "merge"),
            ("created", "create"),
            ("statuses", "status"),
            ("releases", "release"),
            ("patches", "patch"),
            ("committed", "commit"),
            ("tagged", "tag"),
            ("labelled", "label"),
            ("pulled", "pull"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("status"), stem("stat"));
    }

    #[test]
    fn one_slip_of_the_keyboard() {
        for (a, b) in [
            ("isue", "issue"),
            ("brnach", "branch"),
            ("reveiw", "review"),
            ("relase", "release"),
            ("labell", "label"),
        ] {
            assert!(one_slip(a, b), "{a} / {b}");
        }
        for (a, b) in [
            ("issue", "issue"),
            ("issu", "tissues"),
            ("merg", "morgue"),
            ("branch", "brunch!"),
        ] {
            assert!(!one_slip(a, b), "{a} / {b}");
        }
    }

    /// An index over three small tools, with the words that ask for something to be done.
    fn little_index() -> SearchIndex {
        let vocabulary = Vocabulary::new([], [])
            .with_intents(
                &["show".to_owned()],
                &["add".to_owned(), "assign".to_owned()],
                &["delete".to_owned()],
            )
            .with_verbs([
                ("get", &["show".to_owned()][..]),
                ("add", &["add".to_owned()][..]),
                ("list", &[][..]),
            ])
            .with_lists(&["list".to_owned()])
            .with_scopes(&[("/orgs/".to_owned(), vec!["org".to_owned()])]);
        let entry = |name: &'static str, path: &str, read_only: bool| Entry {
            name,
            title: name,
            read_only,
            path: path.to_owned(),
            ..Entry::default()
        };
        SearchIndex::new(
            [
                entry("get_issue", "/repos/{owner}/{repo}/issues/{index}", true),
                entry("list_issues", "/repos/{owner}/{repo}/issues", true),
                entry("add_org_label", "/orgs/{org}/labels", false),
            ],
            vocabulary,
        )
    }

    #[test]
    fn words_that_ask_and_numbers_are_no_terms_and_slips_of_them_ask() {
        let index = little_index();
        let terms = |q: &str| -> Vec<String> {
            index
                .vocabulary
                .read(q, 1.0)
                .terms
                .into_iter()
                .map(|(t, _)| t)
                .collect()
        };
        assert_eq!(terms("show issue 12"), ["issu"]);
        // A slip of a word that asks is read as that word: it asks, and is no term.
        assert_eq!(
            index.vocabulary.read("asign issue 4", 1.0).changes,
            Some(true)
        );
        assert_eq!(terms("asign issue 4"), ["issu"]);
        // A number names one thing: the tool that takes one comes first.
        let first = |q: &str| index.search(q, 3)[0].entry;
        assert_eq!(first("show issue 12"), 0);
        assert_eq!(first("show the issues"), 1);
        // Where the thing lives decides between tools that match alike.
        let org = index.explain("add an org label", 2);
        assert!(
            org.iter().any(|(part, v)| part == "scope" && *v > 0.0),
            "{org:?}"
        );
    }

    /// An index of a team's two additions, read with the words that say whose.
    fn team_index() -> SearchIndex {
        let vocabulary = Vocabulary::new([], [])
            .with_intents(&[], &["add".to_owned()], &[])
            .with_verbs([("add", &["add".to_owned()][..])])
            .with_whose(&["user".to_owned(), "org".to_owned()]);
        let entry = |name: &'static str, path: &str| Entry {
            name,
            title: name,
            path: path.to_owned(),
            ..Entry::default()
        };
        SearchIndex::new(
            [
                entry("add_team_repo", "/teams/{id}/repos/{org}/{repo}"),
                entry("add_team_member", "/teams/{id}/members/{username}"),
            ],
            vocabulary,
        )
    }

    #[test]
    fn a_name_is_known_by_its_spelling_or_by_a_word_that_says_whose() {
        let index = team_index();
        let someone = |q: &str| index.vocabulary.read(q, 1.0).given.someone;
        for query in [
            "add marta-k to team 4",
            "add @nora to team 4",
            "add priya_s to team 4",
            "add user nora to team 4",
            "add the finco org",
            "riverbend's team",
            "add nora to team 4",
        ] {
            assert!(someone(query), "{query}");
        }
        // A slip of a word the tools have is that word, a new thing's name is no one's, and
        // several words no tool has are no one's either; words the tools have joined by a
        // hyphen are words; a repository and a version are no names.
        for query in [
            "add teem 4",
            "add a team called platform",
            "add the frobnicator quantum",
            "add team-repo 4",
            "add acme/api to team 4",
            "add v1.2.0",
            "add 4",
        ] {
            assert!(!someone(query), "{query}");
        }
        // Who is added decides between the team's two additions.
        let first = |q: &str| index.search(q, 2)[0].entry;
        assert_eq!(first("add user nora to team 4"), 1);
        assert_eq!(first("add nora to team 4"), 1);
        assert_eq!(first("add marta-k to team 4"), 1);
    }

    #[test]
    fn a_verb_only_an_operation_has_asks_for_it() {
        let vocabulary = Vocabulary::new([], []).with_intents(&[], &["unblock".to_owned()], &[]);
        let index = SearchIndex::new(
            [Entry {
                name: "Unblock a user",
                title: "Unblock a user",
                path: "/user/unblock/{username}".to_owned(),
                generated: true,
                ..Entry::default()
            }],
            vocabulary,
        );
        assert_eq!(index.search("unblock troll42", 5).len(), 1);
    }

    #[test]
    fn a_past_form_before_a_word_describes_it() {
        let vocabulary = Vocabulary::new([], []);
        let weight = |q: &str, term: &str| {
            vocabulary
                .read(q, 1.0)
                .terms
                .into_iter()
                .find(|(t, _)| t == term)
                .map(|(_, w)| w)
        };
        assert_eq!(weight("merged pull requests", "merg"), Some(DESCRIBING));
        assert_eq!(weight("closed tickets of acme", "clos"), Some(DESCRIBING));
        assert_eq!(weight("what got merged", "merg"), Some(1.0));
        assert_eq!(weight("merge pull requests", "merg"), Some(1.0));
    }

    #[test]
    fn a_phrase_that_names_a_thing_asks_for_nothing() {
        let pr = ["pull request".to_owned()];
        let vocabulary = Vocabulary::new([("pull request", &pr[..])], []).with_intents(
            &[],
            &["request".to_owned()],
            &[],
        );
        assert_eq!(
            vocabulary.read("the pull request of acme", 1.0).changes,
            None
        );
        assert_eq!(vocabulary.read("request a review", 1.0).changes, Some(true));
    }

    #[test]
    fn a_query_asks_to_read_or_to_change() {
        let vocabulary = Vocabulary::new([], []).with_intents(
            &["what".to_owned(), "show".to_owned()],
            &[
                "close".to_owned(),
                "look into".to_owned(),
                "stop".to_owned(),
            ],
            &["delete".to_owned(), "stop watching".to_owned()],
        );
        assert_eq!(vocabulary.read("what is open", 1.0).changes, Some(false));
        assert!(vocabulary.read("stop watching acme/api", 1.0).deletes);
        assert!(!vocabulary.read("stop the run", 1.0).deletes);
        assert_eq!(vocabulary.read("close issue 4", 1.0).changes, Some(true));
        assert!(!vocabulary.read("close issue 4", 1.0).deletes);
        let removal = vocabulary.read("delete the branch", 1.0);
        assert_eq!((removal.changes, removal.deletes), (Some(true), true));
        assert!(!vocabulary.read("what did delete do?", 1.0).deletes);
        assert!(!vocabulary.read("close it without deleting it", 1.0).deletes);
        assert!(
            !vocabulary
                .read("close it and delete the branch", 1.0)
                .deletes
        );
        // As many reading words as changing ones: the first one decides.
        assert_eq!(
            vocabulary.read("look into it and show me", 1.0).changes,
            Some(true)
        );
        assert_eq!(
            vocabulary.read("show me and look into it", 1.0).changes,
            Some(false)
        );
        // A past form describes: "the closed issues" asks to read.
        assert_eq!(
            vocabulary.read("the closed issues: show them", 1.0).changes,
            Some(false)
        );
        assert_eq!(vocabulary.read("issue 4", 1.0).changes, None);
    }

    #[test]
    fn tokens_are_known_by_their_shape() {
        let cases = [
            ("src/auth.rs", Some(Shape::Path)),
            ("Cargo.toml,", Some(Shape::Path)),
            ("'config/app.yml'", Some(Shape::Path)),
            (".gitignore", Some(Shape::Path)),
            ("docs/", Some(Shape::Directory)),
            ("deploy/k8s/overlays/prod", Some(Shape::Directory)),
            ("acme/widgets", Some(Shape::Repository)),
            ("cobalt/deploy,", Some(Shape::Repository)),
            ("/", None),
            ("v1.12.0", Some(Shape::Version)),
            ("1.3.2.", Some(Shape::Version)),
            ("v2", Some(Shape::Version)),
            ("e1f2a3b", Some(Shape::Sha)),
            ("deadbeef", None),
            ("1234567", None),
            ("#12", Some(Shape::Number)),
            ("DOCKER_PASSWORD", Some(Shape::Identifier)),
            ("NODE_VERSION=20", Some(Shape::Identifier)),
            ("region=eu-west", Some(Shape::Identifier)),
            ("README", None),
            ("a=", None),
            ("1h30m", Some(Shape::Duration)),
            ("45m", Some(Shape::Duration)),
            ("2h,", Some(Shape::Duration)),
            ("h2", None),
            ("1d", None),
            ("#x", None),
            ("https://example.com/a.html", None),
            ("e.g.", None),
        ];
        for (token, shape) in cases {
            assert_eq!(Shape::of(token), shape, "{token}");
        }
        let file = ["file".to_owned()];
        let vocabulary = Vocabulary::new([], [(Shape::Path, &file[..])]);
        let terms = vocabulary.read("show src/auth.rs", 1.0).terms;
        let names: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(
            names.contains(&"file") && !names.contains(&"auth"),
            "{names:?}"
        );
    }

    #[test]
    fn every_stop_word_is_found() {
        // Binary search finds only what is in order: a word added out of place would be kept.
        for word in STOP_WORDS {
            assert!(is_stop_word(word), "{word} is out of order in STOP_WORDS");
        }
        assert!(!is_stop_word("branch"));
    }

    #[test]
    fn phrases_are_read_before_their_words_and_stop_words_are_dropped() {
        let pr = ["pull".to_owned()];
        let request = ["ask".to_owned()];
        let vocabulary =
            Vocabulary::new([("merge request", &pr[..]), ("request", &request[..])], []);
        let terms = vocabulary.read("show me the merge requests", 1.0).terms;
        let names: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(names.contains(&"pull"), "{names:?}");
        assert!(
            !names.contains(&"ask"),
            "the phrase took the word: {names:?}"
        );
        let terms = vocabulary.read("request a review", 1.0).terms;
        assert!(terms.iter().any(|(t, _)| t == "ask"), "{terms:?}");
        assert!(
            !names.contains(&"the") && !names.contains(&"me"),
            "{names:?}"
        );
        assert!(names.contains(&"show"), "{names:?}");
    }

    /// The names of `entries`, best first, for `query`; the first scores more than the next,
    /// so that no test passes by the entries' order.
    fn ranked(entries: &[Entry], vocabulary: Vocabulary, query: &str) -> Vec<String> {
        let names: Vec<String> = entries.iter().map(|e| e.name.to_owned()).collect();
        let hits = SearchIndex::new(entries.iter().cloned(), vocabulary).search(query, 10);
        if let [first, second, ..] = &hits[..] {
            assert!(first.score > second.score, "a tie for {query}: {hits:?}");
        }
        hits.into_iter()
            .map(|hit| names[hit.entry].clone())
            .collect()
    }

    fn at<'a>(name: &'a str, path: &str, read_only: bool) -> Entry<'a> {
        Entry {
            name,
            title: name,
            read_only,
            deletes: name.starts_with("delete"),
            path: path.to_owned(),
            ..Entry::default()
        }
    }

    #[test]
    fn a_tool_that_takes_what_the_query_gives_comes_first() {
        let vocabulary = || {
            Vocabulary::new([], [])
                .with_intents(&["list".to_owned()], &[], &["delete".to_owned()])
                .with_verbs([
                    ("delete", &["delete".to_owned()][..]),
                    ("list", &["list".to_owned()][..]),
                ])
        };
        // One number given: not the tool that also wants the issue's.
        let comments = [
            at(
                "delete_issue_comment_by_index",
                "/repos/{owner}/{repo}/issues/{index}/comments/{id}",
                false,
            ),
            at(
                "delete_issue_comment",
                "/repos/{owner}/{repo}/issues/comments/{id}",
                false,
            ),
        ];
        let found = ranked(
            &comments,
            vocabulary(),
            "delete issue comment 7788 in acme/app",
        );
        assert_eq!(found[0], "delete_issue_comment", "{found:?}");
        // A repository named, or none.
        let topics = [
            at("list_repo_topics", "/repos/{owner}/{repo}/topics", true),
            at("list_topics_search", "/topics/search", true),
        ];
        let found = ranked(&topics, vocabulary(), "list topics of acme/api");
        assert_eq!(found[0], "list_repo_topics", "{found:?}");
        let found = ranked(&topics, vocabulary(), "list topics matching rust");
        assert_eq!(found[0], "list_topics_search", "{found:?}");
    }

    #[test]
    fn an_order_starts_with_its_verb() {
        let vocabulary = Vocabulary::new([], []);
        let lead = |q: &str| vocabulary.read(q, 1.0).lead;
        for order in [
            "tag commit 7a6b5c4 as v1.4.0",
            "archive the repo acme/old",
            "label PR 15 in acme/app",
            "fork acme/api to my account",
        ] {
            assert!(lead(order).is_some(), "{order}");
        }
        for name in [
            "deploy keys acme/api",
            "release id 88 in acme/app",
            "team 17 details",
            "tags in acme/app",
        ] {
            assert_eq!(lead(name), None, "{name}");
        }
        // A thing's name said first so asks to change it, and asks for its verb where a tool
        // has it.
        let entries = [
            at("get_tag", "/repos/{owner}/{repo}/tags/{tag}", true),
            at("create_tag", "/repos/{owner}/{repo}/tags", false),
            at("transfer_repo", "/repos/{owner}/{repo}/transfer", false),
            at(
                "accept_repo_transfer",
                "/repos/{owner}/{repo}/transfer/accept",
                false,
            ),
        ];
        let vocabulary = || Vocabulary::new([], []).with_intents(&["get".to_owned()], &[], &[]);
        let found = ranked(
            &entries,
            vocabulary(),
            "tag commit 7a6b5c4 as v1.4.0 in acme/app",
        );
        assert_eq!(found[0], "create_tag", "{found:?}");
        let found = ranked(&entries, vocabulary(), "transfer acme/app to the finco org");
        assert_eq!(found[0], "transfer_repo", "{found:?}");
    }

    #[test]
    fn a_change_finds_the_field_it_sets_or_the_thing_it_makes() {
        let vocabulary = || {
            Vocabulary::new([], []).with_intents(
                &[],
                &["archive".to_owned(), "protect".to_owned()],
                &[],
            )
        };
        let entries = [
            Entry {
                args: vec!["description", "archived"],
                ..at("update_repo", "/repos/{owner}/{repo}", false)
            },
            at("convert_repo", "/repos/{owner}/{repo}/convert", false),
            at(
                "create_tag_protection",
                "/repos/{owner}/{repo}/tag_protections",
                false,
            ),
            at("create_tag", "/repos/{owner}/{repo}/tags", false),
        ];
        let found = ranked(&entries, vocabulary(), "archive the repo acme/old");
        assert_eq!(found[0], "update_repo", "{found:?}");
        let found = ranked(
            &entries,
            vocabulary(),
            "protect tags matching v* in acme/app",
        );
        assert_eq!(found[0], "create_tag_protection", "{found:?}");
    }

    #[test]
    fn quoted_text_and_example_names_are_no_terms() {
        let vocabulary = Vocabulary::new([], []).with_examples(&["acme".to_owned()]);
        let terms = |q: &str| -> Vec<String> {
            vocabulary
                .read(q, 1.0)
                .terms
                .into_iter()
                .map(|(t, _)| t)
                .collect()
        };
        assert_eq!(terms("comment 'merge it now' on PR 17"), ["comment", "pr"]);
        // A keyword's example name is no term of the tool: a query naming the same
        // organization does not find it by that name.
        let keyword = ["show the acme org details".to_owned()];
        let entry = Entry {
            keywords: &keyword,
            ..at("get_org", "/orgs/{org}", true)
        };
        let index = SearchIndex::new([entry], vocabulary);
        assert!(
            !index.frequency.contains_key("acme"),
            "{:?}",
            index.frequency
        );
        assert!(index.frequency.contains_key("detail"));
        assert!(
            index.docs[0]
                .pairs
                .contains(&("org".to_owned(), "detail".to_owned()))
        );
        assert!(
            !index.docs[0]
                .pairs
                .iter()
                .any(|(a, b)| a == "acme" || b == "acme")
        );
    }

    #[test]
    fn a_shaped_token_pairs_with_nothing_and_a_dotfile_names_its_kind() {
        assert_eq!(
            pairs_of("change the DEPLOY_ENV value"),
            [("chang".to_owned(), "valu".to_owned())]
        );
        assert_eq!(
            pairs_of("deploy env value"),
            [
                ("deploy".to_owned(), "env".to_owned()),
                ("env".to_owned(), "valu".to_owned())
            ]
        );
        let terms = Vocabulary::new([], [])
            .read("show the Python .gitignore template", 1.0)
            .terms;
        assert!(terms.iter().any(|(t, _)| t == "gitignor"), "{terms:?}");
        assert_eq!(dotfile(".gitignore"), Some("gitignore"));
        assert_eq!(dotfile(".drone.yml"), None);
        assert_eq!(dotfile("src/.env"), None);
    }

    #[test]
    fn a_word_kept_among_its_synonyms_keeps_its_weight() {
        let tag = ["tag".to_owned(), "label".to_owned()];
        let vocabulary = Vocabulary::new([("tag", &tag[..])], []);
        let terms = vocabulary.read("protect tags", 0.4).terms;
        assert!(terms.contains(&("tag".to_owned(), 1.0)), "{terms:?}");
        assert!(terms.contains(&("label".to_owned(), 0.4)), "{terms:?}");
    }

    #[test]
    fn a_word_that_asks_in_the_plural_names_no_things() {
        let vocabulary = Vocabulary::new([], []).with_verbs([("get", &["details".to_owned()][..])]);
        assert!(!vocabulary.read("team 17 details", 1.0).plural);
        assert!(vocabulary.read("team 17 members", 1.0).plural);
    }
}
