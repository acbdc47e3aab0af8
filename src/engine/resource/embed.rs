//! Embedded lists: the bounded list an entity carries (comments of an issue, statuses of a
//! commit), with the sentinel naming its tool when capped.

use serde_json::Value;

use super::Embed;
use crate::engine::bound::{self, Next, PageRequest};
use crate::engine::project::Context;
use crate::manifest::raw::{Keep, Window as WindowKind};

/// Adds one embedded list (and its sentinel when capped) to the entity.
pub(super) fn embed_into(
    value: &mut Value,
    embed: &Embed,
    mention: String,
    items: Vec<&Value>,
    total: Option<u64>,
    has_next: Option<bool>,
    ctx: &Context,
) {
    let args = ctx.args;
    let first_page = PageRequest::new(Some(1), Some(embed.cap), embed.cap);
    let window = match (embed.keep, embed.window) {
        (Keep::Newest, WindowKind::Server) => bound::newest(items, embed.cap),
        (Keep::Newest, WindowKind::Upstream) => {
            let mut w = bound::newest(items, embed.cap);
            if let Some(total) = total {
                w.has_more = total > w.items.len() as u64;
                w.total = Some(total);
            }
            w
        }
        (Keep::Oldest, WindowKind::Server) => {
            let mut w = bound::server_page(items, first_page);
            // An answer may hold only part of a list whose whole length it states (the wiki's
            // revisions come in pages of the forge's own size, with a `count` of all of them).
            if let Some(total) = total
                && w.total.is_some_and(|held| total > held)
            {
                w.total = Some(total);
                w.has_more = total > w.items.len() as u64;
            }
            w
        }
        (Keep::Oldest, WindowKind::Upstream) => {
            bound::upstream_page(items, first_page, total, has_next)
        }
    };
    let Value::Object(map) = value else { return };
    let shown = window.items.len();
    let items: Vec<Value> = window
        .items
        .iter()
        .map(|i| embed.item.apply(&Context::item(i, args).at(ctx.instance)))
        .collect();
    map.insert(embed.field.clone(), Value::Array(items));
    if window.has_more {
        let next = match embed.keep {
            Keep::Newest => Next::Older {
                older: window.total.unwrap_or(0).saturating_sub(shown as u64),
                max_limit: embed.tool_max_limit,
            },
            Keep::Oldest => Next::Page {
                page: 2,
                limit: embed.cap,
            },
        };
        map.insert(
            format!("{}_truncated", embed.field),
            Value::String(bound::sentinel(&mention, shown, window.total, next)),
        );
    }
}
