//! Whole-manifest guards and properties over the shipped manifests.

use std::sync::LazyLock;

use forgelens::engine::param::{Rule, RuleKind};
use forgelens::engine::{Answer, Catalog, Slot};
use forgelens::forge::Method;
use forgelens::forge::{Body, Response};
use forgelens::manifest::{self, Sources};
use proptest::prelude::*;

/// Every tool a sentinel can name (a list's or an embed's `tool:`) is declared in `tools.yaml`.
#[test]
fn every_fallback_tool_exists() {
    let manifests = manifest::parse(&Sources::builtin()).unwrap();
    let tools: Vec<&str> = manifests
        .tools
        .tools()
        .map(|(_, t)| t.name.value.as_str())
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
            tool.method() == Some(Method::Get),
            "{}",
            tool.name
        );
    }
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    forgelens::service::compile(&Sources::builtin()).expect("the built-in manifests compile")
});

/// The built-in manifests as the default surface (`core`) serves them: the tools it does not
/// list are reached through a meta-tool, and continuations say so.
static CORE: LazyLock<forgelens::service::Service> = LazyLock::new(|| {
    let flags = forgelens::config::Flags {
        url: Some("http://127.0.0.1:9".into()),
        ..Default::default()
    };
    let config =
        forgelens::config::Config::resolve(&flags, &|_| None).expect("the config resolves");
    forgelens::service::Service::start(&config, &Sources::builtin(), None)
        .expect("the service starts")
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

/// 1000 cases by default; `PROPTEST_CASES=100000` for the long run (docs/manifest-reference.md).
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000);
    ProptestConfig::with_cases(cases)
}

/// Text an agent (or an attacker) might splice into a URI.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just("%2e%2e".to_owned()),
        Just("%2F".to_owned()),
        Just("%252F".to_owned()),
        Just("/".to_owned()),
        Just("//".to_owned()),
        Just("%00".to_owned()),
        Just("?".to_owned()),
        Just("&".to_owned()),
        Just("#".to_owned()),
        Just("%".to_owned()),
        Just("\\".to_owned()),
        Just("ｌａｂｅｌ".to_owned()),
        Just("１２".to_owned()),
        "[a-z0-9./%?&=#-]{1,8}",
        ".{1,4}",
    ]
}

/// Every request the engine plans for `uri` is an instance of one of the manifest's request
/// templates, each variable in its own segment(s).
fn assert_confined(uri: &str) -> Result<(), TestCaseError> {
    let Ok(read) = CATALOG.route(uri) else {
        return Ok(());
    };
    let Ok(planned) = read.plan() else {
        return Ok(());
    };
    let templates: Vec<_> = CATALOG
        .resources()
        .iter()
        .flat_map(|r| r.request_templates())
        .collect();
    for p in planned {
        prop_assert!(
            templates.iter().any(|t| t.matches_path(&p.request.path)),
            "{} planned {}, which no manifest endpoint declares",
            uri,
            p.request.path
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// A valid URI with hostile text spliced in: refused, or confined to the manifest's
    /// endpoints.
    #[test]
    fn mutated_uris_stay_inside_the_manifest((index, values) in routed_values(), splice in hostile(), at in any::<prop::sample::Index>()) {
        let resource = &CATALOG.resources()[index];
        let uri = resource.template.expand(|v| values.iter().find(|(n, _)| n == v).map(|(_, x)| x.clone()));
        let cut = at.index(uri.len() + 1);
        let cut = (0..=cut).rev().find(|&i| uri.is_char_boundary(i)).unwrap_or(0);
        let mutated = format!("{}{}{}", &uri[..cut], splice, &uri[cut..]);
        assert_confined(&mutated)?;
        assert_confined(&uri)?;
    }

    /// The bounding contract, through the engine, in both surfaces: for any list size, page
    /// and limit, a page shows at most min(limit, cap) items, says more remain exactly when they
    /// do, names an existing tool (listed, or with the meta-tool that runs it) and the right
    /// next page in its sentinel, and consecutive pages cover the list once.
    #[test]
    fn pages_keep_the_bounding_contract(total in 0u64..150, limit in 1u64..80, server_side in any::<bool>(), core in any::<bool>()) {
        let catalog: &Catalog = if core { CORE.catalog() } else { &CATALOG };
        let uri = if server_side {
            "forgejo://repo/acme/widgets/issue/5/comments".to_owned()
        } else {
            "forgejo://repo/acme/widgets/labels".to_owned()
        };
        let mut seen = Vec::new();
        let mut page = 1;
        loop {
            let read = catalog.route(&format!("{uri}?page={page}&limit={limit}")).unwrap();
            let effective = limit.min(30);
            let all: Vec<serde_json::Value> = (1..=total).map(|i| serde_json::json!({"id": i, "name": format!("n{i}"), "pull_request": null})).collect();
            let answers: Vec<Answer> = read.plan().unwrap().into_iter().map(|p| {
                let body = match p.slot {
                    Slot::Primary(_) if server_side => serde_json::Value::Array(all.clone()),
                    Slot::Primary(_) => {
                        let start = ((page - 1) * effective) as usize;
                        serde_json::Value::Array(all.iter().skip(start).take(effective as usize).cloned().collect())
                    }
                    _ => serde_json::json!({"pull_request": null}),
                };
                Answer { slot: p.slot, result: Ok(Response { status: 200, total_count: (!server_side).then_some(total), has_next: None, body: Body::Json(body) }) }
            }).collect();
            let output = read.assemble(answers, &crate::support::serving()).unwrap();
            let value: serde_json::Value = serde_json::from_str(&output.blocks[0].text).unwrap();
            let items = value["items"].as_array().unwrap();
            prop_assert!(items.len() as u64 <= effective);
            seen.extend(items.iter().map(|i| i["id"].as_u64().unwrap()));
            let more = page * effective < total;
            prop_assert_eq!(value["has_more"].as_bool(), Some(more));
            match value.get("truncated").and_then(|t| t.as_str()) {
                Some(sentinel) => {
                    prop_assert!(more);
                    let tool = sentinel.split("Use ").nth(1).and_then(|s| s.split(' ').next()).unwrap();
                    let named = catalog.tool(tool);
                    prop_assert!(named.is_some(), "{} names no tool", sentinel);
                    // Listed, or named with the meta-tool that reaches it.
                    match named.and_then(|t| t.via) {
                        Some(via) => prop_assert!(sentinel.contains(&format!("(through {via})")), "{}", sentinel),
                        None => prop_assert!(!core || CORE.catalog().core.iter().any(|c| c == tool), "{}", sentinel),
                    }
                    let next_page = format!("page={} and limit={}", page + 1, effective);
                    prop_assert!(sentinel.contains(&next_page), "{}", sentinel);
                }
                None => prop_assert!(!more),
            }
            if !more {
                break;
            }
            page += 1;
        }
        prop_assert_eq!(seen, (1..=total).collect::<Vec<_>>());
    }

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
