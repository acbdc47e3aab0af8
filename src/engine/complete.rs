//! `completion/complete` for template variables: the values of an enumerated rule, or
//! candidates fetched from the forge and filtered by what was typed.

use serde_json::Value;
use serde_json_path::JsonPath;

use super::Catalog;
use super::project::{Context, Field};
use super::request::{Args, RequestTemplate, substitute, text_of};
use crate::forge::{Request, Response};

/// Most candidates one answer offers (the protocol's limit).
pub const MAX_CANDIDATES: usize = 100;

/// A compiled `completions:` entry.
#[derive(Debug)]
pub struct Completion {
    pub(crate) sources: Vec<Source>,
}

#[derive(Debug)]
pub(crate) struct Source {
    pub fetch: RequestTemplate,
    pub from: Option<JsonPath>,
    pub value: Field,
    pub filter: Vec<(Field, String)>,
}

/// How to complete one variable.
#[derive(Debug)]
pub enum Plan<'c> {
    /// Candidates known without asking the forge.
    Values(Vec<String>),
    /// Candidates from these requests, to be finished by [`Completion::candidates`].
    Fetch(&'c Completion, Vec<Request>, Args),
}

impl Catalog {
    /// How to complete `var` of the template `template` given the `typed` prefix and the other
    /// arguments already chosen.
    pub fn complete(
        &self,
        template: &str,
        var: &str,
        typed: &str,
        context: &[(String, String)],
    ) -> Plan<'_> {
        let Some(resource) = self
            .resources
            .iter()
            .find(|r| r.template.as_str() == template)
        else {
            return Plan::Values(Vec::new());
        };
        let Some(param) = resource.params.iter().find(|p| p.name == var) else {
            return Plan::Values(Vec::new());
        };
        if let Some(values) = param.rule.values() {
            return Plan::Values(filter_prefix(values.iter().cloned(), typed));
        }
        let Some(completion) = self.completions.get(var) else {
            return Plan::Values(Vec::new());
        };
        let mut args: Args = context
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        args.insert("value".into(), Value::String(typed.to_owned()));
        // A source needing an argument not given yet (or an invalid one) is skipped.
        let requests = completion
            .sources
            .iter()
            .filter_map(|s| s.fetch.expand(&args).ok())
            .collect();
        Plan::Fetch(completion, requests, args)
    }
}

impl Completion {
    /// The candidates in the answers (one per source request, `None` for a failed one).
    pub fn candidates(&self, answers: &[Option<Response>], args: &Args) -> Vec<String> {
        let typed = text_of(args, "value").unwrap_or_default();
        let mut values = Vec::new();
        for (source, answer) in self.sources.iter().zip(answers) {
            let Some(answer) = answer else { continue };
            let body = answer.body.as_json();
            let items = match &source.from {
                Some(path) => path.query(&body).first(),
                None => Some(&*body),
            };
            let Some(Value::Array(items)) = items else {
                continue;
            };
            for item in items {
                let ctx = Context::item(item, args);
                let kept = source.filter.iter().all(|(field, wanted)| {
                    let wanted = substitute(wanted, args);
                    matches!(field.eval(&ctx), Value::String(s) if s.eq_ignore_ascii_case(&wanted))
                });
                if let (true, Value::String(v)) = (kept, source.value.eval(&ctx)) {
                    values.push(v);
                }
            }
        }
        let mut values = filter_prefix(values.into_iter(), &typed);
        values.sort_by_key(|v| v.to_lowercase());
        values.dedup();
        values.truncate(MAX_CANDIDATES);
        values
    }
}

fn filter_prefix(values: impl Iterator<Item = String>, typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    values
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect()
}
