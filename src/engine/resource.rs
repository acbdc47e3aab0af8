//! A compiled resource, and the two halves of reading one: planning the upstream requests from a
//! URI, and assembling the content blocks from the answers.

use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::bound::{self, Next, PageRequest, Window};
use super::error::Error;
use super::param::Rule;
use super::project::{Context, Meta, Projection};
use super::request::{Args, RequestTemplate};
use super::template::UriTemplate;
use super::{Catalog, uri};
use crate::forge::{Request, Response};
use crate::manifest::raw::{Keep, Window as WindowKind};

/// The names of the paging variables of a list template.
pub const PAGE: &str = "page";
pub const LIMIT: &str = "limit";

/// A compiled resource.
#[derive(Debug)]
pub struct Resource {
    pub name: String,
    pub title: String,
    /// The manifest's description followed by the derived statement of bounds and caching.
    pub description: String,
    pub template: UriTemplate,
    pub(crate) params: Vec<Param>,
    pub(crate) fetch: RequestTemplate,
    pub(crate) with: Vec<(String, RequestTemplate)>,
    pub(crate) shape: Shape,
    pub(crate) markdown: Option<Markdown>,
    pub cache: Cache,
}

/// A template variable and its rule.
#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub rule: Rule,
    pub default: Option<Value>,
}

#[derive(Debug)]
pub(crate) enum Shape {
    Entity {
        project: Projection,
        embeds: Vec<Embed>,
    },
    List {
        from: Option<JsonPath>,
        item: Projection,
        cap: u64,
        tool: String,
        window: WindowKind,
    },
}

/// A bounded list inside an entity.
#[derive(Debug)]
pub(crate) struct Embed {
    pub field: String,
    pub source: EmbedSource,
    pub from: Option<JsonPath>,
    pub cap: u64,
    pub keep: Keep,
    pub window: WindowKind,
    pub tool: String,
    /// The named tool's largest `limit`, for sentinels that page backwards.
    pub tool_max_limit: u64,
    pub item: Projection,
}

#[derive(Debug)]
pub(crate) enum EmbedSource {
    Primary,
    With(usize),
    Fetch(RequestTemplate),
}

#[derive(Debug)]
pub(crate) struct Markdown {
    pub template: String,
    pub extra: Option<Projection>,
    pub max_chars: usize,
}

/// How long a result may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    Mutable,
    Immutable { ttl_ms: u64 },
}

/// One content block of a read.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub mime: &'static str,
    pub text: String,
}

/// What a read returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutput {
    pub blocks: Vec<Block>,
    pub cache: Cache,
}

/// A routed, validated read, ready to plan and assemble.
#[derive(Debug)]
pub struct Read<'c> {
    catalog: &'c Catalog,
    pub resource: &'c Resource,
    pub args: Args,
    page: Option<PageRequest>,
}

impl Catalog {
    /// Routes and validates `uri`: every refusal here happens before any upstream request.
    pub fn route(&self, raw: &str) -> Result<Read<'_>, Error> {
        let parsed =
            uri::parse(raw).map_err(|e| Error::invalid(format!("invalid URI `{raw}`: {e}")))?;
        let matched = self.router.at(&parsed.path).map_err(|_| {
            Error::invalid(format!(
                "no resource matches `{raw}`; resources/templates/list shows the URI templates served"
            ))
        })?;
        let resource = &self.resources[*matched.value];
        let mut args = Args::new();
        for (name, raw_value) in matched.params.iter() {
            let value = if resource.template.is_rest(name) {
                let parts: Result<Vec<_>, _> = raw_value.split('/').map(uri::decode).collect();
                parts
                    .map_err(|e| Error::invalid(format!("`{name}`: {e}")))?
                    .join("/")
            } else {
                uri::decode(raw_value)
                    .map_err(|e| Error::invalid(format!("`{name}`: {e}")))?
                    .into_owned()
            };
            args.insert(name.to_owned(), resource.check(name, &value)?);
        }
        for (name, value) in parsed.query {
            if !resource.template.query_vars().contains(&name) {
                let accepted = resource.template.query_vars().join(", ");
                let accepted = if accepted.is_empty() {
                    "none".to_owned()
                } else {
                    accepted
                };
                return Err(Error::invalid(format!(
                    "unknown query parameter `{name}` for {}; accepted: {accepted}",
                    resource.template.as_str()
                )));
            }
            let checked = resource.check(&name, &value)?;
            args.insert(name, checked);
        }
        for param in &resource.params {
            if let (false, Some(default)) = (args.contains_key(&param.name), &param.default) {
                args.insert(param.name.clone(), default.clone());
            }
        }
        let page = match &resource.shape {
            Shape::List { cap, .. } => Some(PageRequest::new(
                args.get(PAGE).and_then(Value::as_u64),
                args.get(LIMIT).and_then(Value::as_u64),
                *cap,
            )),
            Shape::Entity { .. } => None,
        };
        Ok(Read {
            catalog: self,
            resource,
            args,
            page,
        })
    }
}

