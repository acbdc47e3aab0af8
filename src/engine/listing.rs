//! `resources/list` sources: list requests whose items become concrete resource URIs (with a
//! token, the user's repositories as `forgejo://repo/{owner}/{repo}`).

use serde_json::Value;

use super::project::{Context, Field};
use super::request::{Args, RequestTemplate, text_of};
use super::template::UriTemplate;
use crate::forge::allow::AllowList;
use crate::forge::{Request, Response};

/// Items asked for per page of a listing.
pub const LISTING_PAGE: u64 = 50;

/// A compiled listing source.
#[derive(Debug)]
pub struct Listing {
    pub(crate) fetch: RequestTemplate,
    pub needs_token: bool,
    pub(crate) template: UriTemplate,
    pub(crate) args: Vec<(String, Field)>,
    pub(crate) name: Field,
    pub(crate) description: Option<Field>,
    /// The variables of `template` that name the repository an entry is about (its
    /// resource's endpoint's): what the allow-list reads.
    pub(crate) repository: Option<(String, String)>,
}

/// One concrete resource found by a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
}

impl Listing {
    /// The request for page `page`.
    pub fn request(&self, page: u64) -> Request {
        let mut request = self
            .fetch
            .expand(&Args::new())
            .expect("compile refuses listing requests with placeholders");
        super::bound::PageRequest::new(Some(page), Some(LISTING_PAGE), LISTING_PAGE)
            .ask(&mut request, true);
        request
    }

    /// The resources of one answer, and whether another page follows.
    /// The entries of one page; with `allow`, an entry of a repository outside it is left out.
    pub fn entries(
        &self,
        response: Response,
        page: u64,
        allow: Option<&AllowList>,
    ) -> (Vec<Listed>, bool) {
        let items = match response.body.into_json() {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        let no_args = Args::new();
        let listed = items
            .iter()
            .filter_map(|item| {
                let ctx = Context::item(item, &no_args);
                let values: Args = self
                    .args
                    .iter()
                    .map(|(name, field)| (name.clone(), field.eval(&ctx)))
                    .collect();
                // An item missing a variable cannot be addressed; it is left out.
                if self.template.vars().any(|v| text_of(&values, v).is_none()) {
                    return None;
                }
                if let (Some(allow), Some((owner, repo))) = (allow, &self.repository)
                    && let (Some(owner), Some(repo)) =
                        (text_of(&values, owner), text_of(&values, repo))
                    && !allow.allows(&owner, &repo)
                {
                    return None;
                }
                Some(Listed {
                    uri: self.template.expand(|v| text_of(&values, v)),
                    name: as_text(self.name.eval(&ctx))?,
                    description: self
                        .description
                        .as_ref()
                        .and_then(|d| as_text(d.eval(&ctx))),
                })
            })
            .collect();
        let window = super::bound::upstream_page(
            items,
            super::bound::PageRequest::new(Some(page), Some(LISTING_PAGE), LISTING_PAGE),
            response.total_count,
            response.has_next,
        );
        (listed, window.has_more)
    }
}

fn as_text(value: Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s),
        Value::Null => None,
        Value::String(_) => None,
        other => Some(other.to_string()),
    }
}
