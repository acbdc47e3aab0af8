//! The meta-tools' behaviour: `search_tools` and `describe_tools` answered from the catalog,
//! `call_read_tool` / `call_write_tool` running a tool by name (the first only read-only ones),
//! and `read_resource` reading a URI as `resources/read` would. Their names, descriptions and
//! schemas are the surface's ([`crate::surface`]); what they answer is here, over the service's
//! own reads and calls.

use serde_json::{Map, Value, json};

use super::find::{self, Found};
use super::{CallError, Called, Service, ToolAnswer};
use crate::catalog::known::Operation;
use crate::config::Surface;
use crate::engine;
use crate::engine::error::Invalid;
use crate::engine::tool::Form;
use crate::forge::Token;
use crate::forge::scope::{Need, Scopes};
use crate::manifest::diagnostic::did_you_mean;
use crate::surface::{self, Meta};

impl Service {
    pub(super) async fn call_meta(
        &self,
        meta: Meta,
        mut arguments: Map<String, Value>,
        token: Option<&Token>,
    ) -> Result<Called, CallError> {
        meta.check(&arguments)
            .map_err(|why| Invalid::MetaArguments {
                tool: meta.name().to_owned(),
                why,
            })
            .map_err(engine::Error::from)?;
        let text = |arguments: &Map<String, Value>, key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let budget = self.serving.budget;
        match meta {
            Meta::SearchTools => {
                let limit = arguments
                    .get("limit")
                    .and_then(Value::as_u64)
                    .unwrap_or(surface::DEFAULT_SEARCH_RESULTS);
                let scopes = token.and_then(Token::scopes);
                let found = self.search(&text(&arguments, "query"), limit as usize, scopes);
                Ok(Called::Value(ToolAnswer::plain(engine::endpoint::within(
                    found, budget,
                ))))
            }
            Meta::DescribeTools => {
                let complete = arguments.get("complete").and_then(Value::as_bool) == Some(true);
                let names: Vec<String> = match arguments.remove("names") {
                    Some(Value::Array(names)) => names
                        .into_iter()
                        .filter_map(|n| n.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                };
                Ok(Called::Value(ToolAnswer::plain(engine::endpoint::within(
                    self.describe(&names, complete)?,
                    budget,
                ))))
            }
            Meta::CallReadTool | Meta::CallWriteTool => {
                let name = text(&arguments, "name");
                if let Some(inner) = Meta::named(&name) {
                    return Err(CallError::Refused {
                        name,
                        why: format!("{} is itself a meta-tool; call it directly", inner.name()),
                    });
                }
                let tool = self.reachable(&name)?;
                if meta == Meta::CallReadTool && !tool.annotations.read_only {
                    let how = match self.offers(Meta::CallWriteTool) {
                        true => "run it with call_write_tool",
                        false => "call_write_tool is not offered here",
                    };
                    return Err(CallError::Refused {
                        name,
                        why: format!(
                            "call_read_tool runs only read-only tools, and this one changes things; {how}"
                        ),
                    });
                }
                let inner = match arguments.remove("arguments") {
                    Some(Value::Object(map)) => map,
                    _ => Map::new(),
                };
                self.call_tool(&name, inner, token).await
            }
            Meta::ReadResource => {
                let uri = text(&arguments, "uri");
                match self.read(&uri, token).await {
                    Ok(output) => Ok(Called::Read(output)),
                    Err(error) => Err(CallError::Read { uri, error }),
                }
            }
        }
    }

    /// The `search_tools` answer: the best `limit` reachable tools (and operations without a
    /// tool, as `forgejo_api_request`) for `query`, each with its score; for a sign-in limited
    /// to `scopes`, only what those scopes allow.
    fn search(&self, query: &str, limit: usize, scopes: Option<Scopes>) -> Value {
        let allowed = |need: Option<Need>| scopes.is_none_or(|s| need.is_none_or(|n| s.allows(n)));
        let wanted = match scopes {
            Some(_) => usize::MAX,
            None => limit,
        };
        let finder = self.index();
        let hits = finder.search(query, wanted);
        let best = hits.first().map_or(0.0, |(_, score)| *score);
        let tools: Vec<Value> = hits
            .iter()
            .filter_map(|(found, score)| {
                let mut row = match *found {
                    Found::Tool(i) => {
                        let tool = &self.catalog.tools()[i];
                        allowed(tool.needs()).then(|| tool_row(tool))?
                    }
                    Found::Operation(i) => {
                        let op = &finder.operations()[i];
                        allowed(Need::of(op.method, &op.path)).then(|| self.operation_row(op))?
                    }
                };
                row.insert("score".into(), json!((score * 10.0).round() / 10.0));
                Some(Value::Object(row))
            })
            .take(limit)
            .collect();
        let fallback = match self.catalog.tool(find::API_REQUEST) {
            Some(_) => {
                " For an endpoint no tool covers, forgejo_api_request sends any request of the forge's API."
            }
            None => "",
        };
        let note = match (tools.is_empty(), best < WEAK, self.surface) {
            (true, _, _) => format!(
                "No tool matches those words; try others (what you want to do, and to what).{fallback}"
            ),
            (false, true, _) => format!(
                "Nothing fits well (every score is under {WEAK}): check that a result does what you want before calling it, or search again in other words.{fallback}"
            ),
            (false, false, Surface::Core) => "Call a tool without `call_with` directly; call the others through the meta-tool `call_with` names, as {name, arguments}. A forgejo_api_request result gives its `request`: the method, path and body to send. describe_tools gives complete schemas.".to_owned(),
            (false, false, Surface::Full) => "Call any of these directly; a forgejo_api_request result gives its `request`: the method, path and body to send. describe_tools gives complete schemas.".to_owned(),
        };
        json!({"query": query, "tools": tools, "note": note})
    }

    /// An operation without a tool, as the `forgejo_api_request` call that sends it.
    fn operation_row(&self, op: &Operation) -> Map<String, Value> {
        let mut request = Map::new();
        request.insert("method".into(), json!(op.method.as_str()));
        request.insert("path".into(), json!(op.path.trim_start_matches('/')));
        if !op.query.is_empty() {
            request.insert("query".into(), json!(op.query.join(", ")));
        }
        if let Some(body) = op.body_shape() {
            request.insert("body".into(), json!(body));
        }
        let mut row = Map::new();
        row.insert("name".into(), json!(find::API_REQUEST));
        row.insert("title".into(), json!(op.title.text));
        row.insert("toolset".into(), json!(op.toolset));
        row.insert("read_only".into(), json!(op.read_only));
        row.insert("destructive".into(), json!(op.destructive));
        row.insert("request".into(), Value::Object(request));
        if let Some(via) = self.catalog.tool(find::API_REQUEST).and_then(|t| t.via) {
            row.insert("call_with".into(), json!(via));
        }
        row
    }

    /// The `describe_tools` answer: each named tool's whole description and its arguments as
    /// `tools/list` shows them; with `complete`, also what only the checker needs (patterns,
    /// lengths, upstream names), the output schema and every annotation.
    fn describe(&self, names: &[String], complete: bool) -> Result<Value, CallError> {
        if names.is_empty() || names.len() > surface::MAX_DESCRIBED {
            return Err(engine::Error::from(Invalid::DescribeCount {
                max: surface::MAX_DESCRIBED,
                given: names.len(),
            })
            .into());
        }
        let form = match complete {
            true => Form::Complete,
            false => self.form,
        };
        let mut described = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            if let Some(meta) = Meta::named(name).filter(|m| self.offers(*m)) {
                let schema = match complete {
                    true => meta.input_schema(),
                    false => engine::schema::lean(meta.input_schema()),
                };
                let mut entry = json!({
                    "name": meta.name(),
                    "description": meta.description(),
                    "inputSchema": schema,
                });
                annotate(&mut entry, meta.annotations(), complete);
                described.push(entry);
                continue;
            }
            match self.catalog.tool(name) {
                Some(tool) => {
                    let description = match complete {
                        true => tool.complete_description(),
                        false => tool.description.clone(),
                    };
                    let mut entry = json!({
                        "name": tool.name,
                        "description": description,
                        "inputSchema": tool.input_schema(form),
                    });
                    annotate(&mut entry, tool.annotations, complete);
                    if let Some(needs) = &tool.needs {
                        entry["needs"] = json!(needs);
                    }
                    if complete {
                        entry["title"] = json!(tool.title);
                        entry["toolset"] = json!(tool.toolset);
                        if let Some(output) = tool.output_schema() {
                            entry["outputSchema"] = Value::Object(output);
                        }
                    }
                    if let Some(via) = tool.via {
                        entry["call_with"] = json!(via);
                    }
                    described.push(entry);
                }
                None => {
                    let why = match self.withheld.get(name) {
                        Some(why) => format!("not offered: {why}"),
                        None => format!(
                            "no such tool{}",
                            did_you_mean(
                                name,
                                self.catalog.tools().iter().map(|t| t.name.as_str())
                            )
                        ),
                    };
                    unknown.push(json!({"name": name, "why": why}));
                }
            }
        }
        let mut out = json!({"tools": described});
        if !unknown.is_empty() {
            out["unknown"] = Value::Array(unknown);
        }
        Ok(out)
    }
}

