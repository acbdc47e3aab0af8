//! Whole-manifest guards and properties over the shipped manifests.

use std::sync::LazyLock;

use forgelens::engine::Catalog;
use forgelens::engine::param::{Rule, RuleKind};
use forgelens::forge::Method;
use forgelens::manifest::{self, Sources};
use proptest::prelude::*;

/// Every tool a sentinel can name (a list's or an embed's `tool:`) is declared in `tools.yaml`.
#[test]
fn every_fallback_tool_exists() {
    let manifests = manifest::parse(&Sources::builtin()).unwrap();
    let tools: Vec<&str> = manifests
        .tools
        .tools
        .iter()
        .map(|t| t.name.value.as_str())
        .collect();
    let mut named = Vec::new();
    for r in &manifests.resources.resources {
        if let Some(list) = &r.list {
            named.push(list.value.tool.value.as_str());
        }
        named.extend(r.embed.values().map(|e| e.value.tool.value.as_str()));
    }
    assert!(!named.is_empty());
    for tool in named {
        assert!(
            tools.contains(&tool),
            "a sentinel names `{tool}`, which tools.yaml does not declare"
        );
    }
}

/// Every GET tool is read-only and no tool with another method is.
#[test]
fn read_only_hint_follows_the_method() {
    let catalog = forgelens::service::compile(&Sources::builtin()).unwrap();
    assert!(!catalog.tools().is_empty());
    for tool in catalog.tools() {
        assert_eq!(
            tool.annotations.read_only,
            tool.method() == Method::Get,
            "{}",
            tool.name
        );
    }
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
});

/// Values a rule accepts, generated from the rule itself.
fn values_of(rule: &Rule) -> BoxedStrategy<String> {
    match &rule.kind {
        RuleKind::Integer { minimum, maximum } => {
            let lo = minimum.unwrap_or(i64::MIN / 2);
            let hi = maximum.unwrap_or(i64::MAX / 2);
            (lo..=hi).prop_map(|n| n.to_string()).boxed()
        }
        RuleKind::Text {
            values: Some(values),
            ..
        } => proptest::sample::select(values.clone()).boxed(),
        RuleKind::Text {
            pattern,
            max_length,
            ..
        } => {
            let source = pattern.as_ref().map_or(".+".to_owned(), |p| {
                let s = p.as_str();
                s.strip_prefix("^(?:")
                    .and_then(|s| s.strip_suffix(")$"))
                    .unwrap_or(s)
                    .to_owned()
            });
            let max = max_length.unwrap_or(200);
            proptest::string::string_regex(&source)
                .expect("rule patterns are proptest regexes")
                .prop_filter("a valid value", move |s| {
                    s.chars().count() <= max && s != "." && s != ".." && !s.is_empty()
                })
                .boxed()
        }
    }
}

/// Whether a URI can carry `value` in `var`: one segment holds no `/`; a `{+path}` holds no
/// empty, `.` or `..` segment.
fn addressable(
    template: &forgelens::engine::template::UriTemplate,
    var: &str,
    value: &str,
) -> bool {
    let segment_ok = |s: &str| !s.is_empty() && s != "." && s != "..";
    if template.is_rest(var) {
        value.split('/').all(segment_ok)
    } else if template.path_vars().any(|v| v == var) {
        !value.contains('/') && segment_ok(value)
    } else {
        true
    }
}

/// A resource index and a valid value for each of its variables.
fn routed_values() -> impl Strategy<Value = (usize, Vec<(String, String)>)> {
    (0..CATALOG.resources().len()).prop_flat_map(|i| {
        let values: Vec<BoxedStrategy<(String, String)>> = CATALOG.resources()[i]
            .params()
            .iter()
            .map(|p| {
                let name = p.name.clone();
                let var = p.name.clone();
                values_of(&p.rule)
                    .prop_filter("addressable in a URI", move |v| {
                        addressable(&CATALOG.resources()[i].template, &var, v)
                    })
                    .prop_map(move |v| (name.clone(), v))
                    .boxed()
            })
            .collect();
        (Just(i), values)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Random valid values expand through each template and route back to the same resource
    /// with the same values.
    #[test]
    fn templates_round_trip((index, mut values) in routed_values()) {
        let resource = &CATALOG.resources()[index];
        // A range runs forwards: order a generated start and end line.
        let line = |values: &[(String, String)], name: &str| values.iter().position(|(n, _)| n == name);
        if let (Some(s), Some(e)) = (line(&values, "start_line"), line(&values, "end_line"))
            && values[s].1.parse::<u64>().ok() > values[e].1.parse::<u64>().ok()
        {
            let start = values[s].1.clone();
            values[s].1 = std::mem::replace(&mut values[e].1, start);
        }
        let uri = resource.template.expand(|v| values.iter().find(|(n, _)| n == v).map(|(_, x)| x.clone()));
        let read = CATALOG.route(&uri).unwrap_or_else(|e| panic!("{uri}: {e}"));
        prop_assert_eq!(&read.resource.name, &resource.name);
        for (name, value) in &values {
            let got = match &read.args[name] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            prop_assert_eq!(&got, value, "{}", uri);
        }
    }

    /// Arbitrary text never panics the parser or the router.
    #[test]
    fn arbitrary_uris_never_panic(tail in ".{0,200}") {
        let _ = CATALOG.route(&format!("forgejo://{tail}"));
        let _ = CATALOG.route(&tail);
    }
}
