//! A list read's page and how to go on from it: the envelope, the `next` URI, and the call of
//! the list's tool that continues the same filtered sequence (what its sentinel names).

use serde_json::{Map, Value};

use super::{Carried, Read, Shape};
use crate::engine::bound::{self, Fitted, LIMIT, Next, PAGE, PageRequest, Window};
use crate::engine::endpoint::room;
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
        let fitted = Fitted::new(window, items, page, room(budget, 0));
        let (page, total, has_more, cut, shown) = (
            fitted.page,
            fitted.total,
            fitted.has_more,
            fitted.cut,
            fitted.items.len(),
        );
        let mut out = fitted.envelope();
        if has_more {
            let next = Next::Page {
                page: page.page + 1,
                limit: page.limit,
            };
            let next_uri = self.next_uri(page.page + 1, page.limit);
            out.insert("next".into(), Value::String(next_uri));
            let filters: Vec<String> = self
                .continuation(page.page + 1, page.limit)
                .into_iter()
                .filter(|(k, _)| k != PAGE && k != LIMIT)
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            let mut sentinel =
                bound::sentinel_with(&self.catalog.mention(tool), &filters, shown, total, next);
            if cut {
                sentinel = format!(
                    "[truncated to stay under {budget} bytes: this answer is page {} at limit {}.] {sentinel}",
                    page.page, page.limit
                );
            }
            out.insert("truncated".into(), sentinel.into());
        }
        Value::Object(out)
    }
}