impl Resource {
    fn check(&self, name: &str, value: &str) -> Result<Value, Error> {
        let param = self
            .params
            .iter()
            .find(|p| p.name == name)
            .expect("compile gives every template variable a rule");
        param.rule.check_text(value).map_err(|expected| {
            Error::invalid(format!("`{name}` must be {expected}; got `{value}`"))
        })
    }

    /// The template variables and their rules.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Every bound the resource enforces: (embedded field or `None` for the page, cap, tool).
    pub fn bounds(&self) -> Vec<(Option<&str>, u64, &str)> {
        match &self.shape {
            Shape::List { cap, tool, .. } => vec![(None, *cap, tool.as_str())],
            Shape::Entity { embeds, .. } => embeds
                .iter()
                .map(|e| (Some(e.field.as_str()), e.cap, e.tool.as_str()))
                .collect(),
        }
    }

    /// Whether the resource has no variables (it is listed by `resources/list`).
    pub fn is_concrete(&self) -> bool {
        self.template.vars().next().is_none()
    }
}

impl Read<'_> {
    /// The upstream requests, in order: primary, each `with:`, each embed with its own fetch.
    pub fn requests(&self) -> Result<Vec<Request>, Error> {
        let expand = |t: &RequestTemplate| {
            t.expand(&self.args)
                .map_err(|e| Error::invalid(format!("cannot build the upstream request: {e}")))
        };
        let mut primary = expand(&self.resource.fetch)?;
        if let (
            Shape::List {
                window: WindowKind::Upstream,
                ..
            },
            Some(page),
        ) = (&self.resource.shape, self.page)
        {
            push_paging(&mut primary, page.page, page.limit);
        }
        let mut requests = vec![primary];
        for (_, with) in &self.resource.with {
            requests.push(expand(with)?);
        }
        if let Shape::Entity { embeds, .. } = &self.resource.shape {
            for embed in embeds {
                if let EmbedSource::Fetch(t) = &embed.source {
                    let mut request = expand(t)?;
                    if embed.window == WindowKind::Upstream {
                        push_paging(&mut request, 1, embed.cap);
                    }
                    requests.push(request);
                }
            }
        }
        Ok(requests)
    }

    /// Builds the content blocks from the answers to [`Read::requests`], in the same order.
    pub fn assemble(&self, responses: Vec<Response>) -> Result<ReadOutput, Error> {
        let mut responses = responses.into_iter();
        let primary = responses
            .next()
            .expect("the primary request is always planned");
        let with_count = self.resource.with.len();
        let with: Vec<Value> = responses
            .by_ref()
            .take(with_count)
            .map(|r| r.body.json())
            .collect();
        let primary_body = primary.body.json();
        let ctx = Context {
            primary: &primary_body,
            with: &with,
            args: &self.args,
            meta: Meta {
                total_count: primary.total_count,
                answered: None,
            },
        };
        let value = match &self.resource.shape {
            Shape::List {
                from,
                item,
                tool,
                window,
                ..
            } => {
                let page = self.page.expect("list reads always have a page");
                let items = items_of(&primary_body, from.as_ref());
                let window = match window {
                    WindowKind::Upstream => {
                        bound::upstream_page(items, page, primary.total_count, primary.has_next)
                    }
                    WindowKind::Server => bound::server_page(items, page),
                };
                self.list_envelope(window, page, item, tool)
            }
            Shape::Entity { project, embeds } => {
                let mut value = project.apply(&ctx);
                let mut extra = responses;
                for embed in embeds {
                    let (body, total, has_next) = match &embed.source {
                        EmbedSource::Primary => {
                            (primary_body.clone(), primary.total_count, primary.has_next)
                        }
                        EmbedSource::With(i) => (with[*i].clone(), None, None),
                        EmbedSource::Fetch(_) => {
                            let r = extra.next().expect("one answer per embed fetch");
                            (r.body.json(), r.total_count, r.has_next)
                        }
                    };
                    let items = items_of(&body, embed.from.as_ref());
                    embed_into(&mut value, embed, items, total, has_next, &self.args);
                }
                value
            }
        };
        let json = serde_json::to_string(&value).expect("a JSON value always serializes");
        let mut blocks = vec![Block {
            mime: "application/json",
            text: json,
        }];
        if let Some(markdown) = &self.resource.markdown {
            let mut context = value;
            if let (Some(extra), Value::Object(map)) = (&markdown.extra, &mut context)
                && let Value::Object(more) = extra.apply(&ctx)
            {
                map.extend(more);
            }
            let text = self
                .catalog
                .renderer
                .render(&markdown.template, &context, markdown.max_chars)
                .map_err(|e| {
                    Error::invalid(format!("markdown of {} failed: {e}", self.resource.name))
                })?;
            blocks.push(Block {
                mime: "text/markdown",
                text,
            });
        }
        Ok(ReadOutput {
            blocks,
            cache: self.resource.cache,
        })
    }

    fn list_envelope(
        &self,
        window: Window,
        page: PageRequest,
        item: &Projection,
        tool: &str,
    ) -> Value {
        let mut out = Map::new();
        out.insert("page".into(), page.page.into());
        out.insert("limit".into(), page.limit.into());
        if let Some(total) = window.total {
            out.insert("total_count".into(), total.into());
        }
        out.insert("has_more".into(), window.has_more.into());
        let shown = window.items.len();
        let items: Vec<Value> = window
            .items
            .iter()
            .map(|i| item.apply(&Context::item(i, &self.args)))
            .collect();
        out.insert("items".into(), Value::Array(items));
        if window.has_more {
            let next = Next::Page {
                page: page.page + 1,
                limit: page.limit,
            };
            let next_uri = self.resource.template.expand(|var| match var {
                PAGE => Some((page.page + 1).to_string()),
                LIMIT => Some(page.limit.to_string()),
                other => self.args.get(other).map(|v| match v {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                }),
            });
            out.insert("next".into(), Value::String(next_uri));
            out.insert(
                "truncated".into(),
                bound::sentinel(tool, shown, window.total, next).into(),
            );
        }
        Value::Object(out)
    }
}

