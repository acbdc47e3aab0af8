//! The parts of a Swagger 2.0 document the generator reads: each operation's method, path,
//! operationId, parameters (with their types) and media types, and the definitions a body
//! refers to. Everything else is ignored; unknown keys are allowed, since real specs carry many.
//!
//! `summary` is read only so a user's own spec can show it at run time; the generator never
//! writes a spec's text unless asked to (`Options::summaries`).

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use super::CatalogError;
use crate::forge::Method;

/// The document.
#[derive(Debug, Deserialize)]
pub struct Spec {
    /// `2.0`; OpenAPI 3 documents have none.
    pub swagger: Option<String>,
    #[serde(rename = "basePath")]
    pub base_path: Option<String>,
    #[serde(default)]
    pub info: Info,
    #[serde(default)]
    pub paths: IndexMap<String, PathItem>,
    /// Schemas by name, as the spec wrote them (`$ref: '#/definitions/Name'`).
    #[serde(default)]
    pub definitions: IndexMap<String, Value>,
    /// Shared parameters (`$ref: '#/parameters/Name'`).
    #[serde(default)]
    pub parameters: IndexMap<String, Parameter>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Info {
    /// The API version, e.g. `15.0.3+gitea-1.22.0`.
    pub version: Option<String>,
}

/// The operations of one path. HEAD and OPTIONS are not read: the engine has no such methods.
#[derive(Debug, Deserialize)]
pub struct PathItem {
    pub get: Option<Operation>,
    pub put: Option<Operation>,
    pub post: Option<Operation>,
    pub delete: Option<Operation>,
    pub patch: Option<Operation>,
    /// Parameters every operation of the path shares.
    #[serde(default)]
    pub parameters: Vec<ParamOrRef>,
}

impl PathItem {
    /// The operations, in a fixed method order.
    pub fn operations(&self) -> impl Iterator<Item = (Method, &Operation)> {
        [
            (Method::Get, &self.get),
            (Method::Post, &self.post),
            (Method::Put, &self.put),
            (Method::Patch, &self.patch),
            (Method::Delete, &self.delete),
        ]
        .into_iter()
        .filter_map(|(m, op)| op.as_ref().map(|op| (m, op)))
    }
}

#[derive(Debug, Deserialize)]
pub struct Operation {
    #[serde(rename = "operationId")]
    pub operation_id: Option<String>,
    pub summary: Option<String>,
    #[serde(default)]
    pub consumes: Vec<String>,
    #[serde(default)]
    pub produces: Vec<String>,
    #[serde(default)]
    pub parameters: Vec<ParamOrRef>,
    #[serde(default)]
    pub deprecated: bool,
}

/// A parameter, or a reference to a shared one.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ParamOrRef {
    Ref {
        #[serde(rename = "$ref")]
        reference: String,
    },
    Param(Box<Parameter>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct Parameter {
    pub name: String,
    /// `path`, `query`, `body`, `formData` or `header`.
    #[serde(rename = "in")]
    pub location: String,
    #[serde(default)]
    pub required: bool,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub format: Option<String>,
    pub items: Option<Value>,
    #[serde(rename = "collectionFormat")]
    pub collection_format: Option<String>,
    #[serde(rename = "enum")]
    pub values: Option<Vec<Value>>,
    pub default: Option<Value>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    /// The schema of a `body` parameter.
    pub schema: Option<Value>,
}

impl Spec {
    /// Parses a spec, refusing anything but Swagger 2.0 served under `/api/v1`.
    pub fn parse(text: &str) -> Result<Spec, CatalogError> {
        let spec: Spec =
            serde_json::from_str(text).map_err(|e| CatalogError::Spec(e.to_string()))?;
        if spec.swagger.as_deref() != Some("2.0") {
            return Err(CatalogError::Spec(format!(
                "`swagger` is {}; only Swagger 2.0 documents are read",
                spec.swagger
                    .as_deref()
                    .map_or("missing".to_owned(), |v| format!("`{v}`"))
            )));
        }
        if let Some(base) = &spec.base_path
            && base.trim_end_matches('/') != "/api/v1"
        {
            return Err(CatalogError::Spec(format!(
                "`basePath` is `{base}`; forgelens calls the API under `/api/v1`"
            )));
        }
        Ok(spec)
    }

    /// The parameters of `op` on `item`: the path's, replaced by the operation's of the same
    /// name and location, with references resolved.
    pub fn parameters(
        &self,
        item: &PathItem,
        op: &Operation,
    ) -> Result<Vec<Parameter>, CatalogError> {
        let mut out: Vec<Parameter> = Vec::new();
        for p in item.parameters.iter().chain(&op.parameters) {
            let param = match p {
                ParamOrRef::Param(param) => (**param).clone(),
                ParamOrRef::Ref { reference } => reference
                    .strip_prefix("#/parameters/")
                    .and_then(|name| self.parameters.get(name))
                    .cloned()
                    .ok_or_else(|| {
                        CatalogError::Spec(format!(
                            "parameter reference `{reference}` resolves to nothing"
                        ))
                    })?,
            };
            out.retain(|q| !(q.name == param.name && q.location == param.location));
            out.push(param);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_other_versions_and_base_paths() {
        assert!(Spec::parse(r#"{"swagger": "2.0", "basePath": "/api/v1", "paths": {}}"#).is_ok());
        for bad in [
            r#"{"openapi": "3.0.0"}"#,
            r#"{"swagger": "1.2"}"#,
            r#"{"swagger": "2.0", "basePath": "/api/v2"}"#,
            "not json",
        ] {
            assert!(
                matches!(Spec::parse(bad), Err(CatalogError::Spec(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn operation_parameters_replace_the_path_ones_and_references_resolve() {
        let spec = Spec::parse(
            r##"{"swagger": "2.0",
                "parameters": {"Page": {"name": "page", "in": "query", "type": "integer"}},
                "paths": {"/a/{id}": {
                    "parameters": [{"name": "id", "in": "path", "type": "string", "required": true}],
                    "get": {"operationId": "getA", "parameters": [
                        {"name": "id", "in": "path", "type": "integer", "required": true},
                        {"$ref": "#/parameters/Page"}]}}}}"##,
        )
        .unwrap();
        let item = &spec.paths["/a/{id}"];
        let (method, op) = item.operations().next().unwrap();
        assert_eq!(method, Method::Get);
        let params = spec.parameters(item, op).unwrap();
        let shown: Vec<(&str, Option<&str>)> = params
            .iter()
            .map(|p| (p.name.as_str(), p.kind.as_deref()))
            .collect();
        assert_eq!(shown, [("id", Some("integer")), ("page", Some("integer"))]);
    }
}
