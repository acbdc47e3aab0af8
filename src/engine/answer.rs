//! What a forge answer must look like before it is projected. A projection reads fields of an
//! object and a list reads an array; an answer of another shape (an empty body, `null`, a
//! string, an object where a list belongs) would otherwise come out as a result of empty or
//! null fields that looks like data. It is an "unexpected response" error instead, naming
//! what was expected and what came.

use serde_json::Value;

use super::error::Error;
use crate::forge::ForgeError;

/// The shape an answer is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    /// An entity whose fields are projected.
    Object,
    /// A list (at the body, or at the path the manifest names).
    List,
}

impl Expected {
    fn holds(self, value: Option<&Value>) -> bool {
        match self {
            Expected::Object => value.is_some_and(Value::is_object),
            Expected::List => value.is_some_and(Value::is_array),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expected::Object => "an object",
            Expected::List => "a list",
        }
    }
}

/// `Ok` when `found` (the body, or what the manifest's path selects in it) has the expected
/// shape; else the error for `request`, answered with `status`. `hint` ends the message (what
/// else might fit), or is empty.
pub(crate) fn expect(
    expected: Expected,
    found: Option<&Value>,
    request: &str,
    status: u16,
    hint: &str,
) -> Result<(), Error> {
    if expected.holds(found) {
        return Ok(());
    }
    let got = match found {
        None => "nothing at the expected place",
        Some(Value::Null) => "nothing (an empty body or null)",
        Some(other) => super::schema::type_name(other),
    };
    Err(Error::Forge(ForgeError::Unreadable {
        request: request.to_owned(),
        status,
        detail: format!("expected {}, got {got}{hint}", expected.name()),
    }))
}
