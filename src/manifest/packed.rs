//! The built-in manifests pre-parsed: JSON of the same values, read at start-up in place of
//! the YAML (a tenth of the time; docs/performance.md, "Start-up"). The files under
//! `src/manifest/packed/` start with a line naming the hash of the YAML they were made from.
//! They are written by a test (`the_pre_parsed_manifests_are_current`, run with
//! `FORGELENS_REPACK=1` to rewrite them) rather than by a build script, which would compile a
//! YAML parser a second time in every first build.
//!
//! JSON keeps no positions, so every `Spanned` value read from it is at an unknown place. A
//! manifest is read this way only when its text is the built-in one and the file was made
//! from that text (a stale file is never read: the YAML is), and only to serve it: what reports
//! findings reads the YAML again (see `service::compile`).

use serde::de::DeserializeOwned;

use super::FileId;

const RESOURCES: &str = include_str!("packed/resources.json");
const TOOLS: &str = include_str!("packed/tools.json");
const SEARCH: &str = include_str!("packed/search.json");

/// `text` read from its pre-parsed form, when it is the built-in manifest of `file` and that
/// form was made from it and reads as `T`; `None` sends the caller to the YAML.
pub(super) fn read<T: DeserializeOwned>(file: FileId, text: &str) -> Option<T> {
    let (builtin, packed) = of(file);
    let (made_from, json) = packed.split_once('\n')?;
    if text != builtin || made_from != hash(builtin) {
        return None;
    }
    serde_json::from_str(json).ok()
}

/// The built-in YAML of `file` and its pre-parsed file as it is.
pub(super) fn of(file: FileId) -> (&'static str, &'static str) {
    let packed = match file {
        FileId::Resources => RESOURCES,
        FileId::Tools => TOOLS,
        FileId::Search => SEARCH,
    };
    (super::builtin_text(file), packed)
}

/// What the pre-parsed file of `yaml` holds: the hash line, then the JSON. Written by the test
/// that keeps the files current; the server only reads them.
#[cfg(test)]
pub(super) fn pack(yaml: &str) -> Result<String, serde_saphyr::Error> {
    let value: serde_json::Value = serde_saphyr::from_str(yaml)?;
    Ok(format!("{}\n{value}\n", hash(yaml)))
}

/// FNV-1a, 64 bits, in hexadecimal: enough to tell one version of a file from another.
fn hash(text: &str) -> String {
    let sum = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{sum:016x}")
}
