//! Text answers (a file, a diff, a log) served as a bounded range of lines.
//!
//! A caller asks for `start_line`/`end_line` (1-based, inclusive, either optional). Without a
//! range the first lines are shown (`keep: oldest`) or the last (`keep: newest`, for logs). At
//! most `max_lines` lines and `max_bytes` bytes are shown, cut at a line boundary (a single line
//! longer than the byte cap is cut on a character boundary). Every answer says which lines it
//! holds of how many; a partial one carries a marker saying how to get the rest.
//!
//! A unified diff can be split per file: with the file named, that file's part is the text;
//! without, the answer lists the files.

use serde_json::{Map, Value, json};

use super::error::Error;
use super::project::{Context, Field};
use super::request::Args;
use crate::manifest::raw::Keep;

/// A compiled `text:` block.
#[derive(Debug)]
pub struct TextSpec {
    /// Where the text is; `None`: the body, fetched as text.
    pub from: Option<Field>,
    pub start_line: Option<String>,
    pub end_line: Option<String>,
    pub max_lines: u64,
    pub max_bytes: u64,
    pub keep: Keep,
    pub diff_file: Option<String>,
}

/// The lines shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    pub start_line: u64,
    pub end_line: u64,
    pub total_lines: u64,
}

impl Window {
    pub fn is_partial(&self) -> bool {
        self.start_line > 1 || self.end_line < self.total_lines
    }
}

/// What a text answer is.
#[derive(Debug, Clone, PartialEq)]
pub enum Cut {
    Lines(Window),
    /// A diff asked for without a file: its files and their sizes in lines.
    Files(Vec<(String, u64)>),
    /// The answer holds no text (a binary file).
    NotText,
}

impl TextSpec {
    /// The text of an answer: `from` evaluated on it, or the body itself.
    pub fn text_of(&self, ctx: &Context) -> Option<String> {
        match &self.from {
            Some(field) => match field.eval(ctx) {
                Value::String(s) => Some(s),
                _ => None,
            },
            None => match ctx.primary {
                Value::String(s) => Some(s.clone()),
                _ => None,
            },
        }
    }

    /// Checks the range before anything is fetched.
    pub fn check_range(&self, args: &Args) -> Result<(), Error> {
        if let (Some(start), Some(end)) = (
            self.arg(args, &self.start_line),
            self.arg(args, &self.end_line),
        ) && end < start
        {
            return Err(Error::invalid(format!(
                "end_line {end} is before start_line {start}"
            )));
        }
        Ok(())
    }

    fn arg(&self, args: &Args, name: &Option<String>) -> Option<u64> {
        name.as_ref()
            .and_then(|n| args.get(n))
            .and_then(Value::as_u64)
    }

