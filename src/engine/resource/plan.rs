//! Planning a read's upstream requests: the first ones, and those its answers call for.

use super::{Answer, EmbedSource, Planned, Read, Shape, Slot};
use crate::engine::bound::PageRequest;
use crate::engine::error::{Error, Invalid};
use crate::engine::request::RequestTemplate;
use crate::forge::{Accept, Request};
use crate::manifest::raw::{Keep, Window as WindowKind};

impl Read<'_> {
    fn expand(&self, template: &RequestTemplate) -> Result<Request, Error> {
        template
            .expand(&self.args)
            .map_err(|e| Invalid::Request(e).into())
    }

    fn primary_request(&self, alternative: usize) -> Result<Request, Error> {
        let template = match alternative {
            0 => &self.resource.endpoint.request,
            n => &self.resource.fallbacks[n - 1].0,
        };
        let mut request = self.expand(template)?;
        // A fallback answers for the primary request: the same fields are read of it.
        request.reads = self.resource.reads().primary.clone();
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
            let mut request = self.expand(with)?;
            request.reads = self.resource.reads().with[i].clone();
            planned.push(Planned {
                slot: Slot::With(i),
                request,
            });
        }
        for (i, embed) in self.embeds().iter().enumerate() {
            if let EmbedSource::Fetch(t) = &embed.source {
                let mut request = self.expand(t)?;
                request.reads = self.resource.reads().fetched[i].clone();
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
                    request.reads = self.resource.reads().fetched[i].clone();
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
}

/// The pages (of size `cap`) that hold the newest `cap` of `total` rows, except page 1 (the
/// probe already has it).
pub(super) fn tail_pages(total: u64, cap: u64) -> Vec<u64> {
    let first_row = total - cap + 1;
    let first = (first_row - 1) / cap + 1;
    let last = total.div_ceil(cap);
    (first.max(2)..=last).collect()
}
