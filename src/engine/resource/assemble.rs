//! Assembling a read's content blocks from its answers, in three steps: project the answers
//! into the JSON value ([`Read::project_answers`]), bound it to the answer's budget, render the
//! blocks ([`Read::finish`]). Between the first and the others the policy runs on the
//! projected value (`engine::policy`): the service withholds there what lockdown does not keep,
//! so the budget counts what is shown.

use serde_json::{Map, Value};

use super::embed::embed_into;
use super::{
    Answer, Block, Cache, EmbedSource, Expect, Read, ReadOutput, Shape, Slot, count_at, items_of,
};
use crate::engine::answer::{self, Expected};
use crate::engine::bound::{self, PageRequest, Window};
use crate::engine::endpoint::{Serving, room, within};
use crate::engine::error::{Error, Invalid};
use crate::engine::policy::{self, marks, marks::Mark};
use crate::engine::project::{Context, Meta};
use crate::engine::request::{substitute, text_of};
use crate::engine::text::Cut;
use crate::engine::untrusted::{Rendering, enveloped};
use crate::forge::Response;
use crate::manifest::raw::Window as WindowKind;

/// Every answer of a read, sorted by what it is for.
struct Answered {
    /// Which request answered: the primary one (0) or a fallback (1…).
    alternative: usize,
    primary: Response,
    with: Vec<Value>,
    embeds: Vec<EmbedAnswers>,
}

/// The answers of an embed's own requests: its first page, and the tail pages of a newest-first
/// list.
#[derive(Default)]
struct EmbedAnswers {
    first: Option<Response>,
    pages: Vec<(u64, Response)>,
}

/// The JSON value bounded to the answer's budget, with the text block cut beside it.
struct Bounded {
    value: Value,
    json: String,
    text: Option<String>,
}

/// What a list page's bound needs besides its items: the window's count and whether more
/// remain, and the page asked for.
type ListPage = (Window<()>, PageRequest);

/// A read's answers projected: the JSON value, before lockdown and the bound.
pub struct Projected {
    /// The answer's value; for a list, `{"items": [...]}` until the bound fits the page.
    pub value: Value,
    /// The primary answer (its secrets removed), which the text and the markdown still read.
    body: Value,
    with: Vec<Value>,
    total_count: Option<u64>,
    answered: Option<String>,
    /// A list page's window (its items are in `value`).
    page: Option<ListPage>,
    /// The notice shown instead of the text block, when lockdown withheld the text.
    pub withheld_text: Option<String>,
    /// The notice shown instead of the markdown block, when lockdown withheld top-level text.
    pub withheld_markdown: Option<String>,
}

