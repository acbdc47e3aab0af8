//! The deadlines of an HTTP connection that hyper's own header timeout does not cover: a
//! request body that takes too long to arrive ([`Arriving`]), and an answer the client does
//! not read ([`WriteDeadline`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The error a request body gives once the request deadline has passed.
#[derive(Debug, Error)]
#[error("the request did not arrive whole before its deadline")]
pub(super) struct LateBody;

/// A request body that fails with [`LateBody`] once its deadline has passed, whoever reads it.
pub(super) struct Arriving {
    body: Incoming,
    deadline: Pin<Box<Sleep>>,
}

impl Arriving {
    pub(super) fn new(body: Incoming, deadline: Instant) -> Arriving {
        Arriving {
            body,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
        }
    }
}

impl Body for Arriving {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        // Checked first, so that a trickle that is always ready still meets the deadline.
        if self.deadline.is_elapsed() {
            return Poll::Ready(Some(Err(Box::new(LateBody))));
        }
        match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(Into::into))),
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(LateBody)))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The error a write gives once the client has taken nothing for the write deadline.
#[derive(Debug, Error)]
#[error("the client read nothing for {}s (--write-timeout)", .0.as_secs())]
pub(super) struct WriteStalled(Duration);

/// A stream whose writes fail once the peer has taken nothing for `limit`: a pending write,
/// flush or shutdown starts the clock, any progress stops it. Below hyper, so it covers every
/// answer, event streams included (a stream with nothing to send is not waiting on the peer).
pub(super) struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    /// Reset each time a write starts to wait; only polled while one waits.
    stalled: Pin<Box<Sleep>>,
    waiting: bool,
}

impl<S> WriteDeadline<S> {
    pub(super) fn new(inner: S, limit: Duration) -> WriteDeadline<S> {
        WriteDeadline {
            inner,
            limit,
            stalled: Box::pin(tokio::time::sleep(limit)),
            waiting: false,
        }
    }

    /// Passes on what the inner stream said, turning a wait longer than the limit into an
    /// error.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if polled.is_ready() {
            self.waiting = false;
            return polled;
        }
        if !self.waiting {
            self.waiting = true;
            let deadline = Instant::now() + self.limit;
            self.stalled.as_mut().reset(deadline);
        }
        match self.stalled.as_mut().poll(cx) {
            Poll::Ready(()) => {
                tracing::info!(
                    "closing a connection whose client read nothing of its answer for {}s \
                     (--write-timeout)",
                    self.limit.as_secs()
                );
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    WriteStalled(self.limit),
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_write_nobody_reads_fails_after_the_limit() {
        let (near, mut far) = tokio::io::duplex(16);
        let mut stream = WriteDeadline::new(near, Duration::from_millis(100));
        stream.write_all(&[1; 16]).await.unwrap();
        let error = stream.write_all(&[2; 16]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(error.to_string().contains("--write-timeout"), "{error}");
        // What was taken stays readable.
        let mut got = [0; 16];
        far.read_exact(&mut got).await.unwrap();
        assert_eq!(got, [1; 16]);
    }

    #[tokio::test]
    async fn a_slow_reader_that_keeps_reading_is_not_cut() {
        let (near, mut far) = tokio::io::duplex(4);
        // The writes wait on the reader longer in all than the limit, but never that long at
        // once: each byte read is progress.
        let mut stream = WriteDeadline::new(near, Duration::from_millis(300));
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            let mut byte = [0; 1];
            while got.len() < 40 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                far.read_exact(&mut byte).await.unwrap();
                got.push(byte[0]);
            }
            got
        });
        stream.write_all(&[7; 40]).await.unwrap();
        assert_eq!(reader.await.unwrap(), vec![7; 40]);
    }
}
