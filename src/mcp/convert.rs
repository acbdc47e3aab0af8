//! Engine values → rmcp protocol types, in one place: templates, resources, read results with
//! their cache hints, tools with their annotations, tool results, errors, and cursor paging.
//!
//! Every JSON-RPC error forgelens sends is built here, from one of two tables: a failed read's
//! code comes from the manifest's `errors:` table ([`error`]), and what the server itself
//! refuses at the protocol level has its code in [`Refusal::code`].

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    Annotations, CacheScope, CallToolResult, CompleteResult, CompletionInfo, ContentBlock,
    ErrorCode, MetaObject, ReadResourceResult, Resource as McpResource, ResourceContents,
    ResourceTemplate, Role, Tool as McpTool, ToolAnnotations,
};
use serde_json::{Value, json};

use super::PAGE_SIZE;
use crate::engine::error::Situation;
use crate::engine::listing::Listed;
use crate::engine::tool::Form;
use crate::engine::{self, Cache, Error, ErrorTable, ReadOutput, Reason, Resource, Tool};
use crate::service::ToolAnswer;
use crate::surface::Meta;

/// What the server refuses at the protocol level, before any read or call reaches the forge.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// A body that is not JSON.
    #[error("Parse error: {0}")]
    Parse(String),
    /// A request the server cannot take as sent.
    #[error("{0}")]
    InvalidRequest(String),
    /// A method forgelens does not serve.
    #[error("Method not found: {0}")]
    MethodNotFound(String),
    /// Params that do not parse, an unknown tool, a cursor not given by the server.
    #[error("{0}")]
    InvalidParams(String),
    /// A state the server should never reach: its own bug.
    #[error("{0}; this is a forgelens bug")]
    Internal(String),
    /// The client cancelled the request.
    #[error("the request was cancelled")]
    Cancelled,
}

impl Refusal {
    /// The JSON-RPC code of each refusal: the specification's own, and for a cancelled
    /// request the one LSP uses (MCP defines none).
    pub fn code(&self) -> i32 {
        match self {
            Refusal::Parse(_) => -32700,
            Refusal::InvalidRequest(_) => -32600,
            Refusal::MethodNotFound(_) => -32601,
            Refusal::InvalidParams(_) => -32602,
            Refusal::Internal(_) => -32603,
            Refusal::Cancelled => -32800,
        }
    }

    /// The error object of a JSON-RPC answer, for a transport that writes one itself.
    pub fn to_json(&self) -> Value {
        json!({"code": self.code(), "message": self.to_string()})
    }
}

/// A "method not found" message in the form every such answer has, `Method not found: X`:
/// rmcp names the method alone for the ones it refuses itself.
pub fn method_not_found_message(message: &str) -> std::borrow::Cow<'_, str> {
    match message.starts_with("Method not found") {
        true => std::borrow::Cow::Borrowed(message),
        false => std::borrow::Cow::Owned(Refusal::MethodNotFound(message.to_owned()).to_string()),
    }
}

impl From<Refusal> for ErrorData {
    fn from(refusal: Refusal) -> ErrorData {
        // Invalid params carry the reason clients rely on, as a failed read's do.
        let data = matches!(refusal, Refusal::InvalidParams(_))
            .then(|| json!({"reason": Reason::InvalidParams.as_str()}));
        ErrorData::new(ErrorCode(refusal.code()), refusal.to_string(), data)
    }
}

/// Immutable resources are for the assistant and always worth reading.
fn immutable_annotations() -> Annotations {
    Annotations::default()
        .with_audience(vec![Role::Assistant])
        .with_priority(1.0)
}

pub fn template(resource: &Resource) -> ResourceTemplate {
    let mut t = ResourceTemplate::new(resource.template.as_str(), &resource.name)
        .with_title(&resource.title)
        .with_description(&resource.description)
        .with_mime_type("application/json");
    if matches!(resource.cache, Cache::Immutable { .. }) {
        t = t.with_annotations(immutable_annotations());
    }
    t
}