impl Read<'_> {
    /// Builds the content blocks from every answer, with nothing withheld.
    pub fn assemble(&self, answers: Vec<Answer>, serving: &Serving) -> Result<ReadOutput, Error> {
        let projected = self.project_answers(answers, serving)?;
        self.finish(projected, serving)
    }

    /// Step 1: the answers checked and projected into the read's JSON value.
    pub fn project_answers(
        &self,
        answers: Vec<Answer>,
        serving: &Serving,
    ) -> Result<Projected, Error> {
        let Answered {
            alternative,
            primary,
            with,
            embeds,
        } = self.sort(answers)?;
        let Response {
            status,
            total_count,
            has_next,
            body,
            ..
        } = primary;
        let mut body = body.into_json();
        self.resource.endpoint.redact(&mut body);
        let (request, answered) = match alternative {
            0 => (
                &self.resource.endpoint.request,
                self.resource.answered_as.as_deref(),
            ),
            n => {
                let (request, answered) = &self.resource.fallbacks[n - 1];
                (request, Some(answered.as_str()))
            }
        };
        self.expect_shape(&body, request.as_str(), status)?;
        let (mut value, page) = {
            let ctx = self.context(&body, &with, total_count, answered, &serving.instance);
            self.run_checks(&ctx)?;
            self.project(&ctx, has_next, embeds)?
        };
        policy::clean(&mut value, Rendering::Plain, &serving.instance);
        Ok(Projected {
            value,
            body,
            with,
            total_count,
            answered: answered.map(str::to_owned),
            page,
            withheld_text: None,
            withheld_markdown: None,
        })
    }

    /// Steps 2 and 3: the projected value (after lockdown) bounded and rendered.
    pub fn finish(&self, projected: Projected, serving: &Serving) -> Result<ReadOutput, Error> {
        let Projected {
            value,
            body,
            with,
            total_count,
            answered,
            page,
            withheld_text,
            withheld_markdown,
        } = projected;
        let ctx = self.context(
            &body,
            &with,
            total_count,
            answered.as_deref(),
            &serving.instance,
        );
        let value = match (page, value) {
            (Some((window, page)), Value::Object(mut map)) => {
                let items = match map.remove("items") {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                let tool = self.list_tool().unwrap_or_default().to_owned();
                self.list_envelope(window, items, page, &tool, serving.budget)
            }
            (_, value) => value,
        };
        let bounded = self.bound(value, &ctx, withheld_text, serving.budget)?;
        self.render(bounded, &ctx, withheld_markdown, serving.budget)
    }

    /// What the projections and the markdown read of the answers.
    fn context<'a>(
        &'a self,
        body: &'a Value,
        with: &'a [Value],
        total_count: Option<u64>,
        answered: Option<&'a str>,
        instance: &'a str,
    ) -> Context<'a> {
        Context {
            primary: body,
            with,
            args: &self.args,
            meta: Meta {
                total_count,
                answered,
            },
            instance,
        }
    }

    /// The fields of the answer marked `| untrusted`, each with where it sits (`""` at the
    /// top, `items[].` in a list, `recent_comments[].` in an embed).
    pub fn marks(&self) -> &[(String, Mark)] {
        &self.resource.endpoint.marked.fields
    }

    /// The mark of the read's text block, when it has one.
    pub fn text_mark(&self) -> Option<&marks::TextMark> {
        self.resource
            .text
            .as_ref()
            .and_then(|t| t.untrusted.as_ref())
    }

    /// Sorts the answers by slot; a failed one was the read's error already (`follow_up`).
    fn sort(&self, answers: Vec<Answer>) -> Result<Answered, Error> {
        let mut primary = None;
        let mut with = vec![Value::Null; self.resource.with.len()];
        let mut embeds: Vec<EmbedAnswers> = std::iter::repeat_with(EmbedAnswers::default)
            .take(self.embeds().len())
            .collect();
        for answer in answers {
            let Ok(response) = answer.result else {
                continue;
            };
            match answer.slot {
                Slot::Primary(n) => primary = Some((n, response)),
                Slot::With(i) => {
                    let mut body = response.body.into_json();
                    self.resource.endpoint.redact(&mut body);
                    with[i] = body;
                }
                Slot::Embed(i) => embeds[i].first = Some(response),
                Slot::EmbedPage(i, page) => embeds[i].pages.push((page, response)),
            }
        }
        let (alternative, primary) = primary.ok_or(Error::Unanswered("its primary request"))?;
        Ok(Answered {
            alternative,
            primary,
            with,
            embeds,
        })
    }

    /// Step 1, project: the JSON value of the answers — a list's page, or the entity with its
    /// embedded lists.
    fn project(
        &self,
        ctx: &Context,
        has_next: Option<bool>,
        mut embeds: Vec<EmbedAnswers>,
    ) -> Result<(Value, Option<ListPage>), Error> {
        let body = ctx.primary;
        Ok(match &self.resource.shape {
            Shape::List {
                from,
                item,
                tool,
                window,
                only_arrays,
                ..
            } if !*only_arrays || body.is_array() => {
                let page = self.page.expect("route gives every list read its page");
                let items = items_of(body, from.as_ref());
                let window: Window<&Value> = match window {
                    WindowKind::Upstream => {
                        bound::upstream_page(items, page, ctx.meta.total_count, has_next)
                    }
                    WindowKind::Server => bound::server_page(items, page),
                };
                let projected: Vec<Value> = window
                    .items
                    .iter()
                    .map(|i| item.apply(&Context::item(i, &self.args).at(ctx.instance)))
                    .collect();
                let rest = Window {
                    items: Vec::new(),
                    total: window.total,
                    has_more: window.has_more,
                };
                // Built as the value it is: `json!` would serialise the items into a copy.
                let value = Map::from_iter([("items".to_owned(), Value::Array(projected))]);
                (Value::Object(value), Some((rest, page)))
            }
            Shape::List { item, .. } => (item.apply(ctx), None),
            Shape::Entity {
                project,
                embeds: declared,
            } => {
                let mut value = project.apply(ctx);
                for (i, embed) in declared.iter().enumerate() {
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
                            items_of(body, embed.from.as_ref()),
                            counted(body, ctx.meta.total_count),
                            has_next,
                        ),
                        EmbedSource::With(w) => (
                            items_of(&ctx.with[*w], embed.from.as_ref()),
                            counted(&ctx.with[*w], None),
                            None,
                        ),
                        EmbedSource::Fetch(_) => {
                            let answers = std::mem::take(&mut embeds[i]);
                            let first = answers
                                .first
                                .ok_or(Error::Unanswered("an embedded list's request"))?;
                            let mut pages = answers.pages;
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
                    embed_into(&mut value, embed, mention, items, total, has_next, ctx);
                }
                (value, None)
            }
        })
    }

    /// Step 2, bound: the text block cut to a range of lines that fits beside the JSON, then
    /// the JSON fitted to the room left.
    fn bound(
        &self,
        mut value: Value,
        ctx: &Context,
        withheld_text: Option<String>,
        budget: usize,
    ) -> Result<Bounded, Error> {
        let mut text_block = None;
        if let Some(text) = &self.resource.text
            && !matches!(&self.resource.shape, Shape::List { only_arrays: true, .. } if ctx.primary.is_array())
        {
            let room = room(budget, bound::json_size(&value));
            // Withheld: the notice stands for the text, a diff's file names included.
            let how = |line: u64, byte: Option<u64>| {
                let mut replace =
                    vec![(text.start_line.as_deref().unwrap_or(""), line.to_string())];
                let mut clear = vec![text.end_line.as_deref()];
                match (text.start_byte.as_deref(), byte) {
                    (Some(var), Some(b)) => replace.push((var, b.to_string())),
                    (var, None) => clear.push(var),
                    (None, Some(_)) => {}
                }
                format!("Read {}", self.uri_with(&replace, &clear))
            };
            let (cut, described) = match withheld_text {
                Some(notice) => {
                    let cut = Cut::Lines(crate::engine::text::Window::whole(notice));
                    let described = text.describe(&cut, how);
                    (cut, described)
                }
                // The block carries the text as it is: what fits the room fits the answer.
                None => text.fit(
                    text.text_of(ctx).as_deref(),
                    &self.args,
                    room,
                    how,
                    |_, _| 0,
                )?,
            };
            if let Value::Object(map) = &mut value {
                map.extend(described);
            }
            if let Cut::Lines(w) = cut {
                text_block = Some(match text.untrusted {
                    Some(_) => {
                        enveloped(&w.text, &self.resource.name, None, &self.uri_with(&[], &[]))
                    }
                    None => w.text,
                });
            }
        }
        // The text block is cut to fit already; the JSON gets what room is left beside it.
        let room = budget.saturating_sub(text_block.as_ref().map_or(0, String::len));
        let mut json = serde_json::to_string(&value).expect("a JSON value always serializes");
        if json.len() > room {
            json = serde_json::to_string(&within(value.clone(), room))
                .expect("a JSON value always serializes");
        }
        Ok(Bounded {
            value,
            json,
            text: text_block,
        })
    }

    /// Step 3, render: the blocks (JSON, text, markdown), what they say about untrusted text,
    /// and how long they may be reused.
    fn render(
        &self,
        bounded: Bounded,
        ctx: &Context,
        withheld_markdown: Option<String>,
        budget: usize,
    ) -> Result<ReadOutput, Error> {
        let Bounded { value, json, text } = bounded;
        let ttl_ms = match self.resource.cache {
            Cache::Mutable => None,
            Cache::Immutable { ttl_ms } => Some(match &self.resource.provisional {
                Some(p) if p.holds(&value) => p.ttl_ms,
                _ => ttl_ms,
            }),
        };
        let mut blocks = vec![Block {
            mime: "application/json",
            text: json,
        }];
        if let Some(text) = text {
            blocks.push(Block {
                mime: "text/plain",
                text,
            });
        }
        let meta = self.resource.endpoint.marked.meta.clone();
        if let (Some(_), Some(notice)) = (&self.resource.markdown, withheld_markdown) {
            blocks.push(Block {
                mime: "text/markdown",
                text: notice,
            });
        } else if let Some(markdown) = &self.resource.markdown {
            // The block is the user's text when it shows any: who wrote it is read before the
            // fields are handed over.
            let shown = &markdown.shown;
            // Who wrote it: the author field a shown mark names, in the JSON's top level.
            let author = shown
                .iter()
                .filter_map(|m| m.author_field())
                .find_map(|a| value.get(&a).and_then(Value::as_str))
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
                && let Value::Object(more) = extra.apply(ctx)
            {
                let mut more = Value::Object(more);
                policy::clean(&mut more, Rendering::Plain, ctx.instance);
                if let Value::Object(more) = more {
                    context.extend(more);
                }
            }
            let text = self
                .catalog
                .renderer
                .render(
                    &self.resource.name,
                    &Value::Object(context),
                    markdown.max_chars,
                )
                .map_err(|why| Invalid::Markdown {
                    resource: self.resource.name.clone(),
                    why,
                })?;
            let used: usize = blocks.iter().map(|b| b.text.len()).sum();
            let text = markdown_within(text, budget.saturating_sub(used));
            blocks.push(Block {
                mime: "text/markdown",
                text: match shown {
                    true => enveloped(
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

    /// Refuses a primary answer of a shape the resource cannot read: a list needs its array,
    /// an entity an object (a resource that reads the body as its text takes a string too).
    fn expect_shape(&self, body: &Value, request: &str, status: u16) -> Result<(), Error> {
        match &self.resource.shape {
            Shape::List {
                only_arrays: true, ..
            } if !body.is_array() => {
                answer::expect(Expected::Object, Some(body), request, status, "")
            }
            Shape::List {
                from, not_a_list, ..
            } => answer::list_items(
                body,
                from.as_ref(),
                not_a_list.as_deref(),
                request,
                status,
                "",
            )
            .map(drop),
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
