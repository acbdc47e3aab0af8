//! A compiled resource, and reading one: route the URI, plan the upstream requests, follow up
//! on their answers (fallbacks, the tail of a newest-first list), assemble the content blocks.
//!
//! The engine plans and the caller sends: [`Read::plan`] gives the first requests (sent
//! concurrently), [`Read::follow_up`] looks at every answer so far and gives the next requests
//! or none, and [`Read::assemble`] builds the blocks. Each request is tagged with its [`Slot`].

use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use super::answer::{self, Expected};
use super::bound::{self, Fitted, LIMIT, Next, PAGE, PageRequest, Window};
use super::error::Error;
use super::param::Rule;
use super::project::{Context, Field, Meta, Projection};
use super::request::{Args, RequestTemplate, substitute, text_of};
use super::template::UriTemplate;
use super::text::{Cut, TextSpec};
use super::tool::{ENVELOPE_ROOM, within};
use super::untrusted::{self, Envelope, Mark};
use super::{Catalog, uri};
use crate::forge::{Accept, ForgeError, Request, Response};
use crate::manifest::raw::{Keep, Window as WindowKind};

/// A compiled resource.
#[derive(Debug)]
pub struct Resource {
    pub name: String,
    /// Where the resource's `fetch` is written, for findings about its requests.
    pub pos: crate::manifest::Pos,
    pub title: String,
    /// The manifest's description followed by the derived statement of bounds and caching.
    pub description: String,
    pub template: UriTemplate,
    pub(crate) params: Vec<Param>,
    pub(crate) fetch: RequestTemplate,
    pub(crate) answered_as: Option<String>,
    pub(crate) fallbacks: Vec<(RequestTemplate, String)>,
    pub(crate) with: Vec<(String, RequestTemplate)>,
    pub(crate) secrets: Vec<JsonPath>,
    pub(crate) checks: Vec<Check>,
    pub(crate) shape: Shape,
    pub(crate) text: Option<TextSpec>,
    pub(crate) markdown: Option<Markdown>,
    pub cache: Cache,
    pub(crate) provisional: Option<Provisional>,
}

/// When an answer of an immutable resource is not final yet, and how long it may be reused.
#[derive(Debug)]
pub(crate) struct Provisional {
    /// A top-level field of the projection.
    pub field: String,
    pub values: Vec<String>,
    pub ttl_ms: u64,
}

/// A template variable and its rule.
#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub rule: std::sync::Arc<Rule>,
    pub default: Option<Value>,
}

/// A condition the primary answer must meet.
#[derive(Debug)]
pub(crate) struct Check {
    pub source: String,
    pub value: Field,
    pub expect: Expect,
    pub when: Vec<(String, String)>,
}

#[derive(Debug)]
pub(crate) enum Expect {
    Equals(String),
    EndsWith(String),
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
        /// A non-array answer is an entity, projected like an item.
        only_arrays: bool,
        /// The read's variables the list's tool takes too: what its sentinel's call carries.
        carried: Vec<Carried>,
    },
}

/// A variable of a list read that the list's tool takes as an argument.
#[derive(Debug)]
pub(crate) struct Carried {
    /// The tool's argument.
    pub arg: String,
    /// The URI variable giving its value.
    pub var: String,
    /// The argument is an array: a comma-separated value of the URI is a list.
    pub array: bool,
}

/// A bounded list inside an entity.
#[derive(Debug)]
pub(crate) struct Embed {
    pub field: String,
    pub source: EmbedSource,
    pub from: Option<JsonPath>,
    /// Where the source body counts the whole list (instead of `X-Total-Count`).
    pub total: Option<JsonPath>,
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
    /// The template is registered under the resource's name.
    pub extra: Option<Projection>,
    /// The top-level names the template reads.
    pub reads: Vec<String>,
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
    /// What the answer says about itself (`_meta` of its JSON block): which fields hold text
    /// written by forge users, and which field holds who wrote each.
    pub meta: Option<Value>,
    /// How long the answer may be reused: set for an immutable resource (shorter while its
    /// answer is provisional), `None` for a mutable one.
    pub ttl_ms: Option<u64>,
}

