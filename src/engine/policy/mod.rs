//! The policy every answer passes before it is bounded, whichever path serves it (a resource, a
//! curated or generated tool, the escape hatch): in this order,
//!
//! 1. **neutralize** — every string made safe to show ([`crate::engine::untrusted`]): marked
//!    text as the forge shows it (markdown or plain), every other string as plain text, and a
//!    credential in any address dropped ([`strip_url_credentials`]);
//! 2. **mark** — what the answer says about its user-written fields ([`marks`]);
//! 3. **lockdown** — what accounts without write access wrote, withheld ([`withhold`]);
//! 4. **allow-list** — items about repositories outside `--allow-repos` left out.
//!
//! Curated answers are described field by field by their manifests; answers passed on unshaped
//! (generated tools, the escape hatch) by the shape of the forge's objects ([`generic`]). Steps
//! 1, 2 and 4 are pure and run here; step 3 needs the forge's verdicts, which the service asks
//! for between projecting an answer and finishing it.

pub mod generic;
pub mod marks;
pub mod withhold;

use std::borrow::Cow;

use serde_json::Value;

use super::untrusted::{Rendering, inert, neutralize};

/// Every string of `value` (and every member name) neutralized as `rendering`, and its
/// addresses without credentials.
pub fn clean(value: &mut Value, rendering: Rendering, instance: &str) {
    match value {
        Value::String(text) => {
            if inert(text) {
                return;
            }
            let cleaned = match neutralize(text, rendering, instance) {
                Cow::Borrowed(_) => None,
                Cow::Owned(changed) => Some(changed),
            };
            if let Some(changed) = cleaned {
                *text = changed;
            }
            if let Cow::Owned(stripped) = strip_url_credentials(text) {
                *text = stripped;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| clean(v, rendering, instance)),
        Value::Object(map) => {
            // Most member names are the manifest's own: the inline check answers for them.
            let renamed = map.keys().any(|k| {
                !inert(k) && !matches!(neutralize(k, Rendering::Plain, instance), Cow::Borrowed(_))
            });
            if renamed {
                let entries = std::mem::take(map);
                for (key, mut member) in entries {
                    clean(&mut member, rendering, instance);
                    map.insert(
                        neutralize(&key, Rendering::Plain, instance).into_owned(),
                        member,
                    );
                }
            } else {
                map.values_mut().for_each(|v| clean(v, rendering, instance));
            }
        }
        _ => {}
    }
}

/// `text` with the credentials of every address in it dropped: any `user:password@`, and for
/// web addresses any `user@` too (a token is often written as the user name).
pub fn strip_url_credentials(text: &str) -> Cow<'_, str> {
    // Every string of every answer comes here: the rare `@` is looked for first, and neither
    // search builds a substring searcher per string as `str::contains` does.
    let bytes = text.as_bytes();
    if memchr::memchr(b'@', bytes).is_none() || memchr::memmem::find(bytes, b"://").is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(found) = rest.find("://") {
        let scheme_start = rest[..found]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |i| i + 1);
        let scheme = rest[scheme_start..found].to_ascii_lowercase();
        let after = &rest[found + 3..];
        let authority_end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        out.push_str(&rest[..found + 3]);
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                let web = matches!(scheme.as_str(), "http" | "https" | "ws" | "wss");
                if web || userinfo.contains(':') {
                    changed = true;
                    out.push_str(&authority[at + 1..]);
                } else {
                    out.push_str(authority);
                }
            }
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    match changed {
        true => Cow::Owned(out),
        false => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credentials_leave_every_address() {
        let cases = [
            (
                "https://user:pass@hooks.example/x",
                "https://hooks.example/x",
            ),
            (
                "see https://tok@hooks.example/x and http://a:b@c.example",
                "see https://hooks.example/x and http://c.example",
            ),
            (
                "ssh://git@forge.example/acme/w.git",
                "ssh://git@forge.example/acme/w.git",
            ),
            ("ftp://u:p@files.example/", "ftp://files.example/"),
            ("mail me at a@b.example", "mail me at a@b.example"),
            (
                "https://forge.example/~user@host",
                "https://forge.example/~user@host",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(strip_url_credentials(text), expected, "{text}");
        }
        assert!(matches!(
            strip_url_credentials("https://forge.example/x"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn every_string_and_name_is_cleaned() {
        let mut value =
            json!({"a\u{200b}b": ["x\u{202e}y", {"url": "https://t@h.example/"}], "n": 1});
        clean(&mut value, Rendering::Plain, "forge.example");
        assert_eq!(
            value,
            json!({"a\\u{200b}b": ["x\\u{202e}y", {"url": "https://h.example/"}], "n": 1})
        );
    }
}
