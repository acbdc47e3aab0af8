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
    /// With TLS: the authority that signed the server's certificate, and the password asked.
    tls: Option<Tls>,
}

struct Tls {
    ca: std::path::PathBuf,
    password: String,
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
            tls: None,
        };
        redis.start_again().await;
        redis
    }

    /// A server reached only over TLS, with a certificate for 127.0.0.1 signed by an authority
    /// of its own (made with `openssl`), that asks for `password`.
    pub async fn start_tls(password: &str) -> Redis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let openssl = |args: &[&str]| {
            let status = Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("openssl runs");
            assert!(status.success(), "openssl {args:?}");
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=forgelens test authority",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ]);
        std::fs::write(
            dir.path().join("san.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        let ca = dir.path().join("ca.pem");
        let mut redis = Redis {
            child: None,
            port,
            dir,
            tls: Some(Tls {
                ca,
                password: password.to_owned(),
            }),
        };
        redis.start_again().await;
        redis
    }

    /// The authority's certificate of a TLS server.
    pub fn ca(&self) -> &std::path::Path {
        &self.tls.as_ref().expect("a TLS server").ca
    }

    /// `redis://127.0.0.1:PORT/0`, or `rediss://…` over TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}/0", self.port)
    }

    /// Starts the server (again, after [`Redis::stop`]) on the same port and folder, and waits
    /// until it answers `PING`.
    pub async fn start_again(&mut self) {
        let mut command = Command::new(binary());
        match &self.tls {
            None => command.args(["--port", &self.port.to_string()]),
            Some(tls) => {
                let file = |name: &str| self.dir.path().join(name).display().to_string();
                command
                    .args(["--port", "0", "--tls-port", &self.port.to_string()])
                    .args(["--tls-cert-file", &file("server.pem")])
                    .args(["--tls-key-file", &file("server.key")])
                    .args(["--tls-ca-cert-file", &file("ca.pem")])
                    .args(["--tls-auth-clients", "no", "--requirepass", &tls.password])
            }
        };
        let child = command
            .args(["--bind", "127.0.0.1"])
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
        if self.tls.is_some() {
            // Listening is enough here: the tests' own TLS client is forgelens.
            return std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok();
        }
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
