//! Text answers (a file, a diff, a log) served as a bounded range of lines.
//!
//! A caller asks for `start_line`/`end_line` (1-based, inclusive, either optional). Without a
//! range the first lines are shown (`keep: oldest`) or the last (`keep: newest`, for logs). At
//! most `max_lines` lines and `max_bytes` bytes (and no more than the answer's byte budget) are
//! shown, cut at a line boundary. A single line longer than that (minified code) is cut on a
//! character boundary, and `start_byte` says where in `start_line` the next window begins.
//! Every answer says which lines it holds of how many; a partial one carries a marker saying
//! how to get the rest.
//!
//! A unified diff can be split per file: with the file named, that file's part is the text;
//! without, the answer lists the files.

use serde_json::{Map, Value, json};

use super::error::{Error, Invalid};
use super::policy::marks::TextMark;
use super::project::{Context, Field};
use super::request::Args;
use super::untrusted::neutralize;
use crate::manifest::raw::Keep;

/// A compiled `text:` block.
#[derive(Debug)]
pub struct TextSpec {
    /// Where the text is; `None`: the body, fetched as text.
    pub from: Option<Field>,
    pub start_line: Option<String>,
    pub end_line: Option<String>,
    /// The variable or argument holding the byte of `start_line` to begin at.
    pub start_byte: Option<String>,
    pub max_lines: u64,
    pub max_bytes: u64,
    pub keep: Keep,
    pub diff_file: Option<String>,
    /// The text was written by forge users: how it is shown and who may have written it.
    /// Hidden characters are made visible (see `engine::untrusted`) and a resource's text block
    /// is wrapped in an envelope.
    pub untrusted: Option<TextMark>,
}

/// The lines shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    pub start_line: u64,
    pub end_line: u64,
    pub total_lines: u64,
    /// Where in `start_line` the text begins, in bytes (0: at its start).
    pub start_byte: u64,
    /// Where in `end_line` the text stops, when that line goes on: (byte, the line's length).
    pub end_cut: Option<(u64, u64)>,
}

impl Window {
    /// A window holding the whole of a one-line `text`.
    pub fn whole(text: String) -> Window {
        Window {
            text,
            start_line: 1,
            end_line: 1,
            total_lines: 1,
            start_byte: 0,
            end_cut: None,
        }
    }

    pub fn is_partial(&self) -> bool {
        self.start_line > 1
            || self.end_line < self.total_lines
            || self.start_byte > 0
            || self.end_cut.is_some()
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
        let text = match &self.from {
            Some(field) => match field.eval(ctx) {
                Value::String(s) => Some(s),
                _ => None,
            },
            None => match ctx.primary {
                Value::String(s) => Some(s.clone()),
                _ => None,
            },
        }?;
        let rendering = match &self.untrusted {
            Some(mark) => mark.shown.rendering(ctx.args),
            None => super::untrusted::Rendering::Plain,
        };
        Some(neutralize(&text, rendering, ctx.instance).into_owned())
    }

    /// Checks the range before anything is fetched.
    pub fn check_range(&self, args: &Args) -> Result<(), Error> {
        if let (Some(start), Some(end)) = (
            self.arg(args, &self.start_line),
            self.arg(args, &self.end_line),
        ) && end < start
        {
            return Err(Invalid::Backwards { start, end }.into());
        }
        Ok(())
    }

    fn arg(&self, args: &Args, name: &Option<String>) -> Option<u64> {
        name.as_ref()
            .and_then(|n| args.get(n))
            .and_then(Value::as_u64)
    }

    /// Cuts `text` as asked by `args`, in at most `budget` bytes (and the spec's own cap).
    pub fn cut(&self, text: Option<&str>, args: &Args, budget: usize) -> Result<Cut, Error> {
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
                            return Err(Invalid::NoSuchFile {
                                wanted: wanted.to_owned(),
                                files: names.join(", "),
                            }
                            .into());
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
            return Err(Invalid::PastTheEnd { start, total }.into());
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
        let skip = match self.arg(args, &self.start_byte) {
            None | Some(0) => 0,
            Some(byte) => {
                let line = lines.get(start as usize - 1).copied().unwrap_or("");
                if byte >= line.len() as u64 {
                    return Err(Invalid::PastTheLine {
                        byte,
                        line: start,
                        len: line.len(),
                    }
                    .into());
                }
                let mut at = byte as usize;
                while !line.is_char_boundary(at) {
                    at -= 1;
                }
                at
            }
        };
        // A tail without an explicit start keeps its end when the byte cap bites.
        let from_end = self.keep == Keep::Newest && start_arg.is_none();
        let cap = budget.min(self.max_bytes as usize).max(1);
        Ok(Cut::Lines(byte_cap(
            &lines, start, end, skip, cap, from_end, total,
        )))
    }

