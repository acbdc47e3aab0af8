//! What a configuration offers: the tools (and meta-tools) that read-only mode, the toolsets and
//! the disabled tools leave, and why each of the others is withheld.

use std::collections::HashMap;

use super::StartError;
use crate::catalog::path;
use crate::config::{CatalogSource, Config};
use crate::engine::Catalog;
use crate::forge::Method;
use crate::manifest::diagnostic::did_you_mean;
use crate::surface::Meta;

/// Removes the tools the configuration does not offer; an unknown name is an error that
/// suggests the nearest ones.
pub(super) fn filter_tools(
    catalog: &mut Catalog,
    config: &Config,
) -> Result<HashMap<String, String>, StartError> {
    if let Some(toolsets) = &config.toolsets {
        let unknown: Vec<&String> = toolsets
            .iter()
            .filter(|t| !catalog.toolsets.keys().any(|known| same_toolset(t, known)))
            .collect();
        if !unknown.is_empty() {
            let valid: Vec<&str> = catalog.toolsets.keys().map(String::as_str).collect();
            return Err(StartError::Filter(format!(
                "unknown toolset(s) {}; valid toolsets: {}",
                quoted(unknown.iter().map(|s| s.as_str())),
                valid.join(", ")
            )));
        }
    }
    let unknown: Vec<&String> = config
        .disabled_tools
        .iter()
        .filter(|t| catalog.tool(t).is_none() && Meta::named(t).is_none())
        .collect();
    if !unknown.is_empty() {
        let names = || {
            Meta::ALL
                .iter()
                .map(|m| m.name())
                .chain(catalog.tools().iter().map(|t| t.name.as_str()))
        };
        let named: Vec<String> = unknown
            .iter()
            .map(|name| format!("`{name}`{}", did_you_mean(name, names())))
            .collect();
        return Err(StartError::Filter(format!(
            "unknown tool(s) in the disabled tools: {}; `forgelens list tools` prints every name",
            named.join(", ")
        )));
    }
    // A catalog from the instance's own spec tells what its API has: a curated tool whose
    // operation the spec lacks (a newer forge's, or the other forge's) is not offered.
    let instance_ops: Option<Vec<(Method, String)>> = match config.catalog {
        Some(CatalogSource::Instance { .. }) => Some(
            catalog
                .tools()
                .iter()
                .filter(|t| t.generated)
                .filter_map(|t| Some((t.method()?, t.path_pattern())))
                .collect(),
        ),
        _ => None,
    };
    let lacks = |tool: &crate::engine::Tool| match (&instance_ops, tool.method()) {
        (Some(ops), Some(method)) if !tool.generated => {
            let ours = tool.path_pattern();
            !ops.iter()
                .any(|(m, path)| *m == method && path::covers(path, &ours))
        }
        _ => false,
    };
    let mut withheld = HashMap::new();
    for tool in catalog.tools() {
        // A read-only POST (rendering) still sends a POST, which read-only mode never does.
        let why = if config.read_only
            && !(tool.annotations.read_only && tool.method() == Some(Method::Get))
        {
            Some(match tool.method() {
                Some(Method::Get) => {
                    "forgelens runs read-only and this tool is not marked read-only".to_owned()
                }
                Some(other) => format!(
                    "forgelens runs read-only, sending only GET requests, and this tool calls {}",
                    other.as_str()
                ),
                None => "forgelens runs read-only and this tool may send any method".to_owned(),
            })
        } else if config
            .toolsets
            .as_ref()
            .is_some_and(|sets| !sets.iter().any(|set| same_toolset(set, &tool.toolset)))
        {
            Some(format!(
                "its toolset `{}` is not among the enabled toolsets",
                tool.toolset
            ))
        } else if config.disabled_tools.contains(&tool.name) {
            Some("it is disabled by the configuration".to_owned())
        } else if lacks(tool) {
            Some(format!(
                "the instance's API (its /swagger.v1.json) has no {}",
                tool.endpoint_line()
            ))
        } else {
            None
        };
        if let Some(why) = why {
            withheld.insert(tool.name.clone(), why);
        }
    }
    catalog.retain_tools(|t| !withheld.contains_key(&t.name));
    for meta in Meta::ALL {
        let why = if config.read_only && !meta.annotations().read_only {
            Some("forgelens runs read-only, and this meta-tool runs tools that change things")
        } else if config.disabled_tools.iter().any(|t| t == meta.name()) {
            Some("it is disabled by the configuration")
        } else {
            None
        };
        if let Some(why) = why {
            withheld.insert(meta.name().to_owned(), why.to_owned());
        }
    }
    Ok(withheld)
}

fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether two toolset names are one: the same, or one the plural of the other. Curated
/// toolsets are plural (`issues`, `pulls`, `repos`) and generated ones singular (`issue`,
/// `pull`, `repo`), so either spelling names both.
fn same_toolset(a: &str, b: &str) -> bool {
    a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a)
}
