//! forgelens: an MCP server that serves a Forgejo or Gitea instance to AI agents.
//!
//! The whole MCP surface is data: `resources.yaml` and `tools.yaml` declare every resource and
//! tool, and one generic engine serves them. The modules follow the data flow:
//!
//! - [`manifest`] — the two manifests as written: sources, raw serde types, diagnostics.
//! - [`engine`] — the manifests compiled into a catalog: router, URI templates, parameter
//!   rules, request templates, projections, bounding, markdown; pure, no I/O.
//! - [`forge`] — the HTTP client to the forge: auth, retries, timeouts, the body cap.
//! - [`service`] — a catalog joined to a forge client: one read or call, end to end; with
//!   [`cache`] and [`lockdown`] around it.
//! - [`surface`] — which tools `tools/list` shows, and the meta-tools that reach the rest.
//! - [`mcp`] — the rmcp adapter and its transports.
//! - [`oauth`] — the OAuth 2.1 sign-in of `--http --oauth`: forgelens as its clients'
//!   authorization server in front of the forge.
//! - [`store`] — what outlives a request: the sign-ins' file, or the Redis store replicas
//!   share for sign-ins, the read cache and the forge's request budget.
//! - [`catalog`] — a forge's swagger turned into generated tools, in the `tools.yaml` form.
//! - [`settings`], [`config`], [`cli`], [`lint`] — the command line around them: every setting
//!   declared once, resolved against the environment, parsed from the arguments.

pub mod cache;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod engine;
pub mod forge;
pub mod lint;
pub mod lockdown;
pub mod manifest;
pub mod mcp;
pub mod oauth;
pub mod service;
pub mod settings;
pub mod store;
pub mod surface;

pub use cli::run;
