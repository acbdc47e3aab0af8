//! Parsing a requested `forgejo://` URI into a routing path and decoded query pairs.
//!
//! matchit neither percent-decodes nor strips queries, so this runs first. It rejects, before
//! any routing or network:
//!
//! - a scheme other than `forgejo`, a fragment, a URI or segment that is too long;
//! - an empty segment (`//`, a trailing `/`);
//! - a segment that decodes to `.` or `..`, contains `/` once decoded (an encoded slash), is not
//!   UTF-8, or holds a control character;
//! - a malformed query: a pair without `=`, a repeated or undecodable name or value.
//!
//! The routing path keeps its raw (still encoded) segments, so what a segment decodes to can
//! never change which template it matches; parameters are decoded after the match.
//!
//! ```
//! use forgelens::engine::uri;
//! let p = uri::parse("forgejo://repo/o/r/labels?page=2&limit=10").unwrap();
//! assert_eq!(p.path, "/repo/o/r/labels");
//! assert_eq!(p.query, [("page".to_string(), "2".to_string()), ("limit".into(), "10".into())]);
//! assert!(uri::parse("forgejo://repo/o/r/contents/a/%2e%2e/x").is_err());
//! ```

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use thiserror::Error;

use super::template::SCHEME;

/// Longest URI accepted, in bytes.
pub const MAX_URI_LEN: usize = 4096;
/// Longest path segment or query value accepted, in bytes (before decoding).
pub const MAX_SEGMENT_LEN: usize = 1024;

/// A URI split for routing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedUri<'a> {
    /// `/` followed by the raw segments: what the router matches.
    pub path: Cow<'a, str>,
    /// Decoded query pairs, in order, names unique.
    pub query: Vec<(String, String)>,
}

/// Why a URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UriError {
    #[error("the URI is longer than {MAX_URI_LEN} bytes")]
    TooLong,
    #[error("the scheme must be `{SCHEME}://`")]
    Scheme,
    #[error("fragments (`#…`) are not part of forgejo URIs")]
    Fragment,
    #[error("the URI has no path after `{SCHEME}://`")]
    Empty,
    #[error("the path has an empty segment (`//` or a trailing `/`)")]
    EmptySegment,
    #[error("a path segment is longer than {MAX_SEGMENT_LEN} bytes")]
    SegmentTooLong,
    #[error("`.` and `..` segments are not allowed, encoded or not")]
    DotSegment,
    #[error("a segment contains an encoded `/` (%2F); one segment is one name")]
    EncodedSlash,
    #[error("`{0}` is not valid percent-encoded UTF-8")]
    Encoding(String),
    #[error("control characters are not allowed in URIs")]
    Control,
    #[error("query pair `{0}` has no `=`")]
    QueryPair(String),
    #[error("query parameter `{0}` is given twice")]
    DuplicateQuery(String),
}

/// Parses `uri`; see the module documentation for what is refused.
pub fn parse(uri: &str) -> Result<ParsedUri<'_>, UriError> {
    if uri.len() > MAX_URI_LEN {
        return Err(UriError::TooLong);
    }
    let rest = match uri.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case(SCHEME) => rest,
        _ => return Err(UriError::Scheme),
    };
    if rest.contains('#') {
        return Err(UriError::Fragment);
    }
    let (path, query) = match rest.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (rest, None),
    };
    if path.is_empty() {
        return Err(UriError::Empty);
    }
    for segment in path.split('/') {
        check_segment(segment)?;
    }
    let query = match query {
        Some(q) => parse_query(q)?,
        None => Vec::new(),
    };
    let mut routed = String::with_capacity(path.len() + 1);
    routed.push('/');
    routed.push_str(path);
    Ok(ParsedUri {
        path: Cow::Owned(routed),
        query,
    })
}

fn check_segment(raw: &str) -> Result<(), UriError> {
    if raw.is_empty() {
        return Err(UriError::EmptySegment);
    }
    if raw.len() > MAX_SEGMENT_LEN {
        return Err(UriError::SegmentTooLong);
    }
    let decoded = decode(raw)?;
    if decoded == "." || decoded == ".." {
        return Err(UriError::DotSegment);
    }
    if decoded.contains('/') {
        return Err(UriError::EncodedSlash);
    }
    Ok(())
}

