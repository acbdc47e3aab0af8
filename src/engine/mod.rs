//! The engine: both manifests compiled into one [`Catalog`] at start-up, and the pure steps of a
//! read or a call.
//!
//! A read is route (`uri::parse`, the router, the parameter rules: every refusal so far is
//! `-32602`, before any network) → plan (the upstream requests; the caller sends them) →
//! assemble (project → bound → render), each a file of [`resource`]. A call is the same after
//! its arguments are checked against the tool's schema ([`tool`]). `docs/code-tour.md` follows
//! both through the files.
//! Nothing here does I/O or knows a transport; nothing here names a resource or a tool.

mod answer;
pub mod bound;
mod compile;
pub mod complete;
pub mod endpoint;
pub mod error;
pub mod listing;
pub mod param;
pub mod policy;
pub mod project;
mod reads;
pub mod render;
pub mod request;
pub mod resource;
pub mod schema;
pub mod search;
pub mod template;
pub mod text;
pub mod tool;
pub mod untrusted;
pub mod uri;

use std::collections::HashMap;

pub use compile::{MAX_TOOL_NAME, compile};
pub use error::{Error, ErrorTable, Invalid, Reason};
use indexmap::IndexMap;
pub use resource::{Answer, Block, Cache, Planned, Read, ReadOutput, Resource, Slot};
pub use tool::{Annotations, Call, Tool};

use self::render::Renderer;

/// Everything the manifests declare, compiled.
#[derive(Debug)]
pub struct Catalog {
    pub(crate) resources: Vec<Resource>,
    pub(crate) router: matchit::Router<usize>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) tool_index: HashMap<String, usize>,
    pub errors: ErrorTable,
    pub(crate) renderer: Renderer,
    /// Toolset name → description.
    pub toolsets: IndexMap<String, String>,
    pub(crate) listings: Vec<listing::Listing>,
    pub(crate) completions: HashMap<String, complete::Completion>,
    /// The tools `--tool-surface core` lists, in the manifest's order.
    pub core: Vec<String>,
    /// The words `search_tools` reads queries with.
    pub search: search::Words,
}

impl Catalog {
    /// Every resource, in manifest order.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// Every tool still offered, in manifest order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The sources of `resources/list` beyond the variable-free resources.
    pub fn listings(&self) -> &[listing::Listing] {
        &self.listings
    }

    /// Whether completion is offered at all.
    pub fn completes(&self) -> bool {
        !self.completions.is_empty()
            || self
                .resources
                .iter()
                .any(|r| r.params.iter().any(|p| p.rule.values().is_some()))
    }

    /// The resource whose URI template is `template`.
    pub fn resource(&self, template: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.template.as_str() == template)
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// Adds the tools and toolsets of `other` (a generated catalog) after this catalog's own;
    /// where both have a tool of the same name, this catalog's stays. Returns the names left out.
    pub fn absorb(&mut self, other: Catalog) -> Vec<String> {
        let mut skipped = Vec::new();
        for mut tool in other.tools {
            if self.tool_index.contains_key(&tool.name) {
                skipped.push(tool.name);
                continue;
            }
            tool.mark_generated();
            self.tool_index.insert(tool.name.clone(), self.tools.len());
            self.tools.push(tool);
        }
        for (name, description) in other.toolsets {
            self.toolsets.entry(name).or_insert(description);
        }
        self.search = std::mem::take(&mut self.search).or(other.search);
        skipped
    }

    /// Marks the tools `tools/list` does not show, with the meta-tool that runs each: the
    /// continuations that name them then say so.
    pub fn route_through(&mut self, via: impl Fn(&Tool) -> Option<&'static str>) {
        for tool in &mut self.tools {
            tool.via = via(tool);
        }
    }

    /// How an answer names a tool to call next: `name tool`, with the meta-tool to call it
    /// through when `tools/list` does not show it.
    pub fn mention(&self, name: &str) -> String {
        bound::mention(name, self.tool(name).and_then(|t| t.via))
    }

    /// Keeps only the tools `keep` accepts (read-only mode, toolsets, disabled tools).
    /// Withholds what reads the endpoints of withheld tools, so that a resource and the tool
    /// it shares an endpoint with are offered or withheld together: a resource whose endpoint
    /// is such a tool is not offered (reading it says why), an embedded list read through one
    /// is left out of its entity, and a `resources/list` source naming a withheld resource is
    /// dropped. `why` gives the reason for a tool's name, `None` for a tool still offered.
    pub fn withhold_endpoints(&mut self, why: impl Fn(&str) -> Option<String>) {
        for resource in &mut self.resources {
            if let Some(tool) = resource.endpoint()
                && let Some(reason) = why(tool)
            {
                resource.withheld = Some(format!("its tool {tool} is not offered: {reason}"));
            }
            if let resource::Shape::Entity { embeds, .. } = &mut resource.shape {
                embeds.retain(|embed| why(&embed.tool).is_none());
            }
            resource.endpoint.marked = resource::marked_of(&resource.shape);
        }
        let withheld: Vec<String> = self
            .resources
            .iter()
            .filter(|r| r.withheld.is_some())
            .map(|r| r.template.as_str().to_owned())
            .collect();
        self.listings
            .retain(|l| !withheld.iter().any(|t| t == l.template.as_str()));
    }

    pub fn retain_tools(&mut self, keep: impl Fn(&Tool) -> bool) {
        self.tools.retain(|t| keep(t));
        self.tool_index = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
    }
}
