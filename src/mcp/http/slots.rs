//! The connection slots of the HTTP server: a registry of the open connections, with what
//! each is doing and a way to ask it to close.
//!
//! A connection is busy from the moment hyper hands one of its requests to the service until
//! that request's response body is finished, and idle otherwise: between requests on a
//! kept-alive connection, or opened and not yet through a request's headers. When every slot
//! is taken and a new connection arrives, the connection idle longest is asked to give way
//! ([`Slots::make_room`]); a busy one is never interrupted for a newcomer, nor one hyper has
//! not read from yet (its request may be there already). A slot is freed only once its
//! connection's socket is closed, so the number of connection descriptors never exceeds the
//! cap.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The open connections, at most `cap` of them.
pub(super) struct Slots {
    cap: usize,
    table: Mutex<Table>,
    /// Woken when a slot is freed or a connection becomes idle: what the accept loop, waiting
    /// for room, and the shutdown, waiting for the last connection, need to look again.
    changed: Notify,
}

struct Table {
    next_id: u64,
    open: HashMap<u64, Entry>,
    /// Connections asked to give way that have not closed yet; while one is on its way out,
    /// no other is asked, so that one newcomer costs one idle connection.
    leaving: usize,
}

struct Entry {
    /// Requests handed to the service whose response body is not finished.
    requests: usize,
    /// When the connection was opened or last finished an answer: when it began to wait for
    /// its next request.
    waiting_since: Instant,
    /// Whether it ever finished an answer (whose last bytes hyper may still be flushing).
    answered: bool,
    /// Whether hyper has had a first go at reading it.
    read: bool,
    /// Asked to give way and not yet gone.
    leaving: bool,
    close: CancellationToken,
}

/// How an evicted connection goes, as [`Slot::give_way`] decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GiveWay {
    /// It never answered anything: nothing can be lost, so its socket is dropped at once.
    Now,
    /// It answered before: hyper closes it once it has flushed that answer.
    AfterFlush,
    /// A request arrived meanwhile: that request is served, then the connection closes.
    AfterRequest,
}

impl Slots {
    pub(super) fn new(cap: usize) -> Arc<Slots> {
        Arc::new(Slots {
            cap,
            table: Mutex::new(Table {
                next_id: 0,
                open: HashMap::new(),
                leaving: 0,
            }),
            changed: Notify::new(),
        })
    }

    /// The table; a panic elsewhere while it was held leaves it consistent (every change is a
    /// single field or map operation), so a poisoned lock is simply taken.
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a new connection; `None` when all are taken.
    pub(super) fn take(self: &Arc<Self>) -> Option<Slot> {
        let mut table = self.table();
        if table.open.len() >= self.cap {
            return None;
        }
        let id = table.next_id;
        table.next_id += 1;
        let close = CancellationToken::new();
        table.open.insert(
            id,
            Entry {
                requests: 0,
                waiting_since: Instant::now(),
                answered: false,
                read: false,
                leaving: false,
                close: close.clone(),
            },
        );
        Some(Slot {
            slots: self.clone(),
            id,
            close,
        })
    }

    /// Asks the connection idle longest to give way to a newcomer, unless one is already on
    /// its way out; says whether one is now leaving (`false`: none may be asked). With
    /// `idle_before`, only a connection idle since before then may be asked.
    pub(super) fn make_room(&self, idle_before: Option<Instant>) -> bool {
        let mut table = self.table();
        if table.leaving > 0 {
            return true;
        }
        let oldest = table
            .open
            .iter_mut()
            .filter(|(_, e)| e.requests == 0 && e.read && !e.leaving)
            .filter(|(_, e)| idle_before.is_none_or(|before| e.waiting_since < before))
            .min_by_key(|(id, e)| (e.waiting_since, **id))
            .map(|(_, e)| e);
        let Some(entry) = oldest else {
            return false;
        };
        entry.leaving = true;
        entry.close.cancel();
        table.leaving += 1;
        tracing::debug!("every connection slot is taken: closing the connection idle longest");
        true
    }

    /// Resolves when a slot may have been freed or a connection become idle.
    pub(super) async fn changed(&self) {
        self.changed.notified().await;
    }

    /// How many connections are open.
    pub(super) fn open(&self) -> usize {
        self.table().open.len()
    }
}

/// One connection's slot, freed when dropped (after the connection's socket).
pub(super) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    close: CancellationToken,
}

impl Slot {
    /// What the connection's service reports its requests to.
    pub(super) fn tracker(&self) -> Tracker {
        Tracker {
            slots: self.slots.clone(),
            id: self.id,
        }
    }

    /// Marks the connection read once by hyper: a request it had sent already is in progress
    /// now, and a connection still idle may be asked to give way.
    pub(super) fn mark_read(&self) {
        if let Some(entry) = self.slots.table().open.get_mut(&self.id) {
            entry.read = true;
        }
    }

