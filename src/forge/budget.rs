//! The forge's request budget per token: at most N requests in any period (`--forge-rate
//! N/PERIOD`), and after the forge answered `429` with `Retry-After`, none for that token until
//! then. A proxy in front of the forge (Codeberg's, or an operator's) limits per token; keeping
//! under its limit spares every user of the token the errors.
//!
//! With a shared store ([`RedisStore`]) the budget is one for every replica: a script in the
//! store counts each request of a token in a sliding window, so replicas never race, and a
//! hold after a `429` reaches them all. Without one, or while the store does not answer, the
//! same rules are kept in this process (the store logs the change once).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Token;
use crate::store::redis::RedisStore;

/// Most tokens whose windows are kept in this process before idle ones are dropped.
const MAX_LOCAL_TOKENS: usize = 4096;

/// `N` requests per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub count: u32,
    pub period: Duration,
}

impl Rate {
    /// `N/PERIOD`: a count, then a period as `s`, `m` or `h`, with a number in front when it
    /// is more than one (`600/m`, `100/10s`, `5000/h`).
    pub fn parse(text: &str) -> Result<Rate, String> {
        let shape =
            || format!("`{text}` is not a rate: write N/PERIOD, like 600/m, 100/10s or 5000/h");
        let (count, period) = text.trim().split_once('/').ok_or_else(shape)?;
        let count: u32 = count.trim().parse().map_err(|_| shape())?;
        let period = period.trim();
        let unit_at = period
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(shape)?;
        let (number, unit) = period.split_at(unit_at);
        let number: u64 = match number {
            "" => 1,
            n => n.parse().map_err(|_| shape())?,
        };
        let unit = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            _ => return Err(shape()),
        };
        if count == 0 || number == 0 {
            return Err(format!("`{text}` allows no request at all"));
        }
        Ok(Rate {
            count,
            period: Duration::from_secs(number * unit),
        })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}s", self.count, self.period.as_secs())
    }
}

/// Whether a request may go to the forge now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Go,
    /// The forge answered `429` for this token and asked for this wait.
    Held(Duration),
    /// The token sent all its rate allows; one more may go after this wait.
    Spent(Duration),
}

impl Admission {
    /// How long until a request may go.
    pub fn wait(self) -> Duration {
        match self {
            Admission::Go => Duration::ZERO,
            Admission::Held(wait) | Admission::Spent(wait) => wait,
        }
    }
}

/// One token's requests in this process.
#[derive(Debug, Default)]
struct Window {
    sent: VecDeque<Instant>,
    held_until: Option<Instant>,
}

impl Window {
    fn idle(&self, now: Instant, period: Duration) -> bool {
        self.held_until.is_none_or(|until| until <= now)
            && self.sent.back().is_none_or(|last| *last + period <= now)
    }
}

/// The budget of every token, kept here or in the shared store.
#[derive(Debug, Default)]
pub struct Budget {
    rate: Option<Rate>,
    shared: Option<Arc<RedisStore>>,
    local: Mutex<HashMap<Option<String>, Window>>,
}

impl Budget {
    pub fn new(rate: Option<Rate>) -> Budget {
        Budget {
            rate,
            ..Budget::default()
        }
    }

    /// Keeps the budget in `store`, for every replica that shares it.
    pub fn share(&mut self, store: Arc<RedisStore>) {
        self.shared = Some(store);
    }

    pub fn rate(&self) -> Option<Rate> {
        self.rate
    }

    /// Whether there is a budget to keep at all: a rate, or replicas to tell about a `429`.
    fn kept(&self) -> bool {
        self.rate.is_some() || self.shared.is_some()
    }

    /// Whether a request with `token` may go now (and then it is counted), or how long until
    /// one may.
    pub async fn admit(&self, token: Option<&Token>) -> Admission {
        if !self.kept() {
            return Admission::Go;
        }
        if let Some(store) = &self.shared {
            let limit = self.rate.map(|r| (r.count, r.period));
            let admitted = match store.name(&[b"budget", secret(token)]).await {
                Ok(who) => store.admit(&who, limit).await,
                Err(e) => Err(e),
            };
            if let Ok(admission) = admitted {
                return admission;
            }
        }
        self.admit_here(token, Instant::now())
    }