impl Provisional {
    /// Whether the projected answer is not final yet.
    fn holds(&self, projected: &Value) -> bool {
        matches!(projected.get(&self.field), Some(Value::String(s)) if self.values.contains(s))
    }
}

/// Which part of a read a request serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// The primary request (0) or one of its fallbacks (1…).
    Primary(usize),
    With(usize),
    /// An embed's own request (its first page).
    Embed(usize),
    /// A further page of an embed that keeps its newest items.
    EmbedPage(usize, u64),
}

/// A request to send, and what it is for.
#[derive(Debug, Clone)]
pub struct Planned {
    pub slot: Slot,
    pub request: Request,
}

/// What came back for a planned request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub slot: Slot,
    pub result: Result<Response, ForgeError>,
}

/// A routed, validated read.
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
        if let Some(text) = &resource.text {
            text.check_range(&args)?;
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

    /// Every request the resource may send, with the query names forgelens adds to it (the
    /// paging of a list or of an embed paged upstream).
    pub fn upstream(&self) -> Vec<(&RequestTemplate, &'static [&'static str])> {
        const PAGING: &[&str] = &[PAGE, LIMIT];
        let list_paging: &[&str] = match &self.shape {
            Shape::List {
                window: WindowKind::Upstream,
                ..
            } => PAGING,
            _ => &[],
        };
        let mut all: Vec<(&RequestTemplate, &[&str])> = vec![(&self.fetch, list_paging)];
        all.extend(self.fallbacks.iter().map(|(t, _)| (t, list_paging)));
        all.extend(self.with.iter().map(|(_, t)| (t, &[] as &[&str])));
        for embed in self.embeds() {
            if let EmbedSource::Fetch(t) = &embed.source {
                all.push((
                    t,
                    if embed.window == WindowKind::Upstream {
                        PAGING
                    } else {
                        &[]
                    },
                ));
            }
        }
        all
    }

    fn embeds(&self) -> &[Embed] {
        match &self.shape {
            Shape::Entity { embeds, .. } => embeds,
            Shape::List { .. } => &[],
        }
    }

    /// Every request template the resource may send: primary, fallbacks, `with:`, embeds.
    pub fn request_templates(&self) -> Vec<&RequestTemplate> {
        let mut all = vec![&self.fetch];
        all.extend(self.fallbacks.iter().map(|(t, _)| t));
        all.extend(self.with.iter().map(|(_, t)| t));
        if let Shape::Entity { embeds, .. } = &self.shape {
            all.extend(embeds.iter().filter_map(|e| match &e.source {
                EmbedSource::Fetch(t) => Some(t),
                _ => None,
            }));
        }
        all
    }

    /// Whether the resource has no variables (it is listed by `resources/list`).
    pub fn is_concrete(&self) -> bool {
        self.template.vars().next().is_none()
    }
}