    /// Cuts `text` as asked by `args`.
    pub fn cut(&self, text: Option<&str>, args: &Args) -> Result<Cut, Error> {
        let Some(text) = text else {
            return Ok(Cut::NotText);
        };
        let part;
        let text = match &self.diff_file {
            None => text,
            Some(arg) => {
                let files = split_diff(text);
                match args.get(arg).and_then(Value::as_str) {
                    None => {
                        return Ok(Cut::Files(
                            files
                                .iter()
                                .map(|(p, t)| (p.clone(), line_count(t)))
                                .collect(),
                        ));
                    }
                    Some(wanted) => match files.iter().position(|(p, _)| p == wanted) {
                        Some(i) => {
                            part = files.into_iter().nth(i).map(|(_, t)| t).unwrap_or_default();
                            part.as_str()
                        }
                        None => {
                            let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
                            return Err(Error::invalid(format!(
                                "the diff has no file `{wanted}`; its files: {}",
                                names.join(", ")
                            )));
                        }
                    },
                }
            }
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len() as u64;
        let start_arg = self.arg(args, &self.start_line);
        let end_arg = self.arg(args, &self.end_line);
        if let Some(start) = start_arg
            && start > total.max(1)
        {
            return Err(Error::invalid(format!(
                "start_line {start} is past the end: the text has {total} lines"
            )));
        }
        let span = self.max_lines.max(1);
        let (start, end) = match (start_arg, end_arg) {
            (Some(s), Some(e)) => (s, e.min(s + span - 1)),
            (Some(s), None) => (s, s + span - 1),
            (None, Some(e)) => (e.saturating_sub(span - 1).max(1), e),
            (None, None) => match self.keep {
                Keep::Oldest => (1, span),
                Keep::Newest => (total.saturating_sub(span - 1).max(1), total),
            },
        };
        let end = end.min(total);
        // A tail without an explicit start keeps its end when the byte cap bites.
        let from_end = self.keep == Keep::Newest && start_arg.is_none();
        let (text, start, end) = self.byte_cap(&lines, start, end, from_end);
        Ok(Cut::Lines(Window {
            text,
            start_line: start,
            end_line: end,
            total_lines: total,
        }))
    }

    /// Applies the byte cap from the kept end, at line boundaries.
    fn byte_cap(&self, lines: &[&str], start: u64, end: u64, from_end: bool) -> (String, u64, u64) {
        if lines.is_empty() || end < start {
            return (String::new(), start.min(end.max(1)), end);
        }
        let cap = self.max_bytes as usize;
        let chosen = &lines[(start - 1) as usize..end as usize];
        let mut size = 0usize;
        let mut count = 0u64;
        let iter: Box<dyn Iterator<Item = &&str>> = if from_end {
            Box::new(chosen.iter().rev())
        } else {
            Box::new(chosen.iter())
        };
        let mut kept: Vec<&str> = Vec::new();
        for line in iter {
            if size + line.len() > cap {
                if kept.is_empty() {
                    // One line longer than the cap: keep its start, cut on a character boundary.
                    let mut cut = cap.min(line.len());
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    kept.push(&line[..cut]);
                    count = 1;
                }
                break;
            }
            size += line.len();
            kept.push(line);
            count += 1;
        }
        if from_end {
            kept.reverse();
            let text: String = kept.concat();
            (text, end + 1 - count.max(1), end)
        } else {
            (kept.concat(), start, start + count.max(1) - 1)
        }
    }

    /// The JSON fields describing a cut, and the marker when it is partial; `how` says how to
    /// ask for other lines (given the first line wanted).
    pub fn describe(&self, cut: &Cut, how: impl Fn(u64) -> String) -> Map<String, Value> {
        let mut out = Map::new();
        match cut {
            Cut::Lines(w) => {
                out.insert("start_line".into(), w.start_line.into());
                out.insert("end_line".into(), w.end_line.into());
                out.insert("total_lines".into(), w.total_lines.into());
                if w.is_partial() {
                    let next = if w.end_line < w.total_lines {
                        format!("{} for the next lines", how(w.end_line + 1))
                    } else {
                        let earlier = w.start_line.saturating_sub(self.max_lines).max(1);
                        format!("{} for earlier lines", how(earlier))
                    };
                    out.insert(
                        "truncated".into(),
                        json!(format!(
                            "[truncated: lines {}–{} of {} shown. {next}.]",
                            w.start_line, w.end_line, w.total_lines
                        )),
                    );
                }
            }
            Cut::Files(files) => {
                let list: Vec<Value> = files
                    .iter()
                    .map(|(p, n)| json!({"path": p, "lines": n}))
                    .collect();
                out.insert("files".into(), Value::Array(list));
                if let Some(arg) = &self.diff_file {
                    out.insert(
                        "note".into(),
                        json!(format!(
                            "Name one file with `{arg}` to see its part of the diff."
                        )),
                    );
                }
            }
            Cut::NotText => {
                out.insert(
                    "note".into(),
                    json!("The content is not text (binary, or not UTF-8) and is not shown."),
                );
            }
        }
        out
    }
}

/// Lines of `text` (a final line without `\n` counts).
fn line_count(text: &str) -> u64 {
    text.split_inclusive('\n').count() as u64
}

/// A unified diff split per file: (path after the change, that file's part).
pub fn split_diff(diff: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = Vec::new();
    for line in diff.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("diff --git ") {
            let path = header
                .trim_end()
                .rsplit_once(" b/")
                .map_or_else(|| header.trim_end().to_owned(), |(_, b)| b.to_owned());
            files.push((path, String::new()));
        }
        if let Some((_, part)) = files.last_mut() {
            part.push_str(line);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(keep: Keep, max_lines: u64, max_bytes: u64) -> TextSpec {
        TextSpec {
            from: None,
            start_line: Some("start_line".into()),
            end_line: Some("end_line".into()),
            max_lines,
            max_bytes,
            keep,
            diff_file: None,
        }
    }

    fn args(pairs: &[(&str, Value)]) -> Args {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    fn numbered(n: u64) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn window(cut: Cut) -> Window {
        match cut {
            Cut::Lines(w) => w,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ranges() {
        let text = numbered(10);
        let s = spec(Keep::Oldest, 4, 10_000);
        type Case<'a> = (&'a [(&'a str, Value)], (u64, u64));
        let cases: &[Case] = &[
            (&[], (1, 4)),
            (&[("start_line", json!(3))], (3, 6)),
            (&[("start_line", json!(3)), ("end_line", json!(4))], (3, 4)),
            (&[("start_line", json!(3)), ("end_line", json!(99))], (3, 6)),
            (&[("end_line", json!(10))], (7, 10)),
            (&[("start_line", json!(9))], (9, 10)),
        ];
        for (a, (from, to)) in cases {
            let w = window(s.cut(Some(&text), &args(a)).unwrap());
            assert_eq!(
                (w.start_line, w.end_line, w.total_lines),
                (*from, *to, 10),
                "{a:?}"
            );
            assert_eq!(
                w.text,
                (*from..=*to)
                    .map(|i| format!("line {i}\n"))
                    .collect::<String>()
            );
        }
        assert!(
            s.cut(Some(&text), &args(&[("start_line", json!(11))]))
                .is_err()
        );
        assert!(
            s.check_range(&args(&[("start_line", json!(5)), ("end_line", json!(4))]))
                .is_err()
        );
    }

    #[test]
    fn tails_keep_the_end_and_bytes_cut_at_lines() {
        let text = numbered(100);
        let w = window(
            spec(Keep::Newest, 5, 10_000)
                .cut(Some(&text), &Args::new())
                .unwrap(),
        );
        assert_eq!((w.start_line, w.end_line), (96, 100));
        let w = window(
            spec(Keep::Newest, 50, 24)
                .cut(Some(&text), &Args::new())
                .unwrap(),
        );
        assert_eq!(
            (w.start_line, w.end_line, w.text.as_str()),
            (99, 100, "line 99\nline 100\n")
        );
        let w = window(
            spec(Keep::Oldest, 50, 14)
                .cut(Some(&text), &Args::new())
                .unwrap(),
        );
        assert_eq!(
            (w.start_line, w.end_line, w.text.as_str()),
            (1, 2, "line 1\nline 2\n")
        );
        let long = "ééééé\n";
        let w = window(
            spec(Keep::Oldest, 5, 5)
                .cut(Some(long), &Args::new())
                .unwrap(),
        );
        assert_eq!(w.text, "éé");
    }

    #[test]
    fn markers_say_how_to_continue() {
        let s = spec(Keep::Oldest, 4, 10_000);
        let cut = s.cut(Some(&numbered(10)), &Args::new()).unwrap();
        let d = s.describe(&cut, |n| format!("Call again with start_line={n}"));
        assert_eq!(
            d["truncated"],
            "[truncated: lines 1–4 of 10 shown. Call again with start_line=5 for the next lines.]"
        );
        let whole = s.cut(Some("a\nb\n"), &Args::new()).unwrap();
        assert!(
            s.describe(&whole, |n| n.to_string())
                .get("truncated")
                .is_none()
        );
    }

    #[test]
    fn diffs_split_per_file() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/README.md b/README.md\n+new\n";
        let s = TextSpec {
            diff_file: Some("file".into()),
            ..spec(Keep::Oldest, 100, 10_000)
        };
        assert_eq!(
            s.cut(Some(diff), &Args::new()).unwrap(),
            Cut::Files(vec![("src/a.rs".into(), 6), ("README.md".into(), 2)])
        );
        let w = window(
            s.cut(Some(diff), &args(&[("file", json!("README.md"))]))
                .unwrap(),
        );
        assert_eq!(w.text, "diff --git a/README.md b/README.md\n+new\n");
        assert!(
            s.cut(Some(diff), &args(&[("file", json!("nope"))]))
                .is_err()
        );
    }
}