fn push_paging(request: &mut Request, page: u64, limit: u64) {
    request.query.push((PAGE.into(), page.to_string()));
    request.query.push((LIMIT.into(), limit.to_string()));
}

/// The array a list lives in: the body, or the value at `from`; anything else is empty.
fn items_of(body: &Value, from: Option<&JsonPath>) -> Vec<Value> {
    let found = match from {
        Some(path) => path.query(body).first(),
        None => Some(body),
    };
    match found {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

/// Adds one embedded list (and its sentinel when capped) to the entity.
fn embed_into(
    value: &mut Value,
    embed: &Embed,
    items: Vec<Value>,
    total: Option<u64>,
    has_next: Option<bool>,
    args: &Args,
) {
    let window = match (embed.keep, embed.window) {
        (Keep::Newest, _) => bound::newest(items, embed.cap),
        (Keep::Oldest, WindowKind::Server) => {
            bound::server_page(items, PageRequest::new(Some(1), Some(embed.cap), embed.cap))
        }
        (Keep::Oldest, WindowKind::Upstream) => bound::upstream_page(
            items,
            PageRequest::new(Some(1), Some(embed.cap), embed.cap),
            total,
            has_next,
        ),
    };
    let Value::Object(map) = value else { return };
    let shown = window.items.len();
    let items: Vec<Value> = window
        .items
        .iter()
        .map(|i| embed.item.apply(&Context::item(i, args)))
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
            Value::String(bound::sentinel(&embed.tool, shown, window.total, next)),
        );
    }
}