impl Read<'_> {
    fn expand(&self, template: &RequestTemplate) -> Result<Request, Error> {
        template
            .expand(&self.args)
            .map_err(|e| Error::invalid(format!("cannot build the upstream request: {e}")))
    }

    fn primary_request(&self, alternative: usize) -> Result<Request, Error> {
        let template = match alternative {
            0 => &self.resource.fetch,
            n => &self.resource.fallbacks[n - 1].0,
        };
        let mut request = self.expand(template)?;
        if let (
            Shape::List {
                window: WindowKind::Upstream,
                ..
            },
            Some(page),
        ) = (&self.resource.shape, self.page)
        {
            page.ask(&mut request, true);
        }
        if self
            .resource
            .text
            .as_ref()
            .is_some_and(|t| t.from.is_none())
        {
            request.accept = Accept::Text;
        }
        Ok(request)
    }

    /// The first requests, sent together.
    pub fn plan(&self) -> Result<Vec<Planned>, Error> {
        let mut planned = vec![Planned {
            slot: Slot::Primary(0),
            request: self.primary_request(0)?,
        }];
        for (i, (_, with)) in self.resource.with.iter().enumerate() {
            planned.push(Planned {
                slot: Slot::With(i),
                request: self.expand(with)?,
            });
        }
        for (i, embed) in self.embeds().iter().enumerate() {
            if let EmbedSource::Fetch(t) = &embed.source {
                let mut request = self.expand(t)?;
                if embed.window == WindowKind::Upstream {
                    PageRequest::new(None, None, embed.cap).ask(&mut request, true);
                }
                planned.push(Planned {
                    slot: Slot::Embed(i),
                    request,
                });
            }
        }
        Ok(planned)
    }

    fn embeds(&self) -> &[Embed] {
        self.resource.embeds()
    }

    /// The next requests given every answer so far: a fallback after a 404, the tail pages of
    /// a newest-first embed; empty when the read is complete. A failed answer that nothing
    /// follows up is the read's error.
    pub fn follow_up(&self, answers: &[Answer]) -> Result<Vec<Planned>, Error> {
        let mut next = Vec::new();
        let primary = answers
            .iter()
            .filter_map(|a| match a.slot {
                Slot::Primary(n) => Some((n, &a.result)),
                _ => None,
            })
            .max_by_key(|(n, _)| *n);
        if let Some((n, Err(error))) = primary {
            if error.status() == Some(404) && n < self.resource.fallbacks.len() {
                next.push(Planned {
                    slot: Slot::Primary(n + 1),
                    request: self.primary_request(n + 1)?,
                });
            } else {
                return Err(error.clone().into());
            }
        }
        for answer in answers {
            if let (Slot::With(_) | Slot::Embed(_) | Slot::EmbedPage(..), Err(error)) =
                (answer.slot, &answer.result)
            {
                return Err(error.clone().into());
            }
        }
        for (i, embed) in self.embeds().iter().enumerate() {
            let (Keep::Newest, WindowKind::Upstream, EmbedSource::Fetch(t)) =
                (embed.keep, embed.window, &embed.source)
            else {
                continue;
            };
            let probe = answers.iter().find(|a| a.slot == Slot::Embed(i));
            let already = answers
                .iter()
                .any(|a| matches!(a.slot, Slot::EmbedPage(j, _) if j == i));
            if let (
                Some(Answer {
                    result: Ok(first), ..
                }),
                false,
            ) = (probe, already)
                && let Some(total) = first.total_count
                && total > embed.cap
            {
                for page in tail_pages(total, embed.cap) {
                    let mut request = self.expand(t)?;
                    PageRequest::new(Some(page), None, embed.cap).ask(&mut request, true);
                    next.push(Planned {
                        slot: Slot::EmbedPage(i, page),
                        request,
                    });
                }
            }
        }
        Ok(next)
    }

    /// Refuses a primary answer of a shape the resource cannot read: a list needs its array,
    /// an entity an object (a resource that reads the body as its text takes a string too).
    fn expect_shape(&self, body: &Value, request: &str, status: u16) -> Result<(), Error> {
        match &self.resource.shape {
            Shape::List {
                only_arrays: true, ..
            } if !body.is_array() => {
                answer::expect(Expected::Object, Some(body), request, status, "")
            }
            Shape::List { from, .. } => {
                let found = match from {
                    Some(path) => path.query(body).first(),
                    None => Some(body),
                };
                answer::expect(Expected::List, found, request, status, "")
            }
            Shape::Entity { .. }
                if body.is_string()
                    && self
                        .resource
                        .text
                        .as_ref()
                        .is_some_and(|t| t.from.is_none()) =>
            {
                Ok(())
            }
            Shape::Entity { .. } => {
                answer::expect(Expected::Object, Some(body), request, status, "")
            }
        }
    }

    /// Builds the content blocks from every answer.
    pub fn assemble(&self, answers: Vec<Answer>) -> Result<ReadOutput, Error> {
        let budget = self.catalog.max_answer_bytes;
        let mut primary: Option<(usize, Response)> = None;
        let mut with: Vec<Value> = vec![Value::Null; self.resource.with.len()];
        let mut embed_first: Vec<Option<Response>> = vec![None; self.embeds().len()];
        let mut embed_pages: Vec<Vec<(u64, Response)>> = vec![Vec::new(); self.embeds().len()];
        for answer in answers {
            let Ok(response) = answer.result else {
                continue;
            };
            match answer.slot {
                Slot::Primary(n) => primary = Some((n, response)),
                Slot::With(i) => with[i] = self.redact(response.body.into_json()),
                Slot::Embed(i) => embed_first[i] = Some(response),
                Slot::EmbedPage(i, page) => embed_pages[i].push((page, response)),
            }
        }
        let (alternative, primary) = primary.ok_or(Error::Unanswered("its primary request"))?;
        let Response {
            status,
            total_count,
            has_next,
            body,
            ..
        } = primary;
        let body = self.redact(body.into_json());
        let request = match alternative {
            0 => &self.resource.fetch,
            n => &self.resource.fallbacks[n - 1].0,
        };
        self.expect_shape(&body, request.as_str(), status)?;
        let answered = match alternative {
            0 => self.resource.answered_as.as_deref(),
            n => Some(self.resource.fallbacks[n - 1].1.as_str()),
        };
        let ctx = Context {
            primary: &body,
            with: &with,
            args: &self.args,
            meta: Meta {
                total_count,
                answered,
            },
            instance: self.catalog.instance(),
        };
        self.run_checks(&ctx)?;
        let mut value = match &self.resource.shape {
            Shape::List {
                from,
                item,
                tool,
                window,
                only_arrays,
                ..
            } if !*only_arrays || body.is_array() => {
                let page = self.page.expect("list reads always have a page");
                let items = items_of(&body, from.as_ref());
                let window = match window {
                    WindowKind::Upstream => {
                        bound::upstream_page(items, page, total_count, has_next)
                    }
                    WindowKind::Server => bound::server_page(items, page),
                };
                self.list_envelope(window, page, item, tool)
            }
            Shape::List { item, .. } => item.apply(&ctx),
            Shape::Entity { project, embeds } => {
                let mut value = project.apply(&ctx);
                for (i, embed) in embeds.iter().enumerate() {
                    // The list's length: where the manifest says the body counts it, else the header.
                    let counted = |source: &Value, header: Option<u64>| {
                        embed
                            .total
                            .as_ref()
                            .and_then(|p| count_at(source, p))
                            .or(header)
                    };
                    // The bodies of the embed's own requests, which its items borrow.
                    let fetched: Vec<Value>;
                    let (items, total, has_next) = match &embed.source {
                        EmbedSource::Primary => (
                            items_of(&body, embed.from.as_ref()),
                            counted(&body, total_count),
                            has_next,
                        ),
                        EmbedSource::With(w) => (
                            items_of(&with[*w], embed.from.as_ref()),
                            counted(&with[*w], None),
                            None,
                        ),
                        EmbedSource::Fetch(_) => {
                            let first = embed_first[i]
                                .take()
                                .ok_or(Error::Unanswered("an embedded list's request"))?;
                            let mut pages = std::mem::take(&mut embed_pages[i]);
                            pages.sort_by_key(|(p, _)| *p);
                            let (header, first_has_next) = (first.total_count, first.has_next);
                            // Page 1 (the probe), then the tail pages in order: the newest rows end the list.
                            fetched = std::iter::once(first.body.into_json())
                                .chain(pages.into_iter().map(|(_, page)| page.body.into_json()))
                                .collect();
                            let items = fetched
                                .iter()
                                .flat_map(|body| items_of(body, embed.from.as_ref()))
                                .collect();
                            (items, counted(&fetched[0], header), first_has_next)
                        }
                    };
                    let mention = self.catalog.mention(&embed.tool);
                    embed_into(&mut value, embed, mention, items, total, has_next, &ctx);
                }
                value
            }
        };
        let mut text_block = None;
        if let Some(text) = &self.resource.text
            && !matches!(&self.resource.shape, Shape::List { only_arrays: true, .. } if body.is_array())
        {
            let room = budget.saturating_sub(ENVELOPE_ROOM + bound::json_size(&value));
            let cut = text.cut(text.text_of(&ctx).as_deref(), &self.args, room)?;
            let described = text.describe(&cut, |line, byte| {
                let mut replace =
                    vec![(text.start_line.as_deref().unwrap_or(""), line.to_string())];
                let mut clear = vec![text.end_line.as_deref()];
                match (text.start_byte.as_deref(), byte) {
                    (Some(var), Some(b)) => replace.push((var, b.to_string())),
                    (var, None) => clear.push(var),
                    (None, Some(_)) => {}
                }
                format!("Read {}", self.uri_with(&replace, &clear))
            });
            if let Value::Object(map) = &mut value {
                map.extend(described);
            }
            if let Cut::Lines(w) = cut {
                text_block = Some(match text.untrusted {
                    Some(_) => Envelope::fresh(std::iter::once(w.text.as_str())).wrap(
                        &w.text,
                        &self.resource.name,
                        None,
                        &self.uri_with(&[], &[]),
                    ),
                    None => w.text,
                });
            }
        }
        let ttl_ms = match self.resource.cache {
            Cache::Mutable => None,
            Cache::Immutable { ttl_ms } => Some(match &self.resource.provisional {
                Some(p) if p.holds(&value) => p.ttl_ms,
                _ => ttl_ms,
            }),
        };
        // The text block is cut to fit already; the JSON gets what room is left beside it.
        let room = budget.saturating_sub(text_block.as_ref().map_or(0, String::len));
        let mut json = serde_json::to_string(&value).expect("a JSON value always serializes");
        if json.len() > room {
            json = serde_json::to_string(&within(value.clone(), room))
                .expect("a JSON value always serializes");
        }
        let mut blocks = vec![Block {
            mime: "application/json",
            text: json,
        }];
        if let Some(text) = text_block {
            blocks.push(Block {
                mime: "text/plain",
                text,
            });
        }
        let marks = self.marks();
        let meta = untrusted::describe(&marks);
        if let Some(markdown) = &self.resource.markdown {
            // The block is the user's text when it shows any: who wrote it is read before the
            // fields are handed over.
            let extra_marks = markdown.extra.as_ref().map(Projection::marks);
            let shown = marks
                .iter()
                .filter(|(prefix, _)| prefix.is_empty())
                .map(|(_, m)| m)
                .chain(extra_marks.iter().flatten())
                .filter(|m| markdown.reads.contains(&m.field))
                .collect::<Vec<_>>();
            // Who wrote it: the author field a shown mark names, in the JSON's top level.
            let author = shown
                .iter()
                .filter_map(|m| m.author.as_deref())
                .find_map(|a| value.get(a).and_then(Value::as_str))
                .map(str::to_owned);
            let shown = !shown.is_empty();
            // Only what the template reads is handed over: the renderer converts its whole
            // context, embedded lists and all, before it renders a line.
            let mut context = Map::with_capacity(markdown.reads.len());
            if let Value::Object(mut map) = value {
                for name in &markdown.reads {
                    if let Some((name, field)) = map.swap_remove_entry(name) {
                        context.insert(name, field);
                    }
                }
            }
            if let Some(extra) = &markdown.extra
                && let Value::Object(more) = extra.apply(&ctx)
            {
                context.extend(more);
            }
            let text = self
                .catalog
                .renderer
                .render(
                    &self.resource.name,
                    &Value::Object(context),
                    markdown.max_chars,
                )
                .map_err(|e| {
                    Error::invalid(format!("markdown of {} failed: {e}", self.resource.name))
                })?;
            let used: usize = blocks.iter().map(|b| b.text.len()).sum();
            let text = markdown_within(text, budget.saturating_sub(used));
            blocks.push(Block {
                mime: "text/markdown",
                text: match shown {
                    true => Envelope::fresh(std::iter::once(text.as_str())).wrap(
                        &text,
                        &self.resource.name,
                        author.as_deref(),
                        &self.uri_with(&[], &[]),
                    ),
                    false => text,
                },
            });
        }
        Ok(ReadOutput {
            blocks,
            meta,
            ttl_ms,
        })
    }

    /// The fields of the answer marked `| untrusted`, each with where it sits (`""` at the
    /// top, `items[].` in a list, `recent_comments[].` in an embed).
    fn marks(&self) -> Vec<(String, Mark)> {
        let within = |prefix: &str, p: &Projection| {
            p.marks()
                .into_iter()
                .map(|m| (prefix.to_owned(), m))
                .collect::<Vec<_>>()
        };
        match &self.resource.shape {
            Shape::List { item, .. } => within("items[].", item),
            Shape::Entity { project, embeds } => {
                let mut all = within("", project);
                for embed in embeds {
                    all.extend(within(&format!("{}[].", embed.field), &embed.item));
                }
                all
            }
        }
    }

    /// Removes the manifest's secret paths from an answer.
    fn redact(&self, mut body: Value) -> Value {
        for path in &self.resource.secrets {
            remove_matches(&mut body, path);
        }
        body
    }

    fn run_checks(&self, ctx: &Context) -> Result<(), Error> {
        for check in &self.resource.checks {
            let applies = check
                .when
                .iter()
                .all(|(var, value)| text_of(&self.args, var).as_deref() == Some(value.as_str()));
            if !applies {
                continue;
            }
            let actual = match check.value.eval(ctx) {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            let (ok, wanted) = match &check.expect {
                Expect::Equals(t) => {
                    let t = substitute(t, &self.args);
                    (actual == t, format!("be `{t}`"))
                }
                Expect::EndsWith(t) => {
                    let t = substitute(t, &self.args);
                    (actual.ends_with(&t), format!("end with `{t}`"))
                }
            };
            if !ok {
                return Err(Error::NotFound(format!(
                    "the forge's answer does not belong to this URI: `{}` is `{actual}`, which should {wanted}",
                    check.source
                )));
            }
        }
        Ok(())
    }

    /// This read's URI with some variables replaced and `clear` left out.
    fn uri_with(&self, replace: &[(&str, String)], clear: &[Option<&str>]) -> String {
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

    fn list_envelope(
        &self,
        window: Window<&Value>,
        page: PageRequest,
        item: &Projection,
        tool: &str,
    ) -> Value {
        let budget = self.catalog.max_answer_bytes;
        let items: Vec<Value> = window
            .items
            .iter()
            .map(|i| item.apply(&Context::item(i, &self.args).at(self.catalog.instance())))
            .collect();
        let fitted = Fitted::new(window, items, page, budget.saturating_sub(ENVELOPE_ROOM));
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

/// A markdown block cut to `room` bytes at a line or character boundary, saying so. The JSON
/// block holds the same fields, so the markdown gives way first.
fn markdown_within(mut text: String, room: usize) -> String {
    if text.len() <= room {
        return text;
    }
    let marker = format!(
        "\n\n[truncated: the markdown is cut to stay under the answer's byte budget; {} of {} bytes shown. The JSON block holds the same fields.]",
        room.saturating_sub(MARKER_ROOM),
        text.len()
    );
    let mut at = room.saturating_sub(MARKER_ROOM);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if let Some(line) = text[..at].rfind('\n') {
        at = line;
    }
    text.truncate(at);
    text.push_str(&marker);
    text
}

/// Room a cut markdown block keeps for its marker.
const MARKER_ROOM: usize = 200;

/// The pages (of size `cap`) that hold the newest `cap` of `total` rows, except page 1 (the
/// probe already has it).
fn tail_pages(total: u64, cap: u64) -> Vec<u64> {
    let first_row = total - cap + 1;
    let first = (first_row - 1) / cap + 1;
    let last = total.div_ceil(cap);
    (first.max(2)..=last).collect()
}

/// The array a list lives in: the body, or the value at `from`; anything else is empty.
fn items_of<'a>(body: &'a Value, from: Option<&JsonPath>) -> Vec<&'a Value> {
    let found = match from {
        Some(path) => path.query(body).first(),
        None => Some(body),
    };
    match found {
        Some(Value::Array(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

/// A non-negative integer found at `path`.
fn count_at(body: &Value, path: &JsonPath) -> Option<u64> {
    path.query(body).first().and_then(Value::as_u64)
}

/// Deletes every node `path` selects.
pub(crate) fn remove_matches(body: &mut Value, path: &JsonPath) {
    use serde_json_path::PathElement;
    enum Step {
        Name(String),
        Index(usize),
    }
    let locations: Vec<Vec<Step>> = path
        .query_located(body)
        .locations()
        .map(|l| {
            l.iter()
                .map(|e| match e {
                    PathElement::Name(n) => Step::Name((*n).to_owned()),
                    PathElement::Index(i) => Step::Index(*i),
                })
                .collect()
        })
        .collect();
    // Later array elements first, so earlier indices stay valid.
    for location in locations.into_iter().rev() {
        let Some((last, parents)) = location.split_last() else {
            continue;
        };
        let mut node = Some(&mut *body);
        for step in parents {
            node = match (step, node) {
                (Step::Name(n), Some(Value::Object(m))) => m.get_mut(n.as_str()),
                (Step::Index(i), Some(Value::Array(a))) => a.get_mut(*i),
                _ => None,
            };
        }
        match (last, node) {
            (Step::Name(n), Some(Value::Object(m))) => {
                m.remove(n.as_str());
            }
            (Step::Index(i), Some(Value::Array(a))) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        }
    }
}

/// Adds one embedded list (and its sentinel when capped) to the entity.
fn embed_into(
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tail_pages_cover_the_newest_rows() {
        // 35 rows in pages of 30: rows 6–35 live on pages 1 and 2; page 1 is the probe.
        assert_eq!(tail_pages(35, 30), vec![2]);
        // 100 rows: rows 71–100 live on pages 3 and 4.
        assert_eq!(tail_pages(100, 30), vec![3, 4]);
        // 60 rows: rows 31–60 are exactly page 2.
        assert_eq!(tail_pages(60, 30), vec![2]);
    }

    #[test]
    fn a_server_window_counts_the_whole_list_where_the_answer_states_it() {
        let embed = Embed {
            field: "revisions".into(),
            source: EmbedSource::Primary,
            from: None,
            total: None,
            cap: 10,
            keep: Keep::Oldest,
            window: WindowKind::Server,
            tool: "get_wiki_revisions".into(),
            tool_max_limit: 50,
            item: Projection::identity(),
        };
        let rows = |n: u64| (1..=n).map(|i| json!(i)).collect::<Vec<_>>();
        let embedded = |items: Vec<Value>, total| {
            let mut value = json!({});
            embed_into(
                &mut value,
                &embed,
                "get_wiki_revisions tool".into(),
                items.iter().collect(),
                total,
                None,
                &Context::of(&Value::Null),
            );
            value
        };
        // 50 rows held of 60 counted.
        let v = embedded(rows(50), Some(60));
        assert_eq!(v["revisions"], json!(rows(10)));
        assert_eq!(
            v["revisions_truncated"],
            "[truncated: 10 of 60 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]"
        );
        // Fewer rows than the cap, but more counted: still truncated.
        let v = embedded(rows(4), Some(60));
        assert_eq!(
            v["revisions_truncated"],
            "[truncated: 4 of 60 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]"
        );
        // Without a count, or with one no larger than what is held, the answer is the list.
        for total in [None, Some(12), Some(3)] {
            let v = embedded(rows(12), total);
            assert_eq!(
                v["revisions_truncated"],
                "[truncated: 10 of 12 items shown. Use get_wiki_revisions tool with page=2 and limit=10 to fetch more.]",
                "{total:?}"
            );
        }
        assert!(
            embedded(rows(7), Some(7))
                .get("revisions_truncated")
                .is_none()
        );
    }

    #[test]
    fn secrets_are_removed_wherever_they_match() {
        let mut body = json!([
            {"id": 1, "config": {"url": "u", "secret": "s1"}},
            {"id": 2, "config": {"secret": "s2", "authorization_header": "Bearer x"}}
        ]);
        remove_matches(&mut body, &JsonPath::parse("$[*].config.secret").unwrap());
        remove_matches(
            &mut body,
            &JsonPath::parse("$[*].config.authorization_header").unwrap(),
        );
        assert_eq!(
            body,
            json!([{"id": 1, "config": {"url": "u"}}, {"id": 2, "config": {}}])
        );
    }
}
