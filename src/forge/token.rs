//! The access token: a type that cannot be printed.

use std::fmt;

use super::scope::Scopes;

/// A forge access token. `Debug` and `Display` print `Token(***)`, so a token can sit inside
/// any derived `Debug` without leaking; only [`Token::header_value`] exposes it, to build the
/// `Authorization` header (which is then marked sensitive).
///
/// A token of a sign-in through forgelens's OAuth also carries the scopes it was granted, and
/// the client sends no request beyond them; a personal token carries none and the forge alone
/// judges it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Token {
    text: String,
    scopes: Option<Scopes>,
}

impl Token {
    /// A token from its text, trimmed; `None` when blank.
    pub fn new(text: &str) -> Option<Token> {
        let t = text.trim();
        (!t.is_empty()).then(|| Token {
            text: t.to_owned(),
            scopes: None,
        })
    }

    /// A signed-in user's forge token, limited to the scopes of the sign-in.
    pub fn granted(text: &str, scopes: Scopes) -> Option<Token> {
        Token::new(text).map(|token| Token {
            scopes: Some(scopes),
            ..token
        })
    }

    /// The scopes this token is limited to; `None` for a personal token.
    pub fn scopes(&self) -> Option<Scopes> {
        self.scopes
    }

    /// The token's text, for scrubbing it from what the forge sends back.
    pub(crate) fn secret(&self) -> &str {
        &self.text
    }

    /// `token <T>`, the value of the `Authorization` header the forge expects.
    pub(crate) fn header_value(&self) -> String {
        format!("token {}", self.text)
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