/// Percent-decodes one raw component, refusing bad UTF-8 and control characters.
pub fn decode(raw: &str) -> Result<Cow<'_, str>, UriError> {
    let decoded = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| UriError::Encoding(raw.to_owned()))?;
    if decoded.chars().any(char::is_control) || raw.chars().any(char::is_control) {
        return Err(UriError::Control);
    }
    Ok(decoded)
}

fn parse_query(query: &str) -> Result<Vec<(String, String)>, UriError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(UriError::QueryPair(pair.to_owned()));
        };
        if value.len() > MAX_SEGMENT_LEN {
            return Err(UriError::SegmentTooLong);
        }
        let name = decode(name)?.into_owned();
        if pairs.iter().any(|(n, _)| *n == name) {
            return Err(UriError::DuplicateQuery(name));
        }
        pairs.push((name, decode(value)?.into_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_splits() {
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
        let cases: &[Case] = &[
            ("forgejo://instance", "/instance", &[]),
            ("FORGEJO://instance", "/instance", &[]),
            ("forgejo://repo/o/r/label/1", "/repo/o/r/label/1", &[]),
            ("forgejo://repo/o/r/labels?", "/repo/o/r/labels", &[]),
            (
                "forgejo://repo/o/r/labels?page=2",
                "/repo/o/r/labels",
                &[("page", "2")],
            ),
            (
                "forgejo://repo/o/r/issues?labels=a%2Cb&state=",
                "/repo/o/r/issues",
                &[("labels", "a,b"), ("state", "")],
            ),
            ("forgejo://repo/%C3%A9/r", "/repo/%C3%A9/r", &[]),
        ];
        for (input, path, query) in cases {
            let p = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(p.path, *path, "{input}");
            let q: Vec<(&str, &str)> = p
                .query
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            assert_eq!(q, *query, "{input}");
        }
    }

    #[test]
    fn refuses() {
        let long = format!("forgejo://repo/{}", "a".repeat(MAX_URI_LEN));
        let long_segment = format!("forgejo://repo/{}", "a".repeat(MAX_SEGMENT_LEN + 1));
        let cases: &[(&str, UriError)] = &[
            ("https://repo/o/r", UriError::Scheme),
            ("repo/o/r", UriError::Scheme),
            ("forgejo://", UriError::Empty),
            ("forgejo://repo/o/r#x", UriError::Fragment),
            ("forgejo://repo//r", UriError::EmptySegment),
            ("forgejo://repo/o/r/", UriError::EmptySegment),
            ("forgejo://repo/o/../x", UriError::DotSegment),
            ("forgejo://repo/o/./x", UriError::DotSegment),
            ("forgejo://repo/o/%2e%2E/x", UriError::DotSegment),
            ("forgejo://repo/o%2Fx/r", UriError::EncodedSlash),
            ("forgejo://repo/o/%ff", UriError::Encoding("%ff".into())),
            ("forgejo://repo/o/a%00b", UriError::Control),
            ("forgejo://repo/o/a\u{7}b", UriError::Control),
            (
                "forgejo://repo/o/r/labels?page",
                UriError::QueryPair("page".into()),
            ),
            (
                "forgejo://repo/o/r/labels?page=1&page=2",
                UriError::DuplicateQuery("page".into()),
            ),
            ("forgejo://repo/o/r/labels?page=%0a", UriError::Control),
            (&long, UriError::TooLong),
            (&long_segment, UriError::SegmentTooLong),
        ];
        for (input, expected) in cases {
            assert_eq!(parse(input).as_ref().err(), Some(expected), "{input}");
        }
    }

    #[test]
    fn double_encoding_stays_one_literal_segment() {
        // `%252F` decodes once, to the text `%2F`: a name, not a separator.
        let p = parse("forgejo://repo/o/a%252Fb").unwrap();
        assert_eq!(decode("a%252Fb").unwrap(), "a%2Fb");
        assert_eq!(p.path, "/repo/o/a%252Fb");
    }
}
