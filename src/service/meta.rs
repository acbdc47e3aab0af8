//! The meta-tools' behaviour: `search_tools` and `describe_tools` answered from the catalog,
//! `call_read_tool` / `call_write_tool` running a tool by name (the first only read-only ones),
//! and `read_resource` reading a URI as `resources/read` would. Their names, descriptions and
//! schemas are the surface's ([`crate::surface`]); what they answer is here, over the service's
//! own reads and calls.

use serde_json::{Map, Value, json};

use super::{CallError, Called, Service, ToolAnswer};
use crate::config::Surface;
use crate::engine;
use crate::engine::error::Invalid;
use crate::engine::tool::Form;
use crate::forge::Token;
use crate::forge::scope::Scopes;
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
                let names: Vec<String> = match arguments.remove("names") {
                    Some(Value::Array(names)) => names
                        .into_iter()
                        .filter_map(|n| n.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                };
                Ok(Called::Value(ToolAnswer::plain(engine::endpoint::within(
                    self.describe(&names)?,
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

    /// The `search_tools` answer: the best `limit` reachable tools for `query`; for a sign-in
    /// limited to `scopes`, only the tools those scopes allow.
    fn search(&self, query: &str, limit: usize, scopes: Option<Scopes>) -> Value {
        let allowed = |tool: &engine::Tool| {
            scopes.is_none_or(|s| tool.needs().is_none_or(|need| s.allows(need)))
        };
        let wanted = match scopes {
            Some(_) => self.catalog.tools().len(),
            None => limit,
        };
        let hits = self.index().search(query, wanted);
        let tools: Vec<Value> = hits
            .iter()
            .filter(|hit| allowed(&self.catalog.tools()[hit.tool]))
            .take(limit)
            .map(|hit| {
                let tool = &self.catalog.tools()[hit.tool];
                let mut row = Map::new();
                row.insert("name".into(), json!(tool.name));
                row.insert("title".into(), json!(tool.title));
                row.insert("description".into(), json!(tool.summary));
                row.insert("toolset".into(), json!(tool.toolset));
                row.insert("read_only".into(), json!(tool.annotations.read_only));
                row.insert("destructive".into(), json!(tool.annotations.destructive));
                row.insert("arguments".into(), json!(tool.signature()));
                if let Some(via) = tool.via {
                    row.insert("call_with".into(), json!(via));
                }
                Value::Object(row)
            })
            .collect();
        let note = match (tools.is_empty(), self.surface) {
            (true, _) => {
                "No tool matches those words; try others (what you want to do, and to what)."
            }
            (false, Surface::Core) => {
                "Call a tool without `call_with` directly; call the others through the meta-tool `call_with` names, as {name, arguments}. describe_tools gives complete schemas."
            }
            (false, Surface::Full) => {
                "Call any of these directly; describe_tools gives complete schemas."
            }
        };
        json!({"query": query, "tools": tools, "note": note})
    }

    /// The `describe_tools` answer: the complete form of each named tool.
    fn describe(&self, names: &[String]) -> Result<Value, CallError> {
        if names.is_empty() || names.len() > surface::MAX_DESCRIBED {
            return Err(engine::Error::from(Invalid::DescribeCount {
                max: surface::MAX_DESCRIBED,
                given: names.len(),
            })
            .into());
        }
        let mut described = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            if let Some(meta) = Meta::named(name).filter(|m| self.offers(*m)) {
                described.push(json!({
                    "name": meta.name(),
                    "title": meta.title(),
                    "description": meta.description(),
                    "annotations": annotations_json(meta.annotations()),
                    "inputSchema": meta.input_schema(),
                }));
                continue;
            }
            match self.catalog.tool(name) {
                Some(tool) => {
                    let mut entry = json!({
                        "name": tool.name,
                        "title": tool.title,
                        "description": tool.description,
                        "toolset": tool.toolset,
                        "annotations": annotations_json(tool.annotations),
                        "inputSchema": tool.input_schema(Form::Complete),
                    });
                    if let Some(output) = tool.output_schema() {
                        entry["outputSchema"] = Value::Object(output);
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

/// Annotations as MCP names them.
fn annotations_json(a: engine::Annotations) -> Value {
    json!({
        "readOnlyHint": a.read_only,
        "destructiveHint": a.destructive,
        "idempotentHint": a.idempotent,
        "openWorldHint": a.open_world,
    })
}