pub fn concrete(resource: &Resource) -> McpResource {
    let mut r = McpResource::new(resource.template.as_str(), &resource.name)
        .with_title(&resource.title)
        .with_description(&resource.description)
        .with_mime_type("application/json");
    if matches!(resource.cache, Cache::Immutable { .. }) {
        r = r.with_annotations(immutable_annotations());
    }
    r
}

pub fn read_result(uri: &str, output: ReadOutput, with_token: bool) -> ReadResourceResult {
    // What the answer says about itself goes with its JSON block, the one it describes.
    let mut meta = output.meta.and_then(meta_object);
    let contents = output
        .blocks
        .into_iter()
        .map(|b| ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            meta: match b.mime {
                "application/json" => meta.take(),
                _ => None,
            },
            mime_type: Some(b.mime.to_owned()),
            text: b.text,
        })
        .collect();
    let mut result = ReadResourceResult::new(contents);
    if let Some(ttl_ms) = output.ttl_ms {
        result = result.with_ttl_ms(ttl_ms);
    }
    // A mutable answer is not to be reused (the server's own cache serves repeats); one read
    // with a token is that token's alone.
    result.ttl_ms.get_or_insert(0);
    result = result.with_cache_scope(match with_token {
        true => CacheScope::Private,
        false => CacheScope::Public,
    });
    result
}

/// The wire error of a failed read: code from the manifest's table (for a stateless request,
/// `modern`, never one of the legacy codes that revision retired), `data` =
/// `{uri, reason, upstream_status?}`.
pub fn error(
    table: &ErrorTable,
    uri: &str,
    error: &Error,
    modern: bool,
    situation: Situation,
) -> ErrorData {
    let reason = table.reason(error);
    // The URI as asked, unless it is past what the parser reads (then it was refused for it).
    let uri = crate::engine::error::cut(uri, crate::engine::uri::MAX_URI_LEN);
    let mut data = json!({"uri": uri, "reason": reason.as_str()});
    if let Some(status) = error.upstream_status() {
        data["upstream_status"] = json!(status);
    }
    ErrorData::new(
        ErrorCode(table.wire_code(reason, modern)),
        table.message_in(error, situation),
        Some(data),
    )
}

fn annotations(title: &str, a: engine::Annotations) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world)
}

/// A tool as `tools/list` shows it: its summary and its schema in `form`.
pub fn tool(tool: &Tool, form: Form) -> McpTool {
    let description = match form {
        Form::Complete => tool.complete_description(),
        Form::Lean { .. } => tool.summary.clone(),
    };
    let mut t = McpTool::new(
        tool.name.clone(),
        description,
        Arc::new(tool.input_schema(form)),
    )
    .with_title(&tool.title)
    .with_annotations(annotations(&tool.title, tool.annotations));
    if let Some(schema) = tool.output_schema() {
        t = t.with_raw_output_schema(Arc::new(schema));
    }
    t
}

/// A meta-tool as `tools/list` shows it (its schema's lean form).
pub fn meta_tool(meta: Meta) -> McpTool {
    McpTool::new(
        meta.name(),
        meta.description(),
        Arc::new(engine::schema::lean(meta.input_schema())),
    )
    .with_title(meta.title())
    .with_annotations(annotations(meta.title(), meta.annotations()))
}

/// A resource read through `read_resource`: each block as text, as `resources/read` has it.
pub fn read_as_tool(output: ReadOutput) -> CallToolResult {
    let mut result = CallToolResult::success(
        output
            .blocks
            .into_iter()
            .map(|b| ContentBlock::text(b.text))
            .collect(),
    );
    result.meta = output.meta.and_then(meta_object);
    result
}

/// A failed `read_resource`: the message, and the very error `resources/read` would have
/// given as `{error: {code, message, data}}`.
pub fn read_failure(
    table: &ErrorTable,
    uri: &str,
    error: &Error,
    modern: bool,
    situation: Situation,
) -> CallToolResult {
    let wire = self::error(table, uri, error, modern, situation);
    let mut result = tool_failure(
        table.message_in(error, situation),
        Some((table.reason(error), error.upstream_status())),
    );
    result.structured_content = Some(json!({"error": {
        "code": wire.code.0,
        "message": wire.message,
        "data": wire.data,
    }}));
    result
}

