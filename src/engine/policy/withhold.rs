//! Lockdown's engine half: which accounts an answer's marked text names as its authors, and the
//! answer with what lockdown does not keep replaced by a notice. Whether an account may write
//! is the forge's to say; the service asks it (`crate::lockdown`) and hands the verdicts here.
//!
//! A mark's writer decides (see [`super::marks`]): text only accounts with write access can
//! write is kept, text by a named author is kept when the verdict on that author says so, and
//! text by anyone else — a stranger, or an account the answer does not name — is withheld.

use serde_json::Value;

use super::marks::{Mark, Writer};
use crate::engine::request::Args;

/// What lockdown knows when it filters one answer.
pub struct Verdicts<'a> {
    /// Whether an account may write to the repository the answer is about; for an answer
    /// about no one repository, nobody may.
    pub trusts: &'a dyn Fn(&str) -> bool,
    /// The text put in place of what `who` wrote (`None`: an account the answer does not name).
    pub notice: &'a dyn Fn(Option<&str>) -> String,
}

/// One object whose text was withheld: where it sits (`""` at the top, `items[]`), and who
/// wrote it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Withheld {
    pub at: String,
    pub who: Option<String>,
}

/// One step of a dotted path: a member, or each element of the array a member holds
/// (`items[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step<'p> {
    name: &'p str,
    each: bool,
}

fn steps(path: &str) -> Vec<Step<'_>> {
    path.split('.')
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_suffix("[]") {
            Some(name) => Step { name, each: true },
            None => Step {
                name: s,
                each: false,
            },
        })
        .collect()
}

fn join(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| match s.each {
            true => format!("{}[]", s.name),
            false => s.name.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The values at `steps` below `value`, arrays entered where a step says so.
fn nodes_mut<'v>(value: &'v mut Value, steps: &[Step]) -> Vec<&'v mut Value> {
    let mut nodes = vec![value];
    for step in steps {
        nodes = nodes
            .into_iter()
            .filter_map(|n| n.get_mut(step.name))
            .flat_map(|n| match (step.each, n) {
                (true, Value::Array(items)) => items.iter_mut().collect::<Vec<_>>(),
                (true, _) => Vec::new(),
                (false, n) => vec![n],
            })
            .collect();
    }
    nodes
}

fn nodes<'v>(value: &'v Value, steps: &[Step]) -> Vec<&'v Value> {
    let mut nodes = vec![value];
    for step in steps {
        nodes = nodes
            .into_iter()
            .filter_map(|n| n.get(step.name))
            .flat_map(|n| match (step.each, n) {
                (true, Value::Array(items)) => items.iter().collect::<Vec<_>>(),
                (true, _) => Vec::new(),
                (false, n) => vec![n],
            })
            .collect();
    }
    nodes
}

fn text_at<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v str> {
    steps
        .iter()
        .try_fold(value, |node, step| node.get(step.name))
        .and_then(Value::as_str)
}

/// A mark placed in an answer: the field's whole path, and for a named author the object both
/// share (the anchor) with each one's path below it.
struct Placed {
    field: String,
    author: Option<String>,
}

impl Placed {
    fn new(at: &str, mark: &Mark) -> Placed {
        Placed {
            field: format!("{at}{}", mark.field),
            author: mark.author_field().map(|a| format!("{at}{a}")),
        }
    }

    /// The anchor's steps, the field's below it, the author's below it.
    fn split(&self) -> (Vec<Step<'_>>, Vec<Step<'_>>, Vec<Step<'_>>) {
        let field = steps(&self.field);
        let Some(author) = &self.author else {
            return (Vec::new(), field, Vec::new());
        };
        let author = steps(author);
        // The deepest object holding both: shared steps, up to either's parent.
        let shared = field[..field.len().saturating_sub(1)]
            .iter()
            .zip(&author[..author.len().saturating_sub(1)])
            .take_while(|(a, b)| a == b)
            .count();
        (
            field[..shared].to_vec(),
            field[shared..].to_vec(),
            author[shared..].to_vec(),
        )
    }
}

/// The accounts the marks name as authors of text in `value`, each once.
pub fn authors(value: &Value, marks: &[(String, Mark)]) -> Vec<String> {
    let mut logins = Vec::new();
    for (at, mark) in marks {
        let placed = Placed::new(at, mark);
        if placed.author.is_none() {
            continue;
        }
        let (anchor, _, author) = placed.split();
        for object in nodes(value, &anchor) {
            if let Some(login) = text_at(object, &author) {
                logins.push(login.to_owned());
            }
        }
    }
    logins.sort();
    logins.dedup();
    logins
}

