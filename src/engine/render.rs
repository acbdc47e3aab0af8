//! Markdown blocks: minijinja templates compiled at start-up, rendered from the projected value.
//!
//! Rendering reads the small projected value, never the forge's raw answer. Output longer than
//! the block's cap is cut on a character boundary and ends with a visible marker.

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::Value;

/// All markdown templates of a catalog.
#[derive(Debug)]
pub struct Renderer {
    env: Environment<'static>,
}

impl Default for Renderer {
    fn default() -> Self {
        let mut env = Environment::new();
        // Markdown is not HTML: nothing is escaped. Missing fields render as nothing.
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        Renderer { env }
    }
}

impl Renderer {
    /// Compiles `source` under `name`; the error says where it fails.
    pub fn add(&mut self, name: &str, source: &str) -> Result<(), TemplateError> {
        Ok(self
            .env
            .add_template_owned(name.to_owned(), source.to_owned())?)
    }

    /// The top-level variables a template reads.
    pub fn variables(&self, name: &str) -> Vec<String> {
        let Ok(template) = self.env.get_template(name) else {
            return Vec::new();
        };
        let mut vars: Vec<String> = template.undeclared_variables(false).into_iter().collect();
        vars.sort();
        vars
    }

    /// Renders template `name` from `value`, at most `max_chars` characters plus the marker.
    pub fn render(
        &self,
        name: &str,
        value: &Value,
        max_chars: usize,
    ) -> Result<String, TemplateError> {
        let text = self.env.get_template(name)?.render(Serde(value))?;
        Ok(cap(text, max_chars))
    }
}

/// Cuts `text` to `max_chars` characters and says so.
pub fn cap(text: String, max_chars: usize) -> String {
    let Some((cut, _)) = text.char_indices().nth(max_chars) else {
        return text;
    };
    let total = text.chars().count();
    let mut out = text[..cut].to_owned();
    out.push_str(&format!(
        "\n\n[truncated: markdown cut at {max_chars} of {total} characters; the JSON block has the fields.]"
    ));
    out
}

/// A template that does not compile or render: minijinja's words, and the line when it has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", line.map(|l| format!(" (template line {l})")).unwrap_or_default())]
pub struct TemplateError {
    message: String,
    line: Option<usize>,
}

impl From<minijinja::Error> for TemplateError {
    fn from(error: minijinja::Error) -> TemplateError {
        TemplateError {
            message: error.to_string(),
            line: error.line(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn renders_from_the_projection() {
        let mut r = Renderer::default();
        r.add("issue", "# {{ title }}\n\n{{ body }}").unwrap();
        let out = r
            .render("issue", &json!({"title": "A <b>", "body": "text"}), 1000)
            .unwrap();
        assert_eq!(out, "# A <b>\n\ntext");
        assert_eq!(r.variables("issue"), ["body", "title"]);
    }

    #[test]
    fn caps_with_a_marker() {
        let out = cap("ééééé".to_owned(), 3);
        assert!(
            out.starts_with("ééé\n\n[truncated: markdown cut at 3 of 5 characters"),
            "{out}"
        );
        assert_eq!(cap("short".to_owned(), 10), "short");
    }

    #[test]
    fn reports_syntax_errors() {
        let mut r = Renderer::default();
        let err = r.add("bad", "{{ title ").unwrap_err();
        assert!(err.to_string().ends_with("(template line 1)"), "{err}");
    }
}