/// A successful call: the structured result, and the same JSON as text for clients that read
/// only text.
pub fn tool_success(answer: ToolAnswer) -> CallToolResult {
    // serde_json's writer rather than `Value`'s `Display` (what `CallToolResult::structured`
    // uses), which passes every piece through `fmt::Formatter`: it showed in the server's profile.
    let text = answer.shown.unwrap_or_else(|| {
        serde_json::to_string(&answer.value).expect("a JSON value always serializes")
    });
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(answer.value);
    result.meta = answer.meta.and_then(meta_object);
    result
}

/// A `_meta` object, from the engine's JSON.
fn meta_object(meta: Value) -> Option<MetaObject> {
    match meta {
        Value::Object(map) => Some(MetaObject(map)),
        _ => None,
    }
}

/// A failed call: an `isError` result whose text says what happened and what to do.
pub fn tool_failure(message: String, cause: Option<(Reason, Option<u16>)>) -> CallToolResult {
    let prefix = match cause {
        Some((reason, Some(status))) => format!("{reason} (forge status {status}): "),
        Some((reason, None)) => format!("{reason}: "),
        None => String::new(),
    };
    CallToolResult::error(vec![ContentBlock::text(format!("{prefix}{message}"))])
}

/// A resource found by a `resources/list` source.
pub fn listed(listed: Listed) -> McpResource {
    let mut r = McpResource::new(listed.uri, listed.name).with_mime_type("application/json");
    if let Some(d) = listed.description {
        r = r.with_description(d);
    }
    r
}

/// The source and page a `resources/list` cursor names (`"source:page"`).
pub fn listing_cursor(cursor: &str, applicable: &[usize]) -> Result<(usize, u64), ErrorData> {
    cursor
        .split_once(':')
        .and_then(|(s, p)| Some((s.parse::<usize>().ok()?, p.parse::<u64>().ok()?)))
        .filter(|(s, p)| applicable.contains(s) && *p >= 1)
        .ok_or_else(|| invalid_cursor(cursor))
}

fn invalid_cursor(cursor: &str) -> ErrorData {
    Refusal::InvalidParams(format!(
        "invalid cursor `{cursor}`; pass back the nextCursor of the previous answer"
    ))
    .into()
}

/// Completion candidates (at most the protocol's 100; `hasMore` when some were left out).
pub fn completion(mut values: Vec<String>) -> CompleteResult {
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let mut info = CompletionInfo::new(values).expect("truncated to the protocol's maximum");
    info.total = u32::try_from(total).ok();
    info.has_more = Some(total > CompletionInfo::MAX_VALUES);
    CompleteResult::new(info)
}

/// One page of `items` from an opaque cursor (the offset as decimal text).
pub fn page<T>(items: Vec<T>, cursor: Option<&str>) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= items.len())
            .ok_or_else(|| invalid_cursor(c))?,
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refusal goes out with its code and its message; invalid params carry the reason a
    /// failed read's would.
    #[test]
    fn refusals_carry_their_codes() {
        for (refusal, code) in [
            (Refusal::Parse("not JSON".into()), -32700),
            (Refusal::InvalidRequest("no".into()), -32600),
            (Refusal::MethodNotFound("prompts/list".into()), -32601),
            (Refusal::InvalidParams("bad".into()), -32602),
            (Refusal::Internal("lost".into()), -32603),
            (Refusal::Cancelled, -32800),
        ] {
            let message = refusal.to_string();
            assert_eq!(refusal.to_json()["code"], code);
            let wire = ErrorData::from(refusal.clone());
            assert_eq!(
                (wire.code.0, wire.message.as_ref()),
                (code, message.as_str())
            );
            let reason = wire.data.as_ref().map(|d| d["reason"].clone());
            let expected = (code == -32602).then(|| json!("invalid_params"));
            assert_eq!(reason, expected, "{refusal:?}");
        }
        assert_eq!(
            Refusal::MethodNotFound("prompts/get".into()).to_string(),
            "Method not found: prompts/get"
        );
    }
}
