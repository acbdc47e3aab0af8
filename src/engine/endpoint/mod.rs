//! What every endpoint's answers are held to, whichever face reaches it — a resource read or a
//! tool call: [`Serving`] (the byte budget, the repository allow-list, the forge's host), the
//! room a list page or a text keeps for its envelope and continuation ([`room`]), and the one
//! pass that fits a whole answer to its budget ([`within`]).

use serde_json::Value;

use super::bound;
use crate::forge::allow::AllowList;

/// What the service holds every answer to: set once from the configuration, passed to each
/// read and call alike.
#[derive(Debug, Clone)]
pub struct Serving {
    /// The most bytes one answer may hold.
    pub budget: usize,
    /// The repositories answers may show (`--allow-repos`).
    pub allow: Option<AllowList>,
    /// The forge's host: images it serves stay images in user-written text.
    pub instance: String,
}

/// Room kept in a budget for a page's envelope and its continuation sentence.
const ENVELOPE_ROOM: usize = 512;

/// The bytes left of `budget` for a list page's items or a text, beside `used` bytes already
/// spent, after the room its envelope and continuation sentence keep.
pub(crate) fn room(budget: usize, used: usize) -> usize {
    budget.saturating_sub(ENVELOPE_ROOM + used)
}

/// `value` fitted to `budget` bytes by [`bound::fit`], saying what was cut.
pub(crate) fn within(mut value: Value, budget: usize) -> Value {
    if bound::json_size(&value) <= budget {
        return value;
    }
    let cuts = bound::fit(&mut value, room(budget, 0));
    let note = bound::fit_note(budget, &cuts);
    if let Value::Object(map) = &mut value {
        // Beside an earlier note of ours; under another key when the forge's answer has a
        // `truncated` of its own (a git tree does), which must stay as the forge sent it.
        let key = match map.get("truncated") {
            None | Some(Value::String(_)) => "truncated",
            Some(_) => "_truncated",
        };
        let text = match map.get(key).and_then(Value::as_str) {
            Some(earlier) => format!("{earlier} {note}"),
            None => note,
        };
        map.insert(key.into(), text.into());
    }
    value
}
