//! A real Redis server for the tests (Debian's `redis-server`): started on a free loopback port
//! with a data folder of its own, its appends written at once so that a stop and a start
//! again keep what it held — the shared store of replicas, as an operator runs it.
//! `.ci/run` installs the package when it is missing.

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The server's binary: `$REDIS_SERVER`, else `redis-server` on the path.
fn binary() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

impl Redis {
    pub async fn start() -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Redis {
            child: None,
            port,
            dir: tempfile::tempdir().unwrap(),
        };
        redis.start_again().await;
        redis
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Starts the server (again, after [`Redis::stop`]) on the same port and folder, and waits
    /// until it answers `PING`.
    pub async fn start_again(&mut self) {
        let child = Command::new(binary())
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(self.dir.path())
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .args(["--protected-mode", "no", "--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e}; install Redis (`apt-get install redis-server`, \
                     which .ci/run does) or point REDIS_SERVER at its binary",
                    binary()
                )
            });
        self.child = Some(child);
        for _ in 0..1000 {
            if self.pong() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "redis-server did not answer PING on port {} within 10 s",
            self.port
        );
    }

    /// Every key of forgelens in the server.
    pub fn keys(&self) -> Vec<String> {
        let client = redis::Client::open(self.url()).unwrap();
        let mut connection = client.get_connection().unwrap();
        redis::cmd("KEYS")
            .arg("forgelens:*")
            .query(&mut connection)
            .unwrap()
    }

    /// Everything the server wrote to disk (its append-only files), as text: what an
    /// attacker holding the store's disk would read.
    pub fn dump(&self) -> String {
        fn walk(dir: &std::path::Path, out: &mut Vec<u8>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if let Ok(bytes) = std::fs::read(&path) {
                    out.extend(bytes);
                }
            }
        }
        let mut bytes = Vec::new();
        walk(self.dir.path(), &mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Stops the server; the port refuses connections once this returns.
    pub fn stop(&mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn pong(&self) -> bool {
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut answer = [0u8; 7];
        stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
    }
}
