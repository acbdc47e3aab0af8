//! Ranking tools for a task described in words (`search_tools`).
//!
//! Each tool is a small document: the words of its name, title, toolset, summary, the rest of
//! its description and its argument names, each field weighted by how much it says about what
//! the tool does. A query is cut into words, stripped of function words, stemmed the same way,
//! and widened with the manifest's synonyms (`search.synonyms` in `tools.yaml`: what people say
//! → the words the tools use), then scored with BM25. The exact spelling of a name word counts a
//! little extra, so that "issues" leans to the list and "issue 12" to the single one. Generated
//! tools rank a little below curated ones that match as well, since the curated ones are
//! shaped for agents.
//!
//! ```
//! use forgelens::engine::search::stem;
//! assert_eq!(stem("branches"), stem("branch"));
//! assert_eq!(stem("merging"), stem("merged"));
//! assert_eq!(stem("statuses"), "status");
//! ```

use std::collections::HashMap;

use super::tool::Tool;

/// Weights of a tool's fields.
const NAME: f32 = 3.0;
const TITLE: f32 = 2.0;
const TOOLSET: f32 = 1.0;
const SUMMARY: f32 = 1.0;
const DETAIL: f32 = 0.4;
const ARGUMENT: f32 = 0.3;
/// An exact name word, on top of its stem.
const EXACT: f32 = 1.0;
/// A synonym's words count for less than the query's own.
const EXPANSION: f32 = 0.7;
/// A generated tool's score, against a curated one's.
const GENERATED: f32 = 0.85;
/// BM25's term-frequency saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.5;

/// Words that say nothing about which tool is meant.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "do", "does", "for", "from", "have", "has", "he", "her", "here", "him", "how",
    "i", "if", "in", "into", "is", "it", "its", "just", "let", "lets", "like", "me", "mine", "my",
    "need", "needs", "of", "on", "one", "or", "our", "out", "please", "pls", "so", "some", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "up", "us",
    "want", "wanna", "was", "we", "were", "what", "whats", "when", "where", "which", "who",
    "whose", "why", "will", "with", "would", "you", "your",
];

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
    if ends(&w, "ing") {
        w.truncate(w.len() - 3);
    } else if ends(&w, "ed") {
        w.truncate(w.len() - 2);
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

/// What people say, and what the tools say for it; the keys are stemmed word sequences.
#[derive(Debug, Default)]
pub struct Vocabulary {
    synonyms: Vec<(Vec<String>, Vec<String>)>,
}

impl Vocabulary {
    /// From the manifest's `search.synonyms`: a word or phrase → the words it stands for.
    pub fn new<'a>(synonyms: impl IntoIterator<Item = (&'a str, &'a [String])>) -> Vocabulary {
        let mut list: Vec<(Vec<String>, Vec<String>)> = synonyms
            .into_iter()
            .map(|(key, means)| {
                let key: Vec<String> = words(key).map(|w| stem(&w)).collect();
                let means = means
                    .iter()
                    .flat_map(|m| words(m).collect::<Vec<_>>())
                    .map(|w| stem(&w))
                    .collect();
                (key, means)
            })
            .filter(|(key, _)| !key.is_empty())
            .collect();
        // Longer phrases first, so "pull request" is read before "request".
        list.sort_by_key(|(key, _)| std::cmp::Reverse(key.len()));
        Vocabulary { synonyms: list }
    }

    /// The weighted terms of a query: its own stems, then what the synonyms add.
    fn terms(&self, query: &str) -> Vec<(String, f32)> {
        let raw: Vec<String> = words(query).collect();
        let stems: Vec<String> = raw.iter().map(|w| stem(w)).collect();
        let mut terms: Vec<(String, f32)> = Vec::new();
        let add = |term: String, weight: f32, terms: &mut Vec<(String, f32)>| match terms
            .iter_mut()
            .find(|(t, _)| *t == term)
        {
            Some((_, w)) => *w = w.max(weight),
            None => terms.push((term, weight)),
        };
        let mut covered = vec![false; stems.len()];
        for (key, means) in &self.synonyms {
            for start in 0..stems.len() {
                let end = start + key.len();
                if end <= stems.len()
                    && stems[start..end] == key[..]
                    && !covered[start..end].iter().any(|&c| c)
                {
                    covered[start..end].iter_mut().for_each(|c| *c = true);
                    for m in means {
                        add(m.clone(), EXPANSION, &mut terms);
                    }
                }
            }
        }
        for (i, (word, stemmed)) in raw.iter().zip(&stems).enumerate() {
            if STOP_WORDS.contains(&word.as_str()) && !covered[i] {
                continue;
            }
            add(stemmed.clone(), 1.0, &mut terms);
            add(format!("={word}"), 1.0, &mut terms);
        }
        terms
    }
}

