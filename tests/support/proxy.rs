//! A round-robin HTTP proxy on loopback: what a load balancer in front of replicas does and no
//! more. Each request goes to the next process in turn, whole (method, path, headers, body),
//! and its answer comes back unchanged; it counts what each process was handed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};

#[derive(Default)]
struct Backends {
    bases: Mutex<Vec<String>>,
    served: Mutex<Vec<usize>>,
    next: AtomicUsize,
    /// One connection pool to every process, as a load balancer keeps.
    client: reqwest::Client,
}

pub struct Proxy {
    /// `http://127.0.0.1:PORT`: where clients reach the replicas.
    pub base: String,
    backends: Arc<Backends>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Headers that belong to one hop, not to the request or answer.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host" | "content-length" | "transfer-encoding" | "connection"
    )
}

async fn forward(State(backends): State<Arc<Backends>>, request: Request) -> Response {
    let picked = {
        let bases = backends.bases.lock().unwrap();
        if bases.is_empty() {
            return (StatusCode::BAD_GATEWAY, "no replica").into_response();
        }
        let i = backends.next.fetch_add(1, Ordering::Relaxed) % bases.len();
        backends.served.lock().unwrap()[i] += 1;
        bases[i].clone()
    };
    let (parts, body) = request.into_parts();
    let target = format!(
        "{picked}{}",
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let body = to_bytes(body, usize::MAX).await.unwrap();
    let mut outgoing = backends.client.request(parts.method, target).body(body);
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let bytes = answer.bytes().await.unwrap_or_default();
    response.body(Body::from(bytes)).unwrap()
}

impl Proxy {
    pub async fn start() -> Proxy {
        // reqwest is built here without a TLS provider of its own; one installed already is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let backends = Arc::new(Backends {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            ..Backends::default()
        });
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(backends.clone());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Proxy {
            base,
            backends,
            task,
        }
    }

    /// Adds a process (`http://127.0.0.1:PORT`) to the rotation.
    pub fn add(&self, base: &str) {
        self.backends.bases.lock().unwrap().push(base.to_owned());
        self.backends.served.lock().unwrap().push(0);
    }

    /// Takes a process out of the rotation, as a load balancer does with one that stops.
    pub fn remove(&self, base: &str) {
        let mut bases = self.backends.bases.lock().unwrap();
        if let Some(i) = bases.iter().position(|b| b == base) {
            bases.remove(i);
            self.backends.served.lock().unwrap().remove(i);
        }
    }

    /// Requests handed to each process, in the order they were added.
    pub fn spread(&self) -> Vec<usize> {
        self.backends.served.lock().unwrap().clone()
    }
}
