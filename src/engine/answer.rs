//! What a forge answer must look like before it is projected. A projection reads fields of an
//! object and a list reads an array; an answer of another shape (an empty body, `null`, a
//! string, an object where a list belongs) would otherwise come out as a result of empty or
//! null fields that looks like data. It is an "unexpected response" error instead, naming
//! what was expected and what came.

use serde_json::Value;
use serde_json_path::JsonPath;

use super::error::{Error, Invalid};
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

/// The items of a list answer: the array at `from` (the body itself when there is none), none
/// when an object's `from` is null. An answer without it is an unexpected response for `request`, answered with `status` (`hint`
/// ends the message), or the caller's mistake when the endpoint says why (`not_a_list`: a
/// file where a directory was asked for), since "no items" would hide either.
pub(crate) fn list_items<'a>(
    body: &'a Value,
    from: Option<&JsonPath>,
    not_a_list: Option<&str>,
    request: &str,
    status: u16,
    hint: &str,
) -> Result<&'a [Value], Error> {
    let found = match from {
        Some(path) => path.query(body).first(),
        None => Some(body),
    };
    match (found, not_a_list) {
        (Some(Value::Array(items)), _) => Ok(items),
        // An object whose list is null is the forge's empty list (Go writes a nil slice so: a
        // combined status with nothing reported has `"statuses": null`).
        (Some(Value::Null), _) if from.is_some() && body.is_object() => Ok(&[]),
        (_, Some(why)) => Err(Invalid::WrongTarget(why.to_owned()).into()),
        (found, None) => Err(unexpected(Expected::List, found, request, status, hint)),
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
    match expected.holds(found) {
        true => Ok(()),
        false => Err(unexpected(expected, found, request, status, hint)),
    }
}

/// The error for an answer to `request` that holds `found` where `expected` belongs.
fn unexpected(
    expected: Expected,
    found: Option<&Value>,
    request: &str,
    status: u16,
    hint: &str,
) -> Error {
    let got = match found {
        None => "nothing at the expected place",
        Some(Value::Null) => "nothing (an empty body or null)",
        Some(other) => super::schema::type_name(other),
    };
    Error::Forge(ForgeError::Unreadable {
        request: request.to_owned(),
        status,
        detail: format!("expected {}, got {got}{hint}", expected.name()),
    })
}
