//! Routing a URI: which resource it names, and its variables, each checked against its rule.

use serde_json::Value;

use super::{Read, Resource, Shape};
use crate::engine::Catalog;
use crate::engine::bound::{LIMIT, PAGE, PageRequest};
use crate::engine::error::Error;
use crate::engine::request::Args;
use crate::engine::uri;

impl Catalog {
    /// Routes and validates `uri`: every refusal here happens before any upstream request.
    pub fn route(&self, raw: &str) -> Result<Read<'_>, Error> {
        let parsed =
            uri::parse(raw).map_err(|e| Error::invalid(format!("invalid URI `{raw}`: {e}")))?;
        let matched = self.router.at(&parsed.path).map_err(|_| {
            Error::invalid(format!(
                "no resource matches `{raw}`; resources/templates/list shows the URI templates served"
            ))
        })?;
        let resource = &self.resources[*matched.value];
        let mut args = Args::new();
        for (name, raw_value) in matched.params.iter() {
            let value = if resource.template.is_rest(name) {
                let parts: Result<Vec<_>, _> = raw_value.split('/').map(uri::decode).collect();
                parts
                    .map_err(|e| Error::invalid(format!("`{name}`: {e}")))?
                    .join("/")
            } else {
                uri::decode(raw_value)
                    .map_err(|e| Error::invalid(format!("`{name}`: {e}")))?
                    .into_owned()
            };
            args.insert(name.to_owned(), resource.check(name, &value)?);
        }
        for (name, value) in parsed.query {
            if !resource.template.query_vars().contains(&name) {
                let accepted = resource.template.query_vars().join(", ");
                let accepted = if accepted.is_empty() {
                    "none".to_owned()
                } else {
                    accepted
                };
                return Err(Error::invalid(format!(
                    "unknown query parameter `{name}` for {}; accepted: {accepted}",
                    resource.template.as_str()
                )));
            }
            let checked = resource.check(&name, &value)?;
            args.insert(name, checked);
        }
        for param in &resource.params {
            if let (false, Some(default)) = (args.contains_key(&param.name), &param.default) {
                args.insert(param.name.clone(), default.clone());
            }
        }
        if let Some(text) = &resource.text {
            text.check_range(&args)?;
        }
        let page = match &resource.shape {
            Shape::List { cap, .. } => Some(PageRequest::new(
                args.get(PAGE).and_then(Value::as_u64),
                args.get(LIMIT).and_then(Value::as_u64),
                *cap,
            )),
            Shape::Entity { .. } => None,
        };
        Ok(Read {
            catalog: self,
            resource,
            args,
            page,
        })
    }
}

impl Resource {
    fn check(&self, name: &str, value: &str) -> Result<Value, Error> {
        let param = self
            .params
            .iter()
            .find(|p| p.name == name)
            .expect("compile gives every template variable a rule");
        param.rule.check_text(value).map_err(|expected| {
            Error::invalid(format!("`{name}` must be {expected}; got `{value}`"))
        })
    }
}
