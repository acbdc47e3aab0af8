//! Integration tests: one binary, one module per theme, against the fake forge of `support` on
//! 127.0.0.1; none touches the network. Most drive forgelens's MCP handlers in this process over
//! an in-memory pipe (`Launch::start`); those about the process itself — its transports, signals,
//! start-up, command line and log — run the real binary (`Launch::spawn`, `start_http`, `run`,
//! `Raw`).

// Helpers serve the themes below; not every theme uses every helper.
#[allow(dead_code)]
mod support;

mod allow_list;
mod answers;
mod cache;
mod catalog;
mod catalog_discovery;
mod catalog_entities;
mod catalog_lists;
mod catalog_serve;
mod cli;
mod commits;
mod continuations;
mod docs;
mod faults;
mod golden;
mod guards;
mod hardening;
mod http;
mod http_slots;
mod injection;
mod labels;
mod lifecycle;
mod link_order;
mod lint;
mod load_fault;
mod lockdown;
mod oauth;
mod paging;
mod policy;
mod protocol;
mod read_only;
mod render_check;
mod replica_load;
mod replicas;
mod request_bodies;
mod revision_2026;
mod secrets;
mod server;
mod soak;
mod tool_budget;
mod tool_guards;
mod tool_search;
mod tool_surface;
mod tools_read;
mod tools_text;
mod tools_write;
