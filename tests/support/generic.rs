//! Generated tools for the tests: a small Swagger spec with one GET operation per path, its
//! catalog written by forgelens's own generator, and the name it gave each operation's tool.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A Swagger 2.0 spec with a GET operation for each path template (`/repos/{owner}/…`), its
/// path parameters strings, and `query` parameters for those named after `?`.
pub fn spec(paths: &[&str]) -> String {
    let mut operations = serde_json::Map::new();
    for (i, template) in paths.iter().enumerate() {
        let (path, query) = template.split_once('?').unwrap_or((template, ""));
        let mut parameters: Vec<Value> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "type": "string"}))
            .collect();
        parameters.extend(
            query
                .split('&')
                .filter(|q| !q.is_empty())
                .map(|name| json!({"name": name, "in": "query", "type": "string"})),
        );
        operations.insert(
            path.to_owned(),
            json!({"get": {
                "operationId": format!("repoGetThing{i:02}"),
                "tags": ["repository"],
                "parameters": parameters,
                "responses": {"200": {"description": "the forge's answer"}},
            }}),
        );
    }
    json!({"swagger": "2.0", "basePath": "/api/v1", "info": {"version": "1"}, "paths": operations})
        .to_string()
}

/// Writes the catalog of [`spec`]`(paths)` in `dir`; returns its file and, for each path
/// template (without its query), the generated tool's name.
pub fn catalog(dir: &Path, paths: &[&str]) -> (PathBuf, HashMap<String, String>) {
    let (_, yaml) = forgelens::catalog::generate_text(&spec(paths), Default::default())
        .expect("the spec generates a catalog");
    let file = dir.join("catalog.yaml");
    std::fs::write(&file, &yaml).expect("the catalog is written");
    let mut names = HashMap::new();
    let mut name = None;
    for line in yaml.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("- name: ") {
            name = Some(n.to_owned());
        } else if let (Some(call), Some(n)) = (line.strip_prefix("call: GET "), &name) {
            let path = call.split('?').next().unwrap_or(call).replace("{+", "{");
            names.insert(path, n.clone());
        }
    }
    (file, names)
}
