//! What a tool list costs a model's context: cl100k tokens of each tool as clients hand it to
//! the model (its `name`, `description` and `inputSchema`, as JSON). Used by the budget tests
//! and by `benches/tokens.rs`, so that both count alike.

use std::sync::LazyLock;

use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;

static CL100K: LazyLock<CoreBPE> =
    LazyLock::new(|| tiktoken_rs::cl100k_base().expect("the cl100k tables load"));

/// cl100k tokens of `text`.
pub fn tokens(text: &str) -> usize {
    CL100K.encode_ordinary(text).len()
}

/// The tokens of one tool of a `tools/list` answer (as JSON).
pub fn tool_tokens(tool: &Value) -> usize {
    let seen = json!({
        "name": tool["name"],
        "description": tool["description"],
        "inputSchema": tool["inputSchema"],
    });
    tokens(&seen.to_string())
}
