//! The built-in manifests as `build.rs` pre-parsed them: JSON of the same values, read at
//! start-up in place of the YAML (a tenth of the time; docs/performance.md, "Start-up").
//!
//! JSON keeps no positions, so every `Spanned` value read from it is at an unknown place. A
//! manifest is read this way only when its text is the built-in one, and only to serve it:
//! what reports findings reads the YAML again (see `service::compile`).

use serde::de::DeserializeOwned;

use super::{BUILTIN_RESOURCES, BUILTIN_SEARCH, BUILTIN_TOOLS, FileId};

const RESOURCES: &str = include_str!(concat!(env!("OUT_DIR"), "/resources.json"));
const TOOLS: &str = include_str!(concat!(env!("OUT_DIR"), "/tools.json"));
const SEARCH: &str = include_str!(concat!(env!("OUT_DIR"), "/search.json"));

/// `text` read from its pre-parsed form, when it is the built-in manifest of `file` and that
/// form reads as `T`; `None` sends the caller to the YAML.
pub(super) fn read<T: DeserializeOwned>(file: FileId, text: &str) -> Option<T> {
    let (builtin, packed) = match file {
        FileId::Resources => (BUILTIN_RESOURCES, RESOURCES),
        FileId::Tools => (BUILTIN_TOOLS, TOOLS),
        FileId::Search => (BUILTIN_SEARCH, SEARCH),
    };
    // Empty when build.rs could not parse the file: its YAML then reports why.
    if packed.is_empty() || text != builtin {
        return None;
    }
    serde_json::from_str(packed).ok()
}
