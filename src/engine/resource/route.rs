//! Routing a URI: which resource it names, and its variables, each checked against its rule.

use serde_json::Value;

use super::{Read, Resource, Shape};
use crate::engine::Catalog;
use crate::engine::bound::{LIMIT, PAGE, PageRequest};
use crate::engine::error::{Error, Invalid};
use crate::engine::request::Args;
use crate::engine::uri;

impl Catalog {
    /// Routes and validates `uri`: every refusal here happens before any upstream request.
    pub fn route(&self, raw: &str) -> Result<Read<'_>, Error> {
        let parsed = uri::parse(raw).map_err(|why| Invalid::Uri {
            uri: raw.to_owned(),
            why,
        })?;
        let matched = self
            .router
            .at(&parsed.path)
            .map_err(|_| Invalid::NoResource(raw.to_owned()))?;
        let resource = &self.resources[*matched.value];
        if let Some(why) = &resource.withheld {
            return Err(Invalid::Withheld {
                resource: resource.name.clone(),
                why: why.clone(),
            }
            .into());
        }
        let mut args = Args::new();
        for (name, raw_value) in matched.params.iter() {
            let value = if resource.template.is_rest(name) {
                let parts: Result<Vec<_>, _> = raw_value.split('/').map(uri::decode).collect();
                parts.map_err(|why| encoding(name, why))?.join("/")
            } else {
                uri::decode(raw_value)
                    .map_err(|why| encoding(name, why))?
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
                return Err(Invalid::UnknownQuery {
                    name,
                    template: resource.template.as_str().to_owned(),
                    accepted,
                }
                .into());
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
        param.rule.check_text(value).map_err(|why| {
            Invalid::Variable {
                name: name.to_owned(),
                why,
                value: value.to_owned(),
            }
            .into()
        })
    }
}

fn encoding(name: &str, why: crate::engine::uri::UriError) -> Invalid {
    Invalid::Encoding {
        name: name.to_owned(),
        why,
    }
}