    /// Resolves when the connection is asked to give way.
    pub(super) async fn evicted(&self) {
        self.close.cancelled().await;
    }

    /// How the connection goes now that it was asked to give way. It is checked again here
    /// because a request may have arrived since it was chosen: that request is served, and
    /// another idle connection may be asked in its place.
    pub(super) fn give_way(&self) -> GiveWay {
        let mut table = self.slots.table();
        let Some(entry) = table.open.get_mut(&self.id) else {
            return GiveWay::Now;
        };
        if entry.requests > 0 {
            entry.leaving = false;
            table.leaving -= 1;
            drop(table);
            self.slots.changed.notify_one();
            return GiveWay::AfterRequest;
        }
        if entry.answered {
            GiveWay::AfterFlush
        } else {
            GiveWay::Now
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.slots.table();
        if table.open.remove(&self.id).is_some_and(|e| e.leaving) {
            table.leaving -= 1;
        }
        drop(table);
        self.slots.changed.notify_one();
    }
}

/// A connection's handle on its own entry, for its service.
#[derive(Clone)]
pub(super) struct Tracker {
    slots: Arc<Slots>,
    id: u64,
}

impl Tracker {
    /// Marks a request handed to the service; the connection is busy until the returned guard
    /// is dropped (with the response body). Also returns when the connection began to wait for
    /// this request, from which its deadline runs.
    pub(super) fn start(&self) -> (InProgress, Instant) {
        let mut table = self.slots.table();
        let since = match table.open.get_mut(&self.id) {
            Some(entry) => {
                entry.requests += 1;
                entry.waiting_since
            }
            None => Instant::now(),
        };
        (
            InProgress {
                tracker: self.clone(),
            },
            since,
        )
    }
}

/// A request in progress on its connection; dropping it makes the connection idle again.
pub(super) struct InProgress {
    tracker: Tracker,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        let slots = &self.tracker.slots;
        let mut table = slots.table();
        let Some(entry) = table.open.get_mut(&self.tracker.id) else {
            return;
        };
        entry.requests = entry.requests.saturating_sub(1);
        if entry.requests > 0 {
            return;
        }
        entry.waiting_since = Instant::now();
        entry.answered = true;
        drop(table);
        slots.changed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_table_asks_the_connection_idle_longest_and_frees_its_slot_when_gone() {
        let slots = Slots::new(2);
        let first = slots.take().unwrap();
        let second = slots.take().unwrap();
        assert!(slots.take().is_none());
        // Not read yet, so not asked.
        assert!(!slots.make_room(None));
        first.mark_read();
        second.mark_read();
        // The first is busy, so the second is the one asked, and only once.
        let (request, _) = first.tracker().start();
        assert!(slots.make_room(None));
        assert!(second.close.is_cancelled() && !first.close.is_cancelled());
        assert!(slots.make_room(None));
        assert_eq!(second.give_way(), GiveWay::Now);
        drop(second);
        let third = slots.take().expect("the slot given up is free");
        third.mark_read();
        assert_eq!(slots.open(), 2);
        // With the first busy and the third not yet through its headers, the third goes next.
        assert!(slots.make_room(None));
        assert!(third.close.is_cancelled());
        drop(third);
        drop(request);
        assert!(slots.make_room(None));
        assert!(first.close.is_cancelled());
        assert_eq!(first.give_way(), GiveWay::AfterFlush);
    }

    #[tokio::test]
    async fn a_connection_idle_only_since_the_moment_given_is_spared() {
        let slots = Slots::new(1);
        let only = slots.take().unwrap();
        only.mark_read();
        let before = Instant::now();
        drop(only.tracker().start());
        assert!(!slots.make_room(Some(before)));
        assert!(slots.make_room(Some(Instant::now() + std::time::Duration::from_millis(1))));
    }

    #[tokio::test]
    async fn busy_connections_are_never_asked() {
        let slots = Slots::new(1);
        let only = slots.take().unwrap();
        only.mark_read();
        let (_request, _) = only.tracker().start();
        assert!(!slots.make_room(None));
        assert!(!only.close.is_cancelled());
    }

    #[tokio::test]
    async fn a_request_arriving_after_the_choice_is_served_and_another_may_be_asked() {
        let slots = Slots::new(2);
        let first = slots.take().unwrap();
        let second = slots.take().unwrap();
        first.mark_read();
        second.mark_read();
        assert!(slots.make_room(None));
        assert!(first.close.is_cancelled());
        let (_request, _) = first.tracker().start();
        assert_eq!(first.give_way(), GiveWay::AfterRequest);
        assert!(slots.make_room(None));
        assert!(second.close.is_cancelled());
    }
}
