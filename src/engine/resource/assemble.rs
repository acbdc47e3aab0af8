//! Assembling a read's content blocks from its answers, in three steps: project the answers
//! into the JSON value, bound it to the answer's budget, render the blocks.

use serde_json::{Map, Value};

use super::embed::embed_into;
use super::{
    Answer, Block, Cache, EmbedSource, Expect, Read, ReadOutput, Shape, Slot, count_at, items_of,
    remove_matches,
};
use crate::engine::answer::{self, Expected};
use crate::engine::bound::{self, Window};
use crate::engine::error::{Error, Invalid};
use crate::engine::project::{Context, Meta, Projection};
use crate::engine::request::{substitute, text_of};
use crate::engine::text::Cut;
use crate::engine::tool::{ENVELOPE_ROOM, within};
use crate::engine::untrusted::{self, Envelope, Mark};
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

impl Read<'_> {
    /// Builds the content blocks from every answer.
    pub fn assemble(&self, answers: Vec<Answer>) -> Result<ReadOutput, Error> {
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
        let body = self.redact(body.into_json());
        let (request, answered) = match alternative {
            0 => (&self.resource.fetch, self.resource.answered_as.as_deref()),
            n => {
                let (request, answered) = &self.resource.fallbacks[n - 1];
                (request, Some(answered.as_str()))
            }
        };
        self.expect_shape(&body, request.as_str(), status)?;
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
        let value = self.project(&ctx, has_next, embeds)?;
        let bounded = self.bound(value, &ctx)?;
        self.render(bounded, &ctx)
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
                Slot::With(i) => with[i] = self.redact(response.body.into_json()),
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
    ) -> Result<Value, Error> {
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
                self.list_envelope(window, page, item, tool)
            }
            Shape::List { item, .. } => item.apply(ctx),
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
                value
            }
        })
    }

    /// Step 2, bound: the text block cut to a range of lines that fits beside the JSON, then
    /// the JSON fitted to the room left.
    fn bound(&self, mut value: Value, ctx: &Context) -> Result<Bounded, Error> {
        let budget = self.catalog.max_answer_bytes;
        let mut text_block = None;
        if let Some(text) = &self.resource.text
            && !matches!(&self.resource.shape, Shape::List { only_arrays: true, .. } if ctx.primary.is_array())
        {
            let room = budget.saturating_sub(ENVELOPE_ROOM + bound::json_size(&value));
            let cut = text.cut(text.text_of(ctx).as_deref(), &self.args, room)?;
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
    fn render(&self, bounded: Bounded, ctx: &Context) -> Result<ReadOutput, Error> {
        let budget = self.catalog.max_answer_bytes;
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
                && let Value::Object(more) = extra.apply(ctx)
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
                .map_err(|why| Invalid::Markdown {
                    resource: self.resource.name.clone(),
                    why,
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