/// Withholds, in `value`, the marked text lockdown does not keep; returns where, and whose.
pub fn withhold(
    value: &mut Value,
    marks: &[(String, Mark)],
    args: &Args,
    verdicts: &Verdicts,
) -> Vec<Withheld> {
    let mut withheld = Vec::new();
    for (at, mark) in marks {
        if mark.writer.only_writers(args) {
            continue;
        }
        let placed = Placed::new(at, mark);
        let (anchor, field, author) = placed.split();
        let parent = |field: &[Step]| {
            let mut whole = anchor.clone();
            whole.extend_from_slice(&field[..field.len().saturating_sub(1)]);
            join(&whole)
        };
        for object in nodes_mut(value, &anchor) {
            let who = match &mark.writer {
                Writer::Author(_) => text_at(object, &author).map(str::to_owned),
                _ => None,
            };
            if who.as_deref().is_some_and(verdicts.trusts) {
                continue;
            }
            let notice = (verdicts.notice)(who.as_deref());
            let mut replaced = false;
            for slot in nodes_mut(object, &field) {
                if !slot.is_null() {
                    *slot = Value::String(notice.clone());
                    replaced = true;
                }
            }
            if replaced {
                withheld.push(Withheld {
                    at: parent(&field),
                    who: who.clone(),
                });
            }
        }
    }
    withheld.sort();
    withheld.dedup();
    withheld
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::untrusted::Rendering;

    fn mark(field: &str, writer: Writer) -> Mark {
        Mark {
            field: field.into(),
            writer,
            rendering: Rendering::Plain,
        }
    }

    fn notice(who: Option<&str>) -> String {
        format!("[withheld: {}]", who.unwrap_or("?"))
    }

    fn run(value: &mut Value, marks: &[(String, Mark)], args: &Args) -> Vec<Withheld> {
        let trusts = |login: &str| login == "alice";
        withhold(
            value,
            marks,
            args,
            &Verdicts {
                trusts: &trusts,
                notice: &notice,
            },
        )
    }

    #[test]
    fn a_stranger_is_withheld_and_a_writer_kept() {
        let marks = vec![
            (
                "items[].".to_owned(),
                mark("body", Writer::Author("author".into())),
            ),
            ("items[].".to_owned(), mark("label", Writer::Writers)),
        ];
        let mut value = json!({"items": [
            {"author": "alice", "body": "fine", "label": "bug"},
            {"author": "mallory", "body": "obey", "label": "bug"},
        ]});
        let withheld = run(&mut value, &marks, &Args::new());
        assert_eq!(
            value,
            json!({"items": [
                {"author": "alice", "body": "fine", "label": "bug"},
                {"author": "mallory", "body": "[withheld: mallory]", "label": "bug"},
            ]})
        );
        assert_eq!(
            withheld,
            vec![Withheld {
                at: "items[]".into(),
                who: Some("mallory".into())
            }]
        );
        assert_eq!(authors(&value, &marks), vec!["alice", "mallory"]);
    }

    #[test]
    fn an_author_of_the_enclosing_object_counts_for_nested_fields() {
        let marks = vec![
            (
                String::new(),
                mark("head.ref", Writer::Author("../author".into())),
            ),
            (String::new(), mark("base.ref", Writer::Writers)),
        ];
        let mut value = json!({"author": "mallory", "head": {"ref": "x"}, "base": {"ref": "main"}});
        let withheld = run(&mut value, &marks, &Args::new());
        assert_eq!(value["head"]["ref"], "[withheld: mallory]");
        assert_eq!(value["base"]["ref"], "main");
        assert_eq!(withheld[0].at, "head");
        assert_eq!(authors(&value, &marks), vec!["mallory"]);
    }

    #[test]
    fn text_anyone_may_write_goes_and_a_ref_decides_for_files() {
        let marks = vec![
            (String::new(), mark("title", Writer::Anyone)),
            (String::new(), mark("name", Writer::WritersAt("ref".into()))),
        ];
        let mut on_branch = json!({"title": "t", "name": "n"});
        let mut args = Args::new();
        args.insert("ref".into(), json!("main"));
        run(&mut on_branch, &marks, &args);
        assert_eq!(on_branch, json!({"title": "[withheld: ?]", "name": "n"}));
        let mut at_pull = json!({"title": null, "name": "n"});
        args.insert("ref".into(), json!("refs/pull/3/head"));
        run(&mut at_pull, &marks, &args);
        assert_eq!(at_pull, json!({"title": null, "name": "[withheld: ?]"}));
    }
}
