//! The OAuth sign-in, through the binary: forgelens as the authorization server of MCP
//! clients in front of the fake forge's OAuth2 provider. First the whole sign-in with rmcp's
//! own OAuth client (discovery from the first `401`, registration, PKCE, the token, a tool
//! call), then each refusal a security reviewer asks for, driven by hand as a browser and a
//! client would; every test collects what the server sent and its log, and no forge token or
//! secret may appear in any of it.

use std::sync::{Arc, Mutex};

use reqwest::header::{self, HeaderMap};
use serde_json::{Value, json};

use crate::support::fake_forge::{FakeForge, Reply};
use crate::support::fake_oauth::{ACCESS_PREFIX, APP_ID, APP_SECRET, REFRESH_PREFIX};
use crate::support::proxy::Proxy;
use crate::support::{HttpServer, Launch, modern_request};

/// Where the hand-driven client says it wants the user sent back.
const CLIENT_REDIRECT: &str = "http://127.0.0.1:9/callback";
/// A PKCE verifier and its S256 challenge (RFC 7636's example).
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const KEY: &[u8] = b"0123456789abcdef0123456789abcdef-test-key";

/// A forge, forgelens signing users in at it (one process, or replicas behind a round-robin
/// proxy), and everything the tests received.
pub(crate) struct World {
    pub(crate) forge: FakeForge,
    servers: Vec<HttpServer>,
    /// Where each process listens; with replicas, the proxy listens at `base`.
    ports: Vec<u16>,
    proxy: Option<Proxy>,
    pub(crate) base: String,
    dir: tempfile::TempDir,
    args: Vec<String>,
    /// Every status line, header and body the test received from forgelens.
    seen: Arc<Mutex<String>>,
    http: reqwest::Client,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl World {
    async fn start(extra: &[&str]) -> World {
        let port = free_port();
        World::build(vec![port], None, extra).await
    }

    /// `count` processes sharing the store at `store` (a `redis://` URL), behind a proxy that
    /// hands each request to the next one in turn.
    pub(crate) async fn replicated(count: usize, store: &str, extra: &[&str]) -> World {
        let ports = (0..count).map(|_| free_port()).collect();
        let proxy = Proxy::start().await;
        let mut args = vec!["--store", store];
        args.extend(extra);
        World::build(ports, Some(proxy), &args).await
    }

    async fn build(ports: Vec<u16>, proxy: Option<Proxy>, extra: &[&str]) -> World {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let forge = FakeForge::standard().await;
        forge.route(
            "GET",
            "/user",
            Reply::Json(json!({"id": 1, "login": "alice", "full_name": "Alice"})),
        );
        forge.route(
            "POST",
            "/repos/acme/widgets/labels",
            Reply::Json(json!({"id": 9, "name": "new", "color": "00aabb"})),
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("key"), KEY).unwrap();
        std::fs::write(dir.path().join("secret"), format!("{APP_SECRET}\n")).unwrap();
        let base = match &proxy {
            Some(proxy) => proxy.base.clone(),
            None => format!("http://127.0.0.1:{}", ports[0]),
        };
        forge.oauth_app(&format!("{base}/callback"));
        let d = |name: &str| dir.path().join(name).display().to_string();
        let mut args: Vec<String> = [
            "--oauth",
            "--public-url",
            &base,
            "--forge-client-id",
            APP_ID,
            "--forge-client-secret-file",
            &d("secret"),
            "--oauth-key-file",
            &d("key"),
            "--tool-surface",
            "full",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        if !args.iter().any(|a| a == "--store") {
            args.extend(["--store".to_owned(), d("store.json")]);
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut world = World {
            forge,
            servers: Vec::new(),
            ports,
            proxy,
            base,
            dir,
            args,
            seen: Arc::default(),
            http,
        };
        world.launch().await;
        world
    }

    async fn launch(&mut self) {
        for port in self.ports.clone() {
            let mut launch = Launch::new(&self.forge)
                .arg("--http")
                .arg(&format!("127.0.0.1:{port}"));
            for arg in &self.args {
                launch = launch.arg(arg);
            }
            let server = launch.start_http().await;
            if let Some(proxy) = &self.proxy {
                proxy.add(&server.base);
            }
            self.servers.push(server);
        }
    }

    async fn restart(&mut self) {
        // Each old process has exited, and freed its port, when its log is whole.
        for server in std::mem::take(&mut self.servers) {
            let log = server.finish().await;
            self.seen.lock().unwrap().push_str(&log);
        }
        self.launch().await;
    }

    /// How many requests each process behind the proxy was handed.
    pub(crate) fn spread(&self) -> Vec<usize> {
        self.proxy.as_ref().map(Proxy::spread).unwrap_or_default()
    }

    /// Keeps what a response said, for the leak check; gives it back as status, headers, text.
    async fn keep(&self, response: reqwest::Response) -> (u16, HeaderMap, String) {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        let mut seen = self.seen.lock().unwrap();
        seen.push_str(&format!("{status}\n{headers:?}\n{text}\n"));
        (status, headers, text)
    }

    pub(crate) async fn get(&self, url: &str, cookie: Option<&str>) -> (u16, HeaderMap, String) {
        let mut request = self.http.get(url);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        self.keep(request.send().await.unwrap()).await
    }

    pub(crate) async fn form(&self, path: &str, form: &[(&str, &str)]) -> (u16, HeaderMap, String) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .form(form)
            .send()
            .await
            .unwrap();
        self.keep(response).await
    }

    /// Registers a client (RFC 7591) with `redirect`; its client_id.
    async fn register(&self, redirect: &str) -> String {
        let response = self
            .http
            .post(format!("{}/register", self.base))
            .json(&json!({"client_name": "Test client", "redirect_uris": [redirect]}))
            .send()
            .await
            .unwrap();
        let (status, _, text) = self.keep(response).await;
        assert_eq!(status, 201, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        answer["client_id"].as_str().unwrap().to_owned()
    }

    /// `/authorize` for `client_id` with the test's PKCE challenge.
    fn authorize_url(&self, client_id: &str, redirect: &str, extra: &[(&str, &str)]) -> String {
        let mut url = reqwest::Url::parse(&format!("{}/authorize", self.base)).unwrap();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", "client-state-1")
            .append_pair("resource", &format!("{}/mcp", self.base));
        for (k, v) in extra {
            url.query_pairs_mut().append_pair(k, v);
        }
        url.to_string()
    }

    /// A browser through the consent page ("allow"), the forge and the callback; the
    /// client's redirect with its code. Counts the pages shown.
    async fn browse(&self, authorize_url: &str) -> Browsed {
        let (status, headers, page) = self.get(authorize_url, None).await;
        assert_eq!(status, 200, "the consent page: {page}");
        let cookie = consent_cookie(&headers);
        let pending = hidden(&page, "pending");
        let csrf = hidden(&page, "csrf");
        let response = self
            .http
            .post(format!("{}/consent", self.base))
            .header(header::COOKIE, &cookie)
            .form(&[
                ("pending", pending.as_str()),
                ("csrf", &csrf),
                ("decision", "allow"),
            ])
            .send()
            .await
            .unwrap();
        let (status, headers, text) = self.keep(response).await;
        assert_eq!(status, 303, "{text}");
        let to_forge = location(&headers);
        assert!(to_forge.starts_with(&self.forge.url()), "{to_forge}");
        // The forge's own answer is not forgelens's: kept out of what the leak check reads.
        let at_forge = self.http.get(&to_forge).send().await.unwrap();
        let (status, headers) = (at_forge.status().as_u16(), at_forge.headers().clone());
        assert_eq!(status, 302, "the fake forge consents at once");
        let callback = location(&headers);
        let (status, headers, text) = self.get(&callback, None).await;
        assert_eq!(status, 303, "{text}");
        Browsed {
            redirect: location(&headers),
            pages: 1,
            to_forge,
        }
    }

    /// A whole hand-driven sign-in with `scope`: the tokens answer.
    pub(crate) async fn sign_in(&self, scope: Option<&str>) -> (String, Value) {
        let client = self.register(CLIENT_REDIRECT).await;
        let extra: Vec<(&str, &str)> = scope.map(|s| ("scope", s)).into_iter().collect();
        let browsed = self
            .browse(&self.authorize_url(&client, CLIENT_REDIRECT, &extra))
            .await;
        let code = param(&browsed.redirect, "code")
            .unwrap_or_else(|| panic!("a code: {}", browsed.redirect));
        let tokens = self.trade(&client, &code, VERIFIER).await;
        assert_eq!(tokens.0, 200, "{}", tokens.1);
        (client, tokens.1)
    }

    async fn trade(&self, client: &str, code: &str, verifier: &str) -> (u16, Value) {
        let (status, _, text) = self
            .form(
                "/token",
                &[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", CLIENT_REDIRECT),
                    ("client_id", client),
                    ("code_verifier", verifier),
                ],
            )
            .await;
        (status, serde_json::from_str(&text).unwrap())
    }

    pub(crate) async fn refresh(&self, client: &str, refresh: &str) -> (u16, Value) {
        let (status, _, text) = self
            .form(
                "/token",
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", refresh),
                    ("client_id", client),
                ],
            )
            .await;
        (status, serde_json::from_str(&text).unwrap())
    }

    /// One stateless MCP request with `bearer`: status, `WWW-Authenticate`, the answer.
    pub(crate) async fn mcp(
        &self,
        bearer: Option<&str>,
        method: &str,
        params: Value,
    ) -> (u16, String, Value) {
        let mut request = modern_request(&self.http, &self.base, method, params);
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        let (status, headers, text) = self.keep(request.send().await.unwrap()).await;
        let challenge = headers
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (
            status,
            challenge,
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }

    /// Fails when any forge token, refresh token or the application's secret appears in what
    /// forgelens sent or logged, or unsealed in its store. It stops the servers first, so that
    /// every line they logged is read.
    pub(crate) async fn assert_no_forge_secret(self) {
        let mut all = self.seen.lock().unwrap().clone();
        for server in self.servers {
            all.push_str(&server.finish().await);
        }
        all.push_str(&String::from_utf8_lossy(
            &std::fs::read(self.dir.path().join("store.json")).unwrap_or_default(),
        ));
        for secret in [ACCESS_PREFIX, REFRESH_PREFIX, APP_SECRET] {
            assert!(!all.contains(secret), "`{secret}` left the server:\n{all}");
        }
    }
}

struct Browsed {
    /// Where the client was sent back to, with its code.
    redirect: String,
    /// HTML pages forgelens showed on the way.
    pages: usize,
    to_forge: String,
}

fn location(headers: &HeaderMap) -> String {
    headers
        .get(header::LOCATION)
        .expect("a redirect")
        .to_str()
        .unwrap()
        .to_owned()
}

fn consent_cookie(headers: &HeaderMap) -> String {
    let set = headers
        .get(header::SET_COOKIE)
        .expect("the consent page sets its cookie")
        .to_str()
        .unwrap();
    set.split(';').next().unwrap().to_owned()
}

fn hidden(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page.find(&marker).expect("the hidden field") + marker.len();
    page[start..][..page[start..].find('"').unwrap()].to_owned()
}

fn param(url: &str, name: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn tool_names(answer: &Value) -> Vec<String> {
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tools list: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_real_mcp_clients_oauth_flow_signs_in_and_calls_a_tool_with_the_users_forge_token() {
    use rmcp::service::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let world = World::start(&[]).await;
    let mcp = format!("{}/mcp", world.base);
    // The first request, without a token: the challenge the client starts from.
    let (status, challenge, _) = world.mcp(None, "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            world.base
        )),
        "{challenge}"
    );
    let mut state = OAuthState::new(mcp.as_str(), None).await.unwrap();
    let redirect = "http://127.0.0.1:9/rmcp-callback";
    state
        .start_authorization(
            AuthorizationRequest::new(redirect)
                .with_client_name("rmcp test client")
                .with_scopes(["read:issue", "read:repository"])
                .with_challenge(challenge),
        )
        .await
        .expect("discovery and registration");
    let OAuthState::Session(session) = &state else {
        panic!("a session after start_authorization");
    };
    let authorize = session.get_authorization_url().to_owned();
    assert!(
        authorize.starts_with(&format!("{}/authorize", world.base)),
        "{authorize}"
    );
    let browsed = world.browse(&authorize).await;
    assert_eq!(
        browsed.pages, 1,
        "forgelens shows its consent page and no other"
    );
    let asked = param(&browsed.to_forge, "scope").unwrap();
    assert_eq!(
        asked, "read:issue read:repository",
        "the forge is asked by name"
    );
    assert!(
        browsed.redirect.starts_with(redirect),
        "{}",
        browsed.redirect
    );
    assert_eq!(
        param(&browsed.redirect, "iss").as_deref(),
        Some(world.base.as_str())
    );
    state
        .handle_callback_url(&browsed.redirect)
        .await
        .expect("the code is traded for tokens");
    let manager = state.into_authorization_manager().expect("authorized");
    let client = AuthClient::new(reqwest::Client::default(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(mcp.as_str()),
    );
    let running = ().serve(transport).await.expect("the MCP handshake, signed in");
    let tools = running.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"list_repo_labels"), "{names:?}");
    assert!(
        !names.contains(&"create_repo_label") && !names.contains(&"call_write_tool"),
        "a read-only sign-in is offered no write tool: {names:?}"
    );
    let mut args = serde_json::Map::new();
    args.insert("owner".into(), json!("acme"));
    args.insert("repo".into(), json!("widgets"));
    let result = running
        .call_tool(rmcp::model::CallToolRequestParams::new("list_repo_labels").with_arguments(args))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    running.cancel().await.unwrap();
    let used: Vec<String> = world
        .forge
        .requests()
        .iter()
        .filter(|r| r.path == "/repos/acme/widgets/labels")
        .filter_map(|r| r.header("authorization").map(str::to_owned))
        .collect();
    assert!(!used.is_empty());
    assert!(
        used.iter()
            .all(|a| a.starts_with(&format!("token {ACCESS_PREFIX}"))),
        "the forge saw the user's own forge token: {used:?}"
    );
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn metadata_names_this_server_and_what_it_supports() {
    let world = World::start(&[]).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let (status, _, text) = world.get(&format!("{}{path}", world.base), None).await;
        assert_eq!(status, 200, "{path}");
        let prm: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(prm["resource"], format!("{}/mcp", world.base));
        assert_eq!(prm["authorization_servers"], json!([world.base]));
    }
    let (_, _, text) = world
        .get(
            &format!("{}/.well-known/oauth-authorization-server", world.base),
            None,
        )
        .await;
    let meta: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(meta["issuer"], world.base.as_str());
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(meta["client_id_metadata_document_supported"], true);
    assert_eq!(
        meta["registration_endpoint"],
        format!("{}/register", world.base)
    );
    assert!(
        !meta["scopes_supported"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "write:admin")
    );
}

#[tokio::test]
async fn pkce_codes_and_audiences_are_held_to_the_letter() {
    let world = World::start(&[]).await;
    let client = world.register(CLIENT_REDIRECT).await;
    // A wrong verifier.
    let browsed = world
        .browse(&world.authorize_url(&client, CLIENT_REDIRECT, &[]))
        .await;
    let code = param(&browsed.redirect, "code").unwrap();
    let (status, answer) = world.trade(&client, &code, "x".repeat(43).as_str()).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant")),
        "{answer}"
    );
    // The code is spent by the failed try too.
    let (status, _) = world.trade(&client, &code, VERIFIER).await;
    assert_eq!(status, 400);
    // A code used twice: the second is refused and the sign-in of the first ends.
    let browsed = world
        .browse(&world.authorize_url(&client, CLIENT_REDIRECT, &[]))
        .await;
    let code = param(&browsed.redirect, "code").unwrap();
    let (status, tokens) = world.trade(&client, &code, VERIFIER).await;
    assert_eq!(status, 200, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let (status, _, _) = world.mcp(Some(&access), "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let (status, answer) = world.trade(&client, &code, VERIFIER).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, challenge, _) = world.mcp(Some(&access), "tools/list", json!({})).await;
    assert_eq!(status, 401, "the sign-in of a replayed code is revoked");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    // A code traded with another redirect URI than its request's.
    let browsed = world
        .browse(&world.authorize_url(&client, CLIENT_REDIRECT, &[]))
        .await;
    let code = param(&browsed.redirect, "code").unwrap();
    let (status, _, text) = world
        .form(
            "/token",
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:9/other"),
                ("client_id", &client),
                ("code_verifier", VERIFIER),
            ],
        )
        .await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("redirect_uri"), "{text}");
    // A code for another client.
    let other = world.register(CLIENT_REDIRECT).await;
    let browsed = world
        .browse(&world.authorize_url(&client, CLIENT_REDIRECT, &[]))
        .await;
    let code = param(&browsed.redirect, "code").unwrap();
    let (status, _) = world.trade(&other, &code, VERIFIER).await;
    assert_eq!(status, 400);
    // Tokens signed with the server's key but expired, or for another audience.
    let keys = forgelens::oauth::keys::Keys::from_bytes(KEY);
    let (_, tokens) = world.sign_in(None).await;
    let real = forgelens::oauth::tokens::read(&keys, tokens["access_token"].as_str().unwrap())
        .expect("the server's own token reads with its key");
    let now = real.iat;
    let expired = forgelens::oauth::tokens::mint(
        &keys,
        &forgelens::oauth::tokens::Claims {
            exp: now - 1,
            ..clone_claims(&real)
        },
    );
    let (status, challenge, _) = world.mcp(Some(&expired), "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("expired"), "{challenge}");
    let elsewhere = forgelens::oauth::tokens::mint(
        &keys,
        &forgelens::oauth::tokens::Claims {
            aud: "https://other.example/mcp".into(),
            ..clone_claims(&real)
        },
    );
    let (status, challenge, _) = world.mcp(Some(&elsewhere), "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("another resource"), "{challenge}");
    // The forge's own token is not one of this server's.
    let (status, _, _) = world
        .mcp(Some(&format!("{ACCESS_PREFIX}1")), "tools/list", json!({}))
        .await;
    assert_eq!(
        status, 401,
        "a forge token is never accepted as a bearer token"
    );
    world.assert_no_forge_secret().await;
}

fn clone_claims(c: &forgelens::oauth::tokens::Claims) -> forgelens::oauth::tokens::Claims {
    forgelens::oauth::tokens::Claims {
        iss: c.iss.clone(),
        aud: c.aud.clone(),
        sub: c.sub.clone(),
        gid: c.gid.clone(),
        cid: c.cid.clone(),
        scope: c.scope.clone(),
        iat: c.iat,
        exp: c.exp,
    }
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_reused_one_revokes_the_sign_in() {
    let world = World::start(&[]).await;
    let (client, tokens) = world.sign_in(None).await;
    let first = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, rotated) = world.refresh(&client, &first).await;
    assert_eq!(status, 200, "{rotated}");
    let second = rotated["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    let access = rotated["access_token"].as_str().unwrap().to_owned();
    assert_eq!(
        world.mcp(Some(&access), "tools/list", json!({})).await.0,
        200
    );
    // The first refresh token again: someone kept a copy.
    let (status, answer) = world.refresh(&client, &first).await;
    assert_eq!(
        (status, answer["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    assert_eq!(
        world.mcp(Some(&access), "tools/list", json!({})).await.0,
        401
    );
    let (status, _) = world.refresh(&client, &second).await;
    assert_eq!(status, 400, "the whole family is revoked");
    // A refresh that narrows the scopes gives a token that reaches only that far.
    let (client, tokens) = world.sign_in(None).await;
    let (status, _, text) = world
        .form(
            "/token",
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &client),
                ("scope", "read:issue read:repository write:admin"),
            ],
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let narrowed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        narrowed["scope"], "read:issue read:repository",
        "never wider: {narrowed}"
    );
    let access = narrowed["access_token"].as_str().unwrap();
    let (status, _, listed) = world.mcp(Some(access), "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let names = tool_names(&listed);
    assert!(names.iter().any(|n| n == "list_repo_labels"), "{names:?}");
    assert!(!names.iter().any(|n| n == "create_repo_label"), "{names:?}");
    let call = json!({"name": "create_repo_label",
        "arguments": {"owner": "acme", "repo": "widgets", "name": "new", "color": "#00aabb"}});
    let (status, challenge, _) = world.mcp(Some(access), "tools/call", call).await;
    assert_eq!(status, 403, "{challenge}");
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    // Revocation (RFC 7009) ends a sign-in too.
    let (client, tokens) = world.sign_in(None).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let (status, _, _) = world
        .form(
            "/revoke",
            &[
                ("token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", &client),
            ],
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        world.mcp(Some(&access), "tools/list", json!({})).await.0,
        401
    );
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn a_sign_in_reaches_no_further_than_its_scopes_on_any_path() {
    let world = World::start(&[]).await;
    let (_, tokens) = world.sign_in(Some("read:issue")).await;
    assert_eq!(tokens["scope"], "read:issue");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let (status, _, listed) = world.mcp(Some(&access), "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let names = tool_names(&listed);
    assert!(names.iter().any(|n| n == "list_repo_labels"));
    assert!(
        !names
            .iter()
            .any(|n| n == "create_repo_label" || n == "get_repo"),
        "{names:?}"
    );
    let search = json!({"name": "search_tools", "arguments": {"query": "create a label"}});
    let (status, _, found) = world.mcp(Some(&access), "tools/call", search).await;
    assert_eq!(status, 200);
    let found = found["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!found.is_empty(), "search still answers");
    assert!(
        found.iter().all(|t| t["read_only"] == true),
        "search offers only what the sign-in may call: {found:?}"
    );
    // A write tool called by name anyway: 403 with one challenge naming every scope needed.
    let forge_calls = world.forge.requests().len();
    let call = json!({"name": "create_repo_label", "arguments": {
        "owner": "acme", "repo": "widgets", "name": "new", "color": "00aabb"}});
    let (status, challenge, answer) = world.mcp(Some(&access), "tools/call", call).await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"read:issue write:issue\""),
        "{challenge}"
    );
    // The escape hatch is held to the same scopes.
    let call = json!({"name": "forgejo_api_request", "arguments": {
        "method": "GET", "path": "/repos/acme/widgets"}});
    let (status, challenge, answer) = world.mcp(Some(&access), "tools/call", call).await;
    assert_eq!(status, 403, "{answer}");
    assert!(challenge.contains("read:repository"), "{challenge}");
    // And so are resources.
    let read = json!({"uri": "forgejo://repo/acme/widgets"});
    let (status, _, answer) = world.mcp(Some(&access), "resources/read", read).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(
        world.forge.requests().len(),
        forge_calls,
        "nothing beyond the scopes reached the forge"
    );
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn the_forge_revoking_its_grant_ends_the_sign_in_and_tokens_are_refreshed_before_expiry() {
    let world = World::start(&[]).await;
    // Forge tokens that expire within the refresh margin: refreshed on the next request.
    world.forge.with_oauth(|p| p.expires_in = 60);
    let (_, tokens) = world.sign_in(None).await;
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let call =
        json!({"name": "list_repo_labels", "arguments": {"owner": "acme", "repo": "widgets"}});
    let (status, _, answer) = world.mcp(Some(&access), "tools/call", call.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        world.forge.with_oauth(|p| p.refreshes) >= 1,
        "refreshed before expiry"
    );
    let last = world
        .forge
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.path == "/repos/acme/widgets/labels");
    assert_ne!(
        last.and_then(|r| r.header("authorization").map(str::to_owned))
            .as_deref(),
        Some(format!("token {ACCESS_PREFIX}2").as_str()),
        "the refreshed token is used, not the first"
    );
    // The user revokes forgelens on the forge.
    world.forge.with_oauth(|p| {
        p.expires_in = 3600;
        p.revoke();
    });
    let (status, challenge, _) = world.mcp(Some(&access), "tools/call", call).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    let (status, _, _) = world.mcp(Some(&access), "tools/list", json!({})).await;
    assert_eq!(status, 401, "the sign-in is over");
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn sign_ins_survive_a_restart() {
    let mut world = World::start(&[]).await;
    let (client, tokens) = world.sign_in(None).await;
    world.restart().await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        world.mcp(Some(access), "tools/list", json!({})).await.0,
        200
    );
    let (status, _) = world
        .refresh(&client, tokens["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(status, 200);
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn authorization_requests_are_refused_without_sending_anyone_elsewhere() {
    let world = World::start(&[]).await;
    let client = world.register(CLIENT_REDIRECT).await;
    // A redirect the client did not register, or an unknown client: a page, no redirect.
    for url in [
        world.authorize_url(&client, "https://evil.example/callback", &[]),
        world.authorize_url(&client, "http://127.0.0.1:9/callback/../evil", &[]),
        world.authorize_url("flc_unknown", CLIENT_REDIRECT, &[]),
    ] {
        let (status, headers, page) = world.get(&url, None).await;
        assert_eq!(status, 400, "{url}: {page}");
        assert!(headers.get(header::LOCATION).is_none(), "{url}");
        assert!(page.contains("cannot go on"), "{page}");
    }
    // Past the redirect check, problems go back to the client as OAuth errors.
    let mut no_pkce =
        reqwest::Url::parse(&world.authorize_url(&client, CLIENT_REDIRECT, &[])).unwrap();
    let kept: Vec<(String, String)> = no_pkce
        .query_pairs()
        .filter(|(k, _)| k != "code_challenge")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    no_pkce.query_pairs_mut().clear().extend_pairs(kept);
    let cases = [
        (no_pkce.to_string(), "invalid_request"),
        (
            world
                .authorize_url(
                    &client,
                    CLIENT_REDIRECT,
                    &[("code_challenge_method", "plain")],
                )
                .replace("code_challenge_method=S256&", ""),
            "invalid_request",
        ),
        (
            world.authorize_url(&client, CLIENT_REDIRECT, &[]).replace(
                "resource=http",
                "resource=https%3A%2F%2Fother.example%2Fmcp&x=http",
            ),
            "invalid_target",
        ),
        (
            world.authorize_url(&client, CLIENT_REDIRECT, &[("scope", "openid")]),
            "invalid_scope",
        ),
    ];
    for (url, error) in cases {
        let (status, headers, text) = world.get(&url, None).await;
        assert_eq!(status, 303, "{url}: {text}");
        let back = location(&headers);
        assert!(back.starts_with(CLIENT_REDIRECT), "{back}");
        assert_eq!(param(&back, "error").as_deref(), Some(error), "{url}");
        assert_eq!(param(&back, "state").as_deref(), Some("client-state-1"));
    }
    // Consent needs the page's check token and the browser's cookie, and is answered once.
    let (_, headers, page) = world
        .get(&world.authorize_url(&client, CLIENT_REDIRECT, &[]), None)
        .await;
    assert!(
        headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    let cookie = consent_cookie(&headers);
    let pending = hidden(&page, "pending");
    let csrf = hidden(&page, "csrf");
    let post = |cookie: Option<String>, csrf: String| {
        let mut request = world.http.post(format!("{}/consent", world.base)).form(&[
            ("pending", pending.clone()),
            ("csrf", csrf),
            ("decision", "allow".into()),
        ]);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        request.send()
    };
    let (status, _, _) = world.keep(post(None, csrf.clone()).await.unwrap()).await;
    assert_eq!(status, 403, "without the cookie");
    let from_elsewhere = world
        .http
        .post(format!("{}/consent", world.base))
        .header(header::COOKIE, &cookie)
        .header(header::ORIGIN, "https://evil.example")
        .form(&[
            ("pending", pending.as_str()),
            ("csrf", &csrf),
            ("decision", "allow"),
        ])
        .send()
        .await
        .unwrap();
    let (status, _, _) = world.keep(from_elsewhere).await;
    assert_eq!(status, 403, "posted from another site's page");
    let (status, _, _) = world
        .keep(post(Some(cookie.clone()), "forged".into()).await.unwrap())
        .await;
    assert_eq!(status, 403, "with a forged check token");
    let (status, _, _) = world
        .keep(post(Some(cookie.clone()), csrf.clone()).await.unwrap())
        .await;
    assert_eq!(status, 303);
    let (status, _, _) = world.keep(post(Some(cookie), csrf).await.unwrap()).await;
    assert_eq!(status, 400, "answered once");
    // A callback the server did not start (or one already used) goes nowhere.
    let (status, headers, _) = world
        .get(
            &format!("{}/callback?code=forge-code-1&state=made-up", world.base),
            None,
        )
        .await;
    assert_eq!(status, 400);
    assert!(headers.get(header::LOCATION).is_none());
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn client_metadata_documents_are_fetched_with_limits_and_checked() {
    let world = World::start(&["--oauth-loopback-clients"]).await;
    let doc = |id: &str, redirects: &[&str]| {
        json!({"client_id": id, "client_name": "Doc client", "redirect_uris": redirects})
            .to_string()
    };
    let url = |path: &str| format!("{}{path}", world.forge.url());
    world
        .forge
        .document(
            "/clients/good.json",
            &doc(&url("/clients/good.json"), &[CLIENT_REDIRECT]),
        )
        .document(
            "/clients/other-id.json",
            &doc("https://someone.else/c.json", &[CLIENT_REDIRECT]),
        )
        .document(
            "/clients/no-redirect.json",
            &doc(
                &url("/clients/no-redirect.json"),
                &["https://app.example/cb"],
            ),
        )
        .document(
            "/clients/huge.json",
            &format!(
                "{{\"client_id\": \"{}\", \"pad\": \"{}\"}}",
                url("/clients/huge.json"),
                "x".repeat(40_000)
            ),
        )
        .document(
            "/clients/slow.json",
            &doc(&url("/clients/slow.json"), &[CLIENT_REDIRECT]),
        )
        .delay("/clients/slow.json", std::time::Duration::from_secs(8));
    let browsed = world
        .browse(&world.authorize_url(&url("/clients/good.json"), CLIENT_REDIRECT, &[]))
        .await;
    let code = param(&browsed.redirect, "code").unwrap();
    let (status, tokens) = world
        .trade(&url("/clients/good.json"), &code, VERIFIER)
        .await;
    assert_eq!(status, 200, "{tokens}");
    let cases = [
        ("/clients/other-id.json", "names another client_id"),
        (
            "/clients/no-redirect.json",
            "not one this client registered",
        ),
        ("/clients/huge.json", "larger than"),
        ("/clients/slow.json", "could not be fetched"),
        ("/clients/missing.json", "answered 404"),
    ];
    for (path, said) in cases {
        let (status, headers, page) = world
            .get(&world.authorize_url(&url(path), CLIENT_REDIRECT, &[]), None)
            .await;
        assert_eq!(status, 400, "{path}: {page}");
        assert!(headers.get(header::LOCATION).is_none());
        assert!(page.contains(said), "{path}: {page}");
    }
    world.assert_no_forge_secret().await;
}

#[tokio::test]
async fn without_loopback_clients_a_metadata_document_may_not_point_inside() {
    let world = World::start(&[]).await;
    let inside = format!("{}/clients/good.json", world.forge.url());
    let (status, _, page) = world
        .get(&world.authorize_url(&inside, CLIENT_REDIRECT, &[]), None)
        .await;
    assert_eq!(status, 400);
    assert!(page.contains("must be an https URL"), "{page}");
    let (status, _, page) = world
        .get(
            &world.authorize_url("https://127.0.0.1/client.json", CLIENT_REDIRECT, &[]),
            None,
        )
        .await;
    assert_eq!(status, 400);
    assert!(page.contains("private address"), "{page}");
    assert!(
        world
            .forge
            .requests()
            .iter()
            .all(|r| !r.path.contains("clients")),
        "nothing was fetched"
    );
}

#[tokio::test]
async fn a_read_only_server_signs_in_for_reading_only() {
    let world = World::start(&["--read-only"]).await;
    let (_, tokens) = world.sign_in(Some("write:issue read:repository")).await;
    assert_eq!(tokens["scope"], "read:issue read:repository");
    let asked = world
        .forge
        .with_oauth(|p| p.authorize_queries.last().unwrap()["scope"].clone());
    assert_eq!(
        asked, "read:issue read:repository",
        "the forge is asked for reading only"
    );
}

#[tokio::test]
async fn a_second_sign_in_with_other_scopes_says_how_to_widen_access() {
    let world = World::start(&[]).await;
    world.sign_in(Some("read:issue")).await;
    let client = world.register(CLIENT_REDIRECT).await;
    let browsed = world
        .browse(&world.authorize_url(&client, CLIENT_REDIRECT, &[("scope", "write:issue")]))
        .await;
    assert_eq!(
        param(&browsed.redirect, "error").as_deref(),
        Some("access_denied")
    );
    let said = param(&browsed.redirect, "error_description").unwrap();
    assert!(said.contains("revoke it in the forge's settings"), "{said}");
    world.assert_no_forge_secret().await;
}
