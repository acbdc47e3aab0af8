//! The tool surface: which tools `tools/list` shows, and forgelens's own meta-tools.
//!
//! Every tool a server lists is pasted into the model's context, so the default surface is
//! small. `core` lists the tools `tools.yaml` names under `core:` and five meta-tools:
//! `search_tools` ranks every reachable tool for a task described in words, `describe_tools`
//! gives their complete schemas, `call_read_tool` and `call_write_tool` run any of them by name,
//! and `read_resource` reads a `forgejo://` URI for clients that do not read resources. The two
//! call tools are split so that a client that asks before destructive actions keeps asking:
//! nothing that changes the forge runs through a tool annotated as read-only. `full` lists every
//! reachable tool, with the meta-tools that still help there (search, describe, read). Either
//! way every reachable tool answers `tools/call` by its own name, and what is listed is the
//! lean form of each schema ([`Form::Lean`](crate::engine::tool::Form::Lean)).

use serde_json::{Map, Value, json};

use crate::config::Surface;
use crate::engine::Annotations;
use crate::engine::schema::{Schema, Violation};

/// forgelens's own tools, beside the manifest's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Meta {
    SearchTools,
    DescribeTools,
    CallReadTool,
    CallWriteTool,
    ReadResource,
}

/// The most results `search_tools` gives, and its default.
pub const MAX_SEARCH_RESULTS: u64 = 25;
pub const DEFAULT_SEARCH_RESULTS: u64 = 8;
/// The most tools one `describe_tools` call describes.
pub const MAX_DESCRIBED: usize = 10;

impl Meta {
    pub const ALL: [Meta; 5] = [
        Meta::SearchTools,
        Meta::DescribeTools,
        Meta::CallReadTool,
        Meta::CallWriteTool,
        Meta::ReadResource,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Meta::SearchTools => "search_tools",
            Meta::DescribeTools => "describe_tools",
            Meta::CallReadTool => "call_read_tool",
            Meta::CallWriteTool => "call_write_tool",
            Meta::ReadResource => "read_resource",
        }
    }

    pub fn named(name: &str) -> Option<Meta> {
        Meta::ALL.into_iter().find(|m| m.name() == name)
    }

    pub fn title(self) -> &'static str {
        match self {
            Meta::SearchTools => "Find tools for a task",
            Meta::DescribeTools => "Describe tools",
            Meta::CallReadTool => "Run a read-only tool",
            Meta::CallWriteTool => "Run a tool that changes things",
            Meta::ReadResource => "Read a forgejo:// resource",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Meta::SearchTools => {
                "Finds tools for a task described in words, among all this server has (listed or not): name, purpose, arguments, how to call each."
            }
            Meta::DescribeTools => {
                "The whole description and the arguments of the named tools; `complete` adds patterns, lengths and output schemas."
            }
            Meta::CallReadTool => {
                "Runs a read-only tool by name, exactly as calling it directly; refuses tools that change anything (use call_write_tool)."
            }
            Meta::CallWriteTool => {
                "Runs a tool that creates, changes or deletes something, by name, exactly as calling it directly."
            }
            Meta::ReadResource => {
                "Reads a forgejo:// URI (issue, pull request, commit, file…) with the same answer and errors as resources/read."
            }
        }
    }

    /// The complete input schema; `tools/list` shows its lean form.
    pub fn input_schema(self) -> Map<String, Value> {
        let schema = match self {
            Meta::SearchTools => json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": 500,
                        "description": "The task, in your own words."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS,
                        "default": DEFAULT_SEARCH_RESULTS},
                },
                "required": ["query"],
                "additionalProperties": false,
            }),
            Meta::DescribeTools => json!({
                "type": "object",
                "properties": {
                    "names": {"type": "array", "maxItems": MAX_DESCRIBED,
                        "items": {"type": "string", "maxLength": 64}},
                    "complete": {"type": "boolean", "default": false},
                },
                "required": ["names"],
                "additionalProperties": false,
            }),
            Meta::CallReadTool | Meta::CallWriteTool => json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 64},
                    "arguments": {"type": "object",
                        "description": "The tool's own arguments."},
                },
                "required": ["name"],
                "additionalProperties": false,
            }),
            Meta::ReadResource => json!({
                "type": "object",
                "properties": {
                    "uri": {"type": "string", "maxLength": 4096,
                        "description": "A forgejo:// URI, e.g. forgejo://repo/{owner}/{repo}/issue/{index}."},
                },
                "required": ["uri"],
                "additionalProperties": false,
            }),
        };
        schema
            .as_object()
            .cloned()
            .expect("every meta-tool schema is an object literal")
    }

    /// The checker of the arguments, from [`Meta::input_schema`].
    pub fn check(self, arguments: &Map<String, Value>) -> Result<(), Violation> {
        let schema = Schema::compile(&self.input_schema())
            .expect("the meta-tools' schemas are valid literals");
        schema.check(&Value::Object(arguments.clone()))
    }

    pub fn annotations(self) -> Annotations {
        let read = Annotations {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        };
        match self {
            Meta::SearchTools | Meta::DescribeTools => read,
            Meta::CallReadTool | Meta::ReadResource => Annotations {
                open_world: true,
                ..read
            },
            Meta::CallWriteTool => Annotations {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
            },
        }
    }

    /// Whether `tools/list` shows it in `surface` (when it is offered at all). In `full` every
    /// tool is listed, so the call tools would only repeat them.
    pub fn listed_in(self, surface: Surface) -> bool {
        match surface {
            Surface::Core => true,
            Surface::Full => !matches!(self, Meta::CallReadTool | Meta::CallWriteTool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_schemas_compile() {
        for meta in Meta::ALL {
            assert_eq!(Meta::named(meta.name()), Some(meta));
            assert!(Schema::compile(&meta.input_schema()).is_ok(), "{meta:?}");
        }
        assert_eq!(Meta::named("get_issue"), None);
    }

    #[test]
    fn only_the_write_runner_is_destructive() {
        for meta in Meta::ALL {
            let a = meta.annotations();
            assert_eq!(a.destructive, meta == Meta::CallWriteTool, "{meta:?}");
            assert_eq!(a.read_only, meta != Meta::CallWriteTool, "{meta:?}");
        }
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let args = |v: Value| v.as_object().cloned().unwrap();
        assert!(
            Meta::SearchTools
                .check(&args(json!({"query": "x"})))
                .is_ok()
        );
        assert!(Meta::SearchTools.check(&args(json!({}))).is_err());
        assert!(
            Meta::SearchTools
                .check(&args(json!({"query": "x", "limit": 99})))
                .is_err()
        );
        assert!(
            Meta::CallReadTool
                .check(&args(json!({"name": "x", "extra": 1})))
                .is_err()
        );
    }
}
