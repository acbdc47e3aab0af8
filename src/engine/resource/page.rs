//! A list read's page and how to go on from it: the envelope, the `next` URI, and the call of
//! the list's tool that continues the same filtered sequence (what its sentinel names).

use serde_json::{Map, Value};

use super::{Carried, Read, Shape};
use crate::engine::bound::{LIMIT, PAGE, PageRequest, Window};
use crate::engine::endpoint::{GoOn, list_page};
use crate::engine::request::text_of;

impl Read<'_> {
    /// This read's URI with some variables replaced and `clear` left out.
    pub(super) fn uri_with(&self, replace: &[(&str, String)], clear: &[Option<&str>]) -> String {
        self.resource.template.expand(|var| {
            if let Some((_, v)) = replace.iter().find(|(n, _)| *n == var) {
                return Some(v.clone());
            }
            if clear.contains(&Some(var)) {
                return None;
            }
            text_of(&self.args, var)
        })
    }

    /// The tool a list read's sentinels name.
    pub fn list_tool(&self) -> Option<&str> {
        match &self.resource.shape {
            Shape::List { tool, .. } => Some(tool),
            Shape::Entity { .. } => None,
        }
    }

    /// This read's URI at page `page` and `limit`: its `next`.
    pub fn next_uri(&self, page: u64, limit: u64) -> String {
        self.uri_with(&[(PAGE, page.to_string()), (LIMIT, limit.to_string())], &[])
    }

    /// The arguments of the list tool's call that returns page `page` at `limit` of this read's
    /// list, filters included: what its sentinel names. Empty for a read that is not a list.
    pub fn continuation(&self, page: u64, limit: u64) -> Map<String, Value> {
        let Shape::List { carried, .. } = &self.resource.shape else {
            return Map::new();
        };
        let mut args = Map::new();
        for Carried { arg, var, array } in carried {
            let Some(value) = text_of(&self.args, var) else {
                continue;
            };
            let value = match array {
                true => Value::Array(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(|s| Value::String(s.to_owned()))
                        .collect(),
                ),
                false => Value::String(value),
            };
            args.insert(arg.clone(), value);
        }
        args.insert(PAGE.into(), page.into());
        args.insert(LIMIT.into(), limit.into());
        args
    }

    /// A list page's envelope, its projected `items` fitted to the budget, with how to go on.
    pub(super) fn list_envelope(
        &self,
        window: Window<()>,
        items: Vec<Value>,
        page: PageRequest,
        tool: &str,
        budget: usize,
    ) -> Value {
        let filters: Vec<String> = self
            .continuation(page.page + 1, page.limit)
            .into_iter()
            .filter(|(k, _)| k != PAGE && k != LIMIT)
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect();
        let go_on = GoOn::Read {
            next_uri: &|page, limit| self.next_uri(page, limit),
            mention: self.catalog.mention(tool),
            filters,
        };
        let out = list_page(window, items, page, budget, go_on, Map::new());
        Value::Object(out)
    }
}