/// One tool as the index sees it.
#[derive(Debug)]
struct Doc {
    terms: HashMap<String, f32>,
    length: f32,
    generated: bool,
}

/// An index of tools.
#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// How many documents hold each term.
    frequency: HashMap<String, u32>,
    average_length: f32,
    vocabulary: Vocabulary,
}

/// One ranked tool: its position in the indexed slice, and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub tool: usize,
    pub score: f32,
}

impl SearchIndex {
    /// Indexes `tools` (with the descriptions of their toolsets); `generated` says which ones
    /// come from a generated catalog.
    pub fn new(
        tools: &[Tool],
        toolset_description: impl Fn(&str) -> Option<String>,
        generated: impl Fn(&Tool) -> bool,
        vocabulary: Vocabulary,
    ) -> SearchIndex {
        let mut docs = Vec::with_capacity(tools.len());
        let mut frequency: HashMap<String, u32> = HashMap::new();
        for tool in tools {
            let mut terms: HashMap<String, f32> = HashMap::new();
            let mut put = |text: &str, weight: f32, exact: bool| {
                for w in words(text) {
                    *terms.entry(stem(&w)).or_default() += weight;
                    if exact {
                        *terms.entry(format!("={w}")).or_default() += EXACT;
                    }
                }
            };
            put(&tool.name, NAME, true);
            put(&tool.title, TITLE, false);
            put(&tool.toolset, TOOLSET, false);
            if let Some(d) = toolset_description(&tool.toolset) {
                put(&d, DETAIL, false);
            }
            put(&tool.summary, SUMMARY, false);
            put(
                tool.description.get(tool.summary.len()..).unwrap_or(""),
                DETAIL,
                false,
            );
            for arg in &tool.args {
                put(&arg.name, ARGUMENT, false);
            }
            for term in terms.keys() {
                *frequency.entry(term.clone()).or_default() += 1;
            }
            let length = terms.values().sum();
            docs.push(Doc {
                terms,
                length,
                generated: generated(tool),
            });
        }
        let average_length = match docs.len() {
            0 => 1.0,
            n => docs.iter().map(|d| d.length).sum::<f32>() / n as f32,
        };
        SearchIndex {
            docs,
            frequency,
            average_length,
            vocabulary,
        }
    }

    /// The best `limit` tools for `query`, best first; tools that match no word are left out.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let terms = self.vocabulary.terms(query);
        let n = self.docs.len() as f32;
        let mut hits: Vec<Hit> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let mut score = 0.0;
                for (term, weight) in &terms {
                    let Some(&tf) = doc.terms.get(term) else {
                        continue;
                    };
                    let df = self.frequency.get(term).copied().unwrap_or(0) as f32;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let norm = 1.0 - B + B * doc.length / self.average_length;
                    score += weight * idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                }
                if doc.generated {
                    score *= GENERATED;
                }
                (score > 0.0).then_some(Hit { tool: i, score })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.tool.cmp(&b.tool)));
        hits.truncate(limit);
        hits
    }
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
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
        assert_ne!(stem("status"), stem("stat"));
    }

    #[test]
    fn phrases_are_read_before_their_words_and_stop_words_are_dropped() {
        let pr = ["pull".to_owned()];
        let request = ["ask".to_owned()];
        let vocabulary = Vocabulary::new([("merge request", &pr[..]), ("request", &request[..])]);
        let terms = vocabulary.terms("show me the merge requests");
        let names: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(names.contains(&"pull"), "{names:?}");
        assert!(
            !names.contains(&"ask"),
            "the phrase took the word: {names:?}"
        );
        let terms = vocabulary.terms("request a review");
        assert!(terms.iter().any(|(t, _)| t == "ask"), "{terms:?}");
        assert!(
            !names.contains(&"the") && !names.contains(&"=me"),
            "{names:?}"
        );
        assert!(
            names.contains(&"show") && names.contains(&"=requests"),
            "{names:?}"
        );
    }
}
