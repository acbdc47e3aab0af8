//! Integration tests: one binary, one module per theme. Every test runs the real `forgelens`
//! binary against the fake forge of `support` on 127.0.0.1; none touches the network.

// Helpers serve the themes below; not every theme uses every helper.
#[allow(dead_code)]
mod support;

mod catalog;
mod catalog_serve;
mod cli;
mod commits;
mod docs;
mod guards;
mod labels;
mod paging;
mod request_bodies;
mod server;
