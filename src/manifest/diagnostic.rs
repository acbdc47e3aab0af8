//! Diagnostics: where a manifest is wrong, which check it breaks, and what to write instead.

use std::fmt;

use serde::Serialize;
use serde_saphyr::Spanned;

use super::checks::{self, Code, Severity};

/// Which manifest a position is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileId {
    Resources,
    Tools,
    /// `search.yaml`: the search vocabulary and the tools' keywords.
    Search,
}

impl FileId {
    /// The manifest's file name, as in the repository root.
    pub fn file_name(self) -> &'static str {
        match self {
            FileId::Resources => "resources.yaml",
            FileId::Tools => "tools.yaml",
            FileId::Search => "search.yaml",
        }
    }

    /// The option that names another file for this manifest.
    pub fn option(self) -> &'static str {
        match self {
            FileId::Resources => "--resources",
            FileId::Tools => "--tools",
            FileId::Search => "--search",
        }
    }
}

/// A line and column in one of the manifests (1-based; 0 when unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub file: FileId,
    pub line: u64,
    pub column: u64,
}

impl Pos {
    pub fn of<T>(file: FileId, spanned: &Spanned<T>) -> Pos {
        Pos {
            file,
            line: spanned.referenced.line(),
            column: spanned.referenced.column(),
        }
    }

    pub fn start(file: FileId) -> Pos {
        Pos {
            file,
            line: 1,
            column: 1,
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub file: String,
    pub line: u64,
    pub column: u64,
    #[serde(serialize_with = "serialize_code")]
    pub code: Code,
    #[serde(serialize_with = "serialize_severity")]
    pub severity: Severity,
    pub message: String,
}

fn serialize_code<S: serde::Serializer>(code: &Code, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(code)
}

fn serialize_severity<S: serde::Serializer>(sev: &Severity, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(sev)
}

impl Diagnostic {
    pub fn new(file: &str, line: u64, column: u64, code: Code, message: String) -> Diagnostic {
        Diagnostic {
            file: file.to_owned(),
            line,
            column,
            code,
            severity: checks::check(code).severity,
            message,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}[{}]: {}",
            self.file, self.line, self.column, self.severity, self.code, self.message
        )
    }
}

/// A finding not yet tied to a file name (the compiler knows positions, the caller names files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub pos: Pos,
    pub code: Code,
    pub message: String,
}

/// The closest of `candidates` to `name`, when it is close enough to be a likely typo.
pub fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    let limit = (len / 3).max(2);
    candidates
        .into_iter()
        // A candidate whose length differs by more than the limit cannot be within it: skipped
        // before the distance, so that a caller's huge name costs nothing.
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// " (did you mean `x`?)" or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match suggest(name, candidates) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_name() {
        let tools = ["list_repo_labels", "list_org_labels", "get_commit_statuses"];
        assert_eq!(suggest("list_repo_label", tools), Some("list_repo_labels"));
        assert_eq!(
            suggest("get_commit_status", tools),
            Some("get_commit_statuses")
        );
        assert_eq!(suggest("merge_pull_request", tools), None);
    }
}