/// A score under which no result is taken to fit the query well.
const WEAK: f32 = 6.0;

/// A tool as a search result.
fn tool_row(tool: &engine::Tool) -> Map<String, Value> {
    let mut row = Map::new();
    row.insert("name".into(), json!(tool.name));
    row.insert("title".into(), json!(tool.title));
    row.insert("description".into(), json!(tool.summary));
    row.insert("toolset".into(), json!(tool.toolset));
    row.insert("read_only".into(), json!(tool.annotations.read_only));
    row.insert("destructive".into(), json!(tool.annotations.destructive));
    row.insert("arguments".into(), json!(tool.signature()));
    if let Some(needs) = &tool.needs {
        row.insert("needs".into(), json!(needs));
    }
    if let Some(via) = tool.via {
        row.insert("call_with".into(), json!(via));
    }
    row
}

/// A described tool's annotations: all four as MCP names them in the complete form; in the
/// lean one only what decides how to call it, as search results say it.
fn annotate(entry: &mut Value, a: engine::Annotations, complete: bool) {
    match complete {
        true => {
            entry["annotations"] = json!({
                "readOnlyHint": a.read_only,
                "destructiveHint": a.destructive,
                "idempotentHint": a.idempotent,
                "openWorldHint": a.open_world,
            })
        }
        false => {
            entry["read_only"] = json!(a.read_only);
            entry["destructive"] = json!(a.destructive);
        }
    }
}
