//! Engine values → rmcp protocol types, in one place: templates, resources, read results with
//! their cache hints, tools with their annotations, tool results, errors, and cursor paging.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    Annotations, CacheScope, CallToolResult, CompleteResult, CompletionInfo, ContentBlock,
    ErrorCode, MetaObject, ReadResourceResult, Resource as McpResource, ResourceContents,
    ResourceTemplate, Role, Tool as McpTool, ToolAnnotations,
};
use serde_json::{Value, json};

use super::PAGE_SIZE;
use crate::engine::listing::Listed;
use crate::engine::tool::Form;
use crate::engine::{self, Cache, Error, ErrorTable, ReadOutput, Reason, Resource, Tool};
use crate::service::ToolAnswer;
use crate::surface::Meta;

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
    if with_token {
        result = result.with_cache_scope(CacheScope::Private);
    }
    result
}

/// The wire error of a failed read: code from the manifest's table, `data` =
/// `{uri, reason, upstream_status?}`.
pub fn error(table: &ErrorTable, uri: &str, error: &Error) -> ErrorData {
    let reason = table.reason(error);
    let mut data = json!({"uri": uri, "reason": reason.as_str()});
    if let Some(status) = error.upstream_status() {
        data["upstream_status"] = json!(status);
    }
    ErrorData::new(
        ErrorCode(table.code(reason)),
        table.message(error),
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
        Form::Complete => tool.description.clone(),
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
pub fn read_failure(table: &ErrorTable, uri: &str, error: &Error) -> CallToolResult {
    let wire = self::error(table, uri, error);
    let mut result = tool_failure(
        table.message(error),
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
    ErrorData::invalid_params(
        format!("invalid cursor `{cursor}`; pass back the nextCursor of the previous answer"),
        Some(json!({"reason": Reason::InvalidParams.as_str()})),
    )
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
