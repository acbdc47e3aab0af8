//! The token never appears anywhere but in the `Authorization` header sent to the forge: not in
//! a log line (even at trace level), an error message or a result.

use serde_json::json;

use crate::support::fake_forge::{NO_SCOPE_TOKEN, Reply};
use crate::support::{FakeForge, Launch};

#[tokio::test]
async fn the_token_appears_in_no_log_error_or_result() {
    let forge = FakeForge::standard().await;
    forge.route(
        "GET",
        "/repos/acme/widgets/labels/500",
        Reply::Status(500, json!({"message": "boom"})),
    );
    let server = Launch::new(&forge)
        .token(NO_SCOPE_TOKEN)
        .env("RUST_LOG", "trace")
        .spawn()
        .await;
    let mut seen = Vec::new();
    for uri in [
        "forgejo://repo/acme/secret/label/7",
        "forgejo://repo/acme/widgets/label/404",
        "forgejo://repo/acme/widgets/label/500",
        "forgejo://repo/acme/widgets/label/abc",
    ] {
        let err = server.read(uri).await.unwrap_err();
        seen.push(format!("{err:?}"));
    }
    for (tool, args) in [
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "secret"}),
        ),
        (
            "get_repo_label",
            json!({"owner": "acme", "repo": "widgets", "id": 404}),
        ),
        (
            "list_repo_labels",
            json!({"owner": "acme", "repo": "widgets", "limit": "x"}),
        ),
    ] {
        let result = server.call(tool, args).await;
        seen.push(format!("{result:?}"));
    }
    let ok = server
        .read("forgejo://repo/acme/widgets/labels")
        .await
        .unwrap();
    seen.push(format!("{ok:?}"));
    // The token did travel, where it belongs.
    assert!(
        forge
            .requests()
            .iter()
            .any(|r| r.header("authorization") == Some(&format!("token {NO_SCOPE_TOKEN}")))
    );
    let log = server.finish().await;
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "the log ran at trace level"
    );
    for text in seen.iter().chain(std::iter::once(&log)) {
        assert!(!text.contains(NO_SCOPE_TOKEN), "the token leaked: {text}");
    }
}
