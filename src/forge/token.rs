//! The access token: a type that cannot be printed.

use std::fmt;

/// A forge access token. `Debug` and `Display` print `Token(***)`, so a token can sit inside
/// any derived `Debug` without leaking; only [`Token::header_value`] exposes it, to build the
/// `Authorization` header (which is then marked sensitive).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Token(String);

impl Token {
    /// A token from its text, trimmed; `None` when blank.
    pub fn new(text: &str) -> Option<Token> {
        let t = text.trim();
        (!t.is_empty()).then(|| Token(t.to_owned()))
    }

    /// The token's text, for scrubbing it from what the forge sends back.
    pub(crate) fn secret(&self) -> &str {
        &self.0
    }

    /// `token <T>`, the value of the `Authorization` header the forge expects.
    pub(crate) fn header_value(&self) -> String {
        format!("token {}", self.0)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_itself() {
        let t = Token::new(" s3cr3t-value\n").unwrap();
        assert_eq!(
            format!("{t:?} {t} {:?}", Some(&t)),
            "Token(***) *** Some(Token(***))"
        );
        assert_eq!(t.header_value(), "token s3cr3t-value");
        assert!(Token::new("  ").is_none());
    }
}