    /// The window of `text` an answer carries in `room` bytes, and the fields that describe
    /// it (`how` says how to ask for other text, as for [`TextSpec::describe`]): the one cut of
    /// a resource's text block and of a tool's text alike. `overshoot` says by how many bytes a
    /// window and its fields run past what the answer may hold, as the answer carries them: a
    /// text block carries the text as it is and fits in one pass; JSON escapes it, so the
    /// window shrinks by the overshoot until it fits.
    pub fn fit(
        &self,
        text: Option<&str>,
        args: &Args,
        room: usize,
        how: impl Fn(u64, Option<u64>) -> String,
        overshoot: impl Fn(&Cut, &Map<String, Value>) -> usize,
    ) -> Result<(Cut, Map<String, Value>), Error> {
        let mut room = room;
        loop {
            let cut = self.cut(text, args, room)?;
            let described = self.describe(&cut, &how);
            let over = overshoot(&cut, &described);
            if over == 0 || room <= 1 {
                return Ok((cut, described));
            }
            room = room.saturating_sub(over).max(1);
        }
    }

    /// The JSON fields describing a cut, and the marker when it is partial; `how` says how to
    /// ask for other text, given the first line wanted and the byte of it to begin at.
    pub fn describe(
        &self,
        cut: &Cut,
        how: impl Fn(u64, Option<u64>) -> String,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        match cut {
            Cut::Lines(w) => {
                out.insert("start_line".into(), w.start_line.into());
                out.insert("end_line".into(), w.end_line.into());
                out.insert("total_lines".into(), w.total_lines.into());
                if w.start_byte > 0 {
                    out.insert("start_byte".into(), w.start_byte.into());
                }
                if let Some((byte, length)) = w.end_cut {
                    out.insert("end_byte".into(), byte.into());
                    out.insert("line_bytes".into(), length.into());
                }
                if w.is_partial() {
                    let next = match w.end_cut {
                        Some((byte, length)) if self.start_byte.is_some() => format!(
                            "Line {} has {length} bytes; {} for the rest of it",
                            w.end_line,
                            how(w.end_line, Some(byte))
                        ),
                        Some((byte, length)) => format!(
                            "Line {} has {length} bytes, longer than one answer; its bytes from {byte} on are not shown",
                            w.end_line
                        ),
                        None if w.end_line < w.total_lines => {
                            format!("{} for the next lines", how(w.end_line + 1, None))
                        }
                        None => {
                            let earlier = w.start_line.saturating_sub(self.max_lines).max(1);
                            format!("{} for earlier lines", how(earlier, None))
                        }
                    };
                    let bytes = match (w.start_byte, w.end_cut) {
                        (0, None) => String::new(),
                        (from, Some((to, _))) => {
                            format!(", bytes {from}–{to} of line {}", w.end_line)
                        }
                        (from, None) => format!(", line {} from byte {from}", w.start_line),
                    };
                    out.insert(
                        "truncated".into(),
                        json!(format!(
                            "[truncated: lines {}–{} of {} shown{bytes}. {next}.]",
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

/// The lines `start..=end` (1-based) that fit in `cap` bytes, the first from byte `skip`: whole
/// lines, counted from the kept end; when not even the first one fits (minified code, a log
/// line of a megabyte), its first bytes, cut on a character boundary.
fn byte_cap(
    lines: &[&str],
    start: u64,
    end: u64,
    skip: usize,
    cap: usize,
    from_end: bool,
    total: u64,
) -> Window {
    let empty = |start_line: u64, end_line: u64| Window {
        text: String::new(),
        start_line,
        end_line,
        total_lines: total,
        start_byte: 0,
        end_cut: None,
    };
    if lines.is_empty() || end < start {
        return empty(start.min(end.max(1)), end);
    }
    let chosen: Vec<&str> = lines[(start - 1) as usize..end as usize]
        .iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { &l[skip..] } else { *l })
        .collect();
    let order: Vec<usize> = match from_end {
        true => (0..chosen.len()).rev().collect(),
        false => (0..chosen.len()).collect(),
    };
    let mut size = 0;
    let mut kept = 0;
    for &i in &order {
        if size + chosen[i].len() > cap {
            break;
        }
        size += chosen[i].len();
        kept += 1;
    }
    if kept == 0 {
        let i = order[0];
        let line = chosen[i];
        let base = if i == 0 { skip } else { 0 };
        let mut at = cap.min(line.len());
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        // At least one character, so that every window moves on.
        if at == 0 {
            at = line.chars().next().map_or(0, char::len_utf8);
        }
        let number = start + i as u64;
        return Window {
            text: line[..at].to_owned(),
            start_line: number,
            end_line: number,
            total_lines: total,
            start_byte: base as u64,
            end_cut: Some(((base + at) as u64, (base + line.len()) as u64)),
        };
    }
    let (first, last) = match from_end {
        true => (chosen.len() - kept, chosen.len() - 1),
        false => (0, kept - 1),
    };
    Window {
        text: chosen[first..=last].concat(),
        start_line: start + first as u64,
        end_line: start + last as u64,
        total_lines: total,
        start_byte: if first == 0 { skip as u64 } else { 0 },
        end_cut: None,
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
            start_byte: Some("start_byte".into()),
            max_lines,
            max_bytes,
            keep,
            diff_file: None,
            untrusted: None,
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
            let w = window(s.cut(Some(&text), &args(a), usize::MAX).unwrap());
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
            s.cut(Some(&text), &args(&[("start_line", json!(11))]), usize::MAX)
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
                .cut(Some(&text), &Args::new(), usize::MAX)
                .unwrap(),
        );
        assert_eq!((w.start_line, w.end_line), (96, 100));
        let w = window(
            spec(Keep::Newest, 50, 24)
                .cut(Some(&text), &Args::new(), usize::MAX)
                .unwrap(),
        );
        assert_eq!(
            (w.start_line, w.end_line, w.text.as_str()),
            (99, 100, "line 99\nline 100\n")
        );
        let w = window(
            spec(Keep::Oldest, 50, 14)
                .cut(Some(&text), &Args::new(), usize::MAX)
                .unwrap(),
        );
        assert_eq!(
            (w.start_line, w.end_line, w.text.as_str()),
            (1, 2, "line 1\nline 2\n")
        );
        let long = "ééééé\n";
        let w = window(
            spec(Keep::Oldest, 5, 5)
                .cut(Some(long), &Args::new(), usize::MAX)
                .unwrap(),
        );
        assert_eq!(w.text, "éé");
    }

    #[test]
    fn markers_say_how_to_continue() {
        let s = spec(Keep::Oldest, 4, 10_000);
        let cut = s
            .cut(Some(&numbered(10)), &Args::new(), usize::MAX)
            .unwrap();
        let d = s.describe(&cut, |n, _| format!("Call again with start_line={n}"));
        assert_eq!(
            d["truncated"],
            "[truncated: lines 1–4 of 10 shown. Call again with start_line=5 for the next lines.]"
        );
        let whole = s.cut(Some("a\nb\n"), &Args::new(), usize::MAX).unwrap();
        assert!(
            s.describe(&whole, |n, _| n.to_string())
                .get("truncated")
                .is_none()
        );
    }

    #[test]
    fn one_long_line_comes_in_byte_windows_that_join_up() {
        let line = format!("{}\n", "é".repeat(50) + &"x".repeat(1000));
        let s = spec(Keep::Oldest, 400, 64 * 1024);
        let how = |n: u64, b: Option<u64>| {
            format!(
                "Call again with start_line={n} and start_byte={}",
                b.unwrap_or(0)
            )
        };
        let mut joined = String::new();
        let mut at = 0;
        loop {
            let a = args(&[("start_line", json!(1)), ("start_byte", json!(at))]);
            let w = window(s.cut(Some(&line), &a, 301).unwrap());
            assert!(w.text.len() <= 301 && !w.text.is_empty());
            assert_eq!(w.start_byte, at);
            joined.push_str(&w.text);
            let d = s.describe(&Cut::Lines(w.clone()), how);
            match w.end_cut {
                Some((next, length)) => {
                    assert_eq!(length, line.len() as u64);
                    let marker = d["truncated"].as_str().unwrap();
                    assert!(marker.contains(&format!("start_byte={next}")), "{marker}");
                    at = next;
                }
                None => break,
            }
        }
        assert_eq!(joined, line);
        let past = args(&[("start_line", json!(1)), ("start_byte", json!(line.len()))]);
        assert!(s.cut(Some(&line), &past, 301).is_err());
    }

    #[test]
    fn the_budget_caps_below_the_spec() {
        let text = numbered(100);
        let w = window(
            spec(Keep::Oldest, 400, 64 * 1024)
                .cut(Some(&text), &Args::new(), 30)
                .unwrap(),
        );
        assert_eq!((w.start_line, w.end_line), (1, 4), "{w:?}");
    }

    #[test]
    fn diffs_split_per_file() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/README.md b/README.md\n+new\n";
        let s = TextSpec {
            diff_file: Some("file".into()),
            ..spec(Keep::Oldest, 100, 10_000)
        };
        assert_eq!(
            s.cut(Some(diff), &Args::new(), usize::MAX).unwrap(),
            Cut::Files(vec![("src/a.rs".into(), 6), ("README.md".into(), 2)])
        );
        let w = window(
            s.cut(
                Some(diff),
                &args(&[("file", json!("README.md"))]),
                usize::MAX,
            )
            .unwrap(),
        );
        assert_eq!(w.text, "diff --git a/README.md b/README.md\n+new\n");
        assert!(
            s.cut(Some(diff), &args(&[("file", json!("nope"))]), usize::MAX)
                .is_err()
        );
    }
}
