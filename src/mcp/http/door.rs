//! The listening socket, which can tell that a connection is waiting without accepting it:
//! with every slot taken, a waiting connection is what makes an idle one give way, and
//! accepting it first would take a descriptor beyond the cap.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// How many connections the system may queue, unaccepted: tokio's default.
const BACKLOG: u32 = 1024;

/// Binds `addr` as tokio's `TcpListener::bind` does (with `SO_REUSEADDR`), for a [`Door`].
pub(super) fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

#[cfg(unix)]
pub(super) use self::unix::Door;

#[cfg(unix)]
mod unix {
    use std::io;

    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;
    use tokio::net::{TcpListener, TcpStream};

    /// The listener, watched for readiness: readable means a connection waits to be accepted.
    pub(in super::super) struct Door {
        listener: AsyncFd<std::net::TcpListener>,
    }

    impl Door {
        pub(in super::super) fn new(listener: TcpListener) -> io::Result<Door> {
            // Still non-blocking: tokio made it so.
            let listener = listener.into_std()?;
            // SAFETY: a std `TcpListener` owns its descriptor and always reports that one; it
            // is moved into the `AsyncFd`, which keeps it open until the door is dropped.
            let listener = unsafe { AsyncFd::register_with_interest(listener, Interest::READABLE) }
                .map_err(|e| e.into_parts().1)?;
            Ok(Door { listener })
        }

        /// Resolves when a connection waits to be accepted, without accepting it.
        pub(in super::super) async fn knocked(&self) -> io::Result<()> {
            // Dropping the guard keeps the readiness: `accept` finds it.
            self.listener.readable().await.map(drop)
        }

        /// Accepts the waiting connection; `None` when there is none after all (it gave up
        /// before it was accepted).
        pub(in super::super) async fn accept(&self) -> Option<io::Result<TcpStream>> {
            let mut ready = match self.listener.readable().await {
                Ok(ready) => ready,
                Err(error) => return Some(Err(error)),
            };
            let accepted = ready.try_io(|listener| listener.get_ref().accept()).ok()?;
            Some(accepted.and_then(|(stream, _)| {
                stream.set_nonblocking(true)?;
                TcpStream::from_std(stream)
            }))
        }
    }
}

#[cfg(not(unix))]
pub(super) use self::other::Door;

/// Where readiness cannot be watched without accepting, the door accepts the waiting
/// connection and holds it until there is room: one descriptor beyond the cap.
#[cfg(not(unix))]
mod other {
    use std::io;
    use std::sync::Mutex;

    use tokio::net::{TcpListener, TcpStream};

    pub(in super::super) struct Door {
        listener: TcpListener,
        waiting: Mutex<Option<io::Result<TcpStream>>>,
    }

    impl Door {
        pub(in super::super) fn new(listener: TcpListener) -> io::Result<Door> {
            Ok(Door {
                listener,
                waiting: Mutex::new(None),
            })
        }

        pub(in super::super) async fn knocked(&self) -> io::Result<()> {
            if self.held().is_some() {
                return Ok(());
            }
            let accepted = self.listener.accept().await.map(|(stream, _)| stream);
            *self.held() = Some(accepted);
            Ok(())
        }

        pub(in super::super) async fn accept(&self) -> Option<io::Result<TcpStream>> {
            self.held().take()
        }

        fn held(&self) -> std::sync::MutexGuard<'_, Option<io::Result<TcpStream>>> {
            self.waiting
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpStream;

    use super::*;

    #[tokio::test]
    async fn a_waiting_connection_is_seen_before_it_is_accepted() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let door = Door::new(listener).unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        door.knocked().await.unwrap();
        // Seen again, still there: knocking accepts nothing.
        door.knocked().await.unwrap();
        let accepted = door.accept().await.expect("a connection waits").unwrap();
        assert_eq!(accepted.peer_addr().unwrap(), client.local_addr().unwrap());
    }
}
