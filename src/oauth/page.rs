//! The two pages forgelens shows a person signing in: its consent page (which client, where it
//! sends them back, what it may do) and the page that says why a sign-in cannot go on. Plain
//! HTML with no script; every value escaped; served so that no other site can frame it.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `text` safe inside HTML text and quoted attributes.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;\
padding:0 1rem;line-height:1.5}code{background:#eee;padding:0 .2rem}button{font-size:1rem;\
padding:.4rem 1rem;margin-right:.5rem}li{margin:.2rem 0}";

/// What the consent page shows and posts back.
pub(super) struct Consent<'a> {
    pub client_name: Option<&'a str>,
    pub client_id: &'a str,
    pub redirect_host: &'a str,
    pub forge: &'a str,
    pub scopes: &'a [String],
    pub pending: &'a str,
    pub csrf: &'a str,
}

pub(super) fn consent(page: &Consent<'_>) -> String {
    let name = match page.client_name {
        Some(name) => format!("<strong>{}</strong>", escape(name)),
        None => "An unnamed client".to_owned(),
    };
    let scopes: String = page
        .scopes
        .iter()
        .map(|s| format!("<li><code>{}</code></li>", escape(s)))
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Allow access to {forge}?</title><style>{STYLE}</style></head><body>\
<h1>Allow access to {forge}?</h1>\
<p>{name} (client <code>{client_id}</code>) asks to use forgelens with your account on \
<strong>{forge}</strong>. After you allow it here, {forge} asks you to sign in and confirm; \
then you are sent back to <strong>{host}</strong>.</p>\
<p>It will be able to:</p><ul>{scopes}</ul>\
<p>Only allow it if you started this sign-in and you know <strong>{host}</strong>.</p>\
<form method=\"post\" action=\"consent\">\
<input type=\"hidden\" name=\"pending\" value=\"{pending}\">\
<input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
<button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button>\
</form></body></html>",
        forge = escape(page.forge),
        client_id = escape(page.client_id),
        host = escape(page.redirect_host),
        pending = escape(page.pending),
        csrf = escape(page.csrf),
    )
}

/// A page that says why the sign-in stops here.
pub(super) fn problem(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Sign-in stopped</title><style>{STYLE}</style></head><body>\
<h1>This sign-in cannot go on</h1><p>{}</p>\
<p>Start the sign-in again from your MCP client.</p></body></html>",
        escape(message)
    );
    html(status, body, "'none'")
}

/// An HTML answer that is never cached nor framed, whose forms may post only to
/// `form_action`.
pub(super) fn html(status: StatusCode, body: String, form_action: &str) -> Response {
    let policy = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; \
         frame-ancestors 'none'; base-uri 'none'"
    );
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_calls_itself_cannot_become_markup() {
        let scopes = ["read:issue".to_owned()];
        let page = consent(&Consent {
            client_name: Some("<script>alert(1)</script>\" onload=\""),
            client_id: "flc_x",
            redirect_host: "app.example",
            forge: "https://codeberg.org",
            scopes: &scopes,
            pending: "p",
            csrf: "c",
        });
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("&lt;script&gt;") && page.contains("&quot; onload=&quot;"));
    }
}