    fn admit_here(&self, token: Option<&Token>, now: Instant) -> Admission {
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        let period = self.rate.map_or(Duration::ZERO, |r| r.period);
        if local.len() >= MAX_LOCAL_TOKENS {
            local.retain(|_, window| !window.idle(now, period));
        }
        let window = local
            .entry(token.map(|t| t.secret().to_owned()))
            .or_default();
        if let Some(until) = window.held_until.filter(|until| *until > now) {
            return Admission::Held(until - now);
        }
        let Some(rate) = self.rate else {
            return Admission::Go;
        };
        while window.sent.front().is_some_and(|t| *t + rate.period <= now) {
            window.sent.pop_front();
        }
        if window.sent.len() < rate.count as usize {
            window.sent.push_back(now);
            return Admission::Go;
        }
        let oldest = *window
            .sent
            .front()
            .expect("a full window has a first entry");
        Admission::Spent((oldest + rate.period - now).max(Duration::from_millis(1)))
    }

    /// Holds every request with `token` back for `wait`, on every replica: the forge
    /// answered `429` and asked for it. Whether a hold is kept at all (a rate or a store).
    pub async fn hold(&self, token: Option<&Token>, wait: Duration) -> bool {
        if !self.kept() {
            return false;
        }
        if let Some(store) = &self.shared
            && let Ok(who) = store.name(&[b"budget", secret(token)]).await
            && store.hold(&who, wait).await.is_ok()
        {
            return true;
        }
        let mut local = self.local.lock().unwrap_or_else(|p| p.into_inner());
        let window = local
            .entry(token.map(|t| t.secret().to_owned()))
            .or_default();
        window.held_until = Some(Instant::now() + wait);
        true
    }
}

/// What names a token's budget: its text (hashed by the store), or nothing for anonymous
/// requests, which share one budget.
fn secret(token: Option<&Token>) -> &[u8] {
    token.map_or(b"".as_slice(), |t| t.secret().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rates_read_as_written() {
        let rate = |text| Rate::parse(text);
        assert_eq!(
            rate("600/m"),
            Ok(Rate {
                count: 600,
                period: Duration::from_secs(60)
            })
        );
        assert_eq!(rate(" 100 / 10s ").unwrap().period, Duration::from_secs(10));
        assert_eq!(rate("5000/h").unwrap().period, Duration::from_secs(3600));
        for bad in [
            "600", "600/", "x/m", "600/10", "600/d", "0/m", "5/0s", "-1/m",
        ] {
            assert!(rate(bad).is_err(), "{bad}");
        }
        assert!(rate("0/m").unwrap_err().contains("no request"));
    }

    proptest! {
        /// However requests arrive, no period-long span ever holds more than the rate allows,
        /// and a refused request is told a wait after which it is admitted.
        #[test]
        fn no_period_holds_more_than_the_rate(
            count in 1u32..6,
            period_ms in 10u64..200,
            gaps in proptest::collection::vec(0u64..80, 1..80),
        ) {
            let rate = Rate { count, period: Duration::from_millis(period_ms) };
            let budget = Budget::new(Some(rate));
            let start = Instant::now();
            let mut now = start;
            let mut admitted = Vec::new();
            for gap in gaps {
                now += Duration::from_millis(gap);
                let wait = budget.admit_here(None, now).wait();
                if wait.is_zero() {
                    admitted.push(now);
                } else {
                    prop_assert!(wait <= rate.period);
                    prop_assert_eq!(budget.admit_here(None, now + wait), Admission::Go);
                    admitted.push(now + wait);
                    now += wait;
                }
            }
            for (i, first) in admitted.iter().enumerate() {
                let within = admitted[i..].iter().filter(|t| **t < *first + rate.period).count();
                prop_assert!(within <= count as usize, "{within} requests within one period");
            }
        }
    }

    #[test]
    fn a_hold_stops_every_request_of_its_token_and_no_other() {
        let budget = Budget::new(Some(Rate {
            count: 100,
            period: Duration::from_secs(1),
        }));
        let (a, b) = (Token::new("a").unwrap(), Token::new("b").unwrap());
        futures::executor::block_on(budget.hold(Some(&a), Duration::from_secs(30)));
        let now = Instant::now();
        let held = budget.admit_here(Some(&a), now);
        assert!(
            matches!(held, Admission::Held(wait) if wait > Duration::from_secs(29)),
            "{held:?}"
        );
        assert_eq!(budget.admit_here(Some(&b), now), Admission::Go);
        assert_eq!(
            budget.admit_here(Some(&a), now + Duration::from_secs(31)),
            Admission::Go
        );
    }

    #[test]
    fn without_a_rate_or_a_store_nothing_is_counted() {
        let budget = Budget::new(None);
        let token = Token::new("a").unwrap();
        futures::executor::block_on(budget.hold(Some(&token), Duration::from_secs(30)));
        assert_eq!(
            futures::executor::block_on(budget.admit(Some(&token))),
            Admission::Go
        );
    }
}
