//! Backpressure for a stream transport (stdio): at most [`Bounded`]'s number of requests are
//! between "read" and "answer written" at once. Reading the next message waits for a free
//! slot, and a request gives its slot back only when its answer has been written (or it was
//! cancelled). A client that stops reading stdout therefore stops the server reading stdin:
//! the answers waiting to be written, and the work behind them, stay bounded instead of
//! piling up in memory.
//!
//! rmcp spawns a task per request and another per answer to write; neither is bounded on its
//! own. This wrapper is the only place the bound lives.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::convert::Refusal;

/// A transport whose requests in flight are bounded.
pub struct Bounded<T> {
    inner: T,
    slots: Arc<Semaphore>,
    /// A slot taken before reading, kept across a cancelled `receive` (rmcp polls it inside a
    /// `select!`), so that waiting for one is not repeated for every other event.
    ready: Option<OwnedSemaphorePermit>,
    /// The slot of each request read and not yet answered.
    held: HashMap<RequestId, OwnedSemaphorePermit>,
    /// Lines of input that were not JSON (see `super::lines`), each to be answered `-32700`.
    refused: Option<UnboundedReceiver<String>>,
}

impl<T> Bounded<T> {
    pub fn new(inner: T, in_flight: usize) -> Bounded<T> {
        Bounded {
            inner,
            slots: Arc::new(Semaphore::new(in_flight.max(1))),
            ready: None,
            held: HashMap::new(),
            refused: None,
        }
    }

    /// Answers each line `refused` tells of with a parse error.
    pub fn answering(mut self, refused: UnboundedReceiver<String>) -> Bounded<T> {
        self.refused = Some(refused);
        self
    }
}

impl<T: Transport<RoleServer>> Bounded<T> {
    /// Answers a line of input that was not JSON with a parse error; whether it was written.
    async fn answer_refused(&mut self, line: String) -> bool {
        tracing::warn!("stdin: a line that is not JSON was answered -32700: {line}");
        let refusal = Refusal::Parse(format!("a line that is not JSON: {line}"));
        let answer = JsonRpcMessage::error(ErrorData::from(refusal), None);
        self.inner.send(answer).await.is_ok()
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Bounded<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // One form for every "method not found", rmcp's own answers included.
        if let JsonRpcMessage::Error(error) = &mut item
            && error.error.code.0 == -32601
            && let std::borrow::Cow::Owned(message) =
                super::convert::method_not_found_message(&error.error.message)
        {
            error.error.message = message.into();
        }
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let slot = answered.and_then(|id| self.held.remove(id));
        let send = self.inner.send(item);
        async move {
            let sent = send.await;
            drop(slot);
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.ready.is_none() {
                let slot = self.slots.clone().acquire_owned().await;
                self.ready = Some(slot.expect("the semaphore is never closed"));
            }
            // The reader tells of a refused line while the transport reads: it is answered at
            // once when nothing else comes (the transport's read is cancel-safe), and before the
            // next message or the end of input is handed on when both come together.
            let message = match &mut self.refused {
                Some(refused) => tokio::select! {
                    biased;
                    Some(line) = refused.recv() => {
                        if !self.answer_refused(line).await {
                            return None;
                        }
                        continue;
                    }
                    message = self.inner.receive() => message,
                },
                None => self.inner.receive().await,
            };
            while let Some(line) = self.refused.as_mut().and_then(|r| r.try_recv().ok()) {
                if !self.answer_refused(line).await {
                    return None;
                }
            }
            let message = message?;
            match &message {
                JsonRpcMessage::Request(request) if self.held.contains_key(&request.id) => {
                    // Two requests with one id would get one answer between them, and the
                    // second slot would never come back; the second is refused instead.
                    let refusal = Refusal::InvalidRequest(format!(
                        "request id {} is already in use by a request in flight; \
                         give each request its own id",
                        request.id
                    ));
                    let send = self.inner.send(JsonRpcMessage::error(
                        ErrorData::from(refusal),
                        Some(request.id.clone()),
                    ));
                    let slot = self.ready.take();
                    tokio::spawn(async move {
                        let _ = send.await;
                        drop(slot);
                    });
                    continue;
                }
                JsonRpcMessage::Request(request) => {
                    let slot = self.ready.take().expect("a slot was taken above");
                    self.held.insert(request.id.clone(), slot);
                }
                // rmcp writes no answer for a cancelled request, so its slot is freed here.
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) =
                        &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                    {
                        self.held.remove(id);
                    }
                }
                JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
