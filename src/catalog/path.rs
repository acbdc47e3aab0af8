//! Our request paths against the spec's: which operation of the forge a request line sends.
//! A spec placeholder matches any text of ours, one of our placeholders any text of the
//! spec's, so `/repos/{owner}/{repo}/pulls/{index}.diff` is the spec's
//! `/repos/{owner}/{repo}/pulls/{index}.{diffType}`. Used by the lint's spec checks and by
//! what an instance's own spec offers.

/// Whether the spec's path `spec` covers our path `ours`, segment by segment.
pub fn covers(spec: &str, ours: &str) -> bool {
    let (theirs, ours): (Vec<&str>, Vec<String>) = (
        spec.split('/').collect(),
        ours.split('/').map(sample).collect(),
    );
    theirs.len() == ours.len() && theirs.iter().zip(&ours).all(|(t, o)| segment_matches(t, o))
}

/// One of our segments with each placeholder (`{name}`, `{+name}`) replaced by a sample
/// value, a character no spec literal has.
pub fn sample(segment: &str) -> String {
    let mut out = String::new();
    let mut rest = segment;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        out.push('\u{1}');
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// Whether a spec segment (literal text and `{name}` placeholders) matches our sampled one; a
/// placeholder matches one or more characters.
pub fn segment_matches(spec: &str, ours: &str) -> bool {
    match spec.find('{') {
        None => spec == ours,
        Some(open) => {
            let Some(literal) = ours.strip_prefix(&spec[..open]) else {
                return false;
            };
            let close = spec[open..].find('}').map_or(spec.len(), |c| open + c + 1);
            let after = &spec[close..];
            (1..=literal.len())
                .filter(|&i| literal.is_char_boundary(i))
                .any(|i| segment_matches(after, &literal[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{covers, sample, segment_matches};

    #[test]
    fn segments_match_with_placeholders() {
        let cases = [
            ("comments", "comments", true),
            ("{id}", "\u{1}", true),
            ("{id}", "comments", true),
            ("{index}.{diffType}", "\u{1}.diff", true),
            ("{index}.{diffType}", "\u{1}", false),
            ("labels", "lables", false),
        ];
        for (spec, ours, expected) in cases {
            assert_eq!(segment_matches(spec, ours), expected, "{spec} {ours:?}");
        }
        assert_eq!(sample("{sha}.{kind}"), "\u{1}.\u{1}");
    }

    #[test]
    fn a_spec_placeholder_covers_our_literal_and_ours_covers_any() {
        let spec = "/repos/{owner}/{repo}/pulls/{index}.{diffType}";
        assert!(covers(spec, "/repos/{owner}/{repo}/pulls/{index}.diff"));
        assert!(covers(spec, "/repos/{owner}/{repo}/pulls/{index}.{type}"));
        assert!(!covers(spec, "/repos/{owner}/{repo}/pulls/{index}"));
        assert!(!covers(
            "/repos/{owner}/{repo}/labels",
            "/repos/{owner}/{repo}/label"
        ));
        assert!(covers(
            "/repos/{owner}/{repo}/contents/{filepath}",
            "/repos/{o}/{r}/contents/{+path}"
        ));
    }
}
