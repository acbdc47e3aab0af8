//! Output bounding: how much of a list one answer shows, whether more remain, and the sentinel
//! that says how to get the rest. The rules (see `docs/output-bounding.md`):
//!
//! - A page shows at most `limit` items, and `limit` is clamped to the cap.
//! - Forgejo pages by offset: page `p` of size `l` holds rows `(p-1)·l+1 ..= p·l`. Exactly `l`
//!   rows are asked for; whether more remain comes from `X-Total-Count` or `Link: rel="next"`.
//!   (Asking for `l+1` and showing `l` would skip a row at every page boundary.)
//! - Endpoints that ignore paging are windowed here with the same arithmetic.
//! - Whenever more remain, a sentinel names the fallback tool and the exact next call.
//!
//! ```
//! use forgelens::engine::bound::{PageRequest, sentinel, Next};
//! let page = PageRequest::new(Some(1), Some(100), 30);
//! assert_eq!((page.page, page.limit), (1, 30));
//! assert_eq!(
//!     sentinel("list_repo_labels", 30, Some(69), Next::Page { page: 2, limit: 30 }),
//!     "[truncated: 30 of 69 items shown. Use list_repo_labels tool with page=2 and limit=30 to fetch more.]",
//! );
//! ```

use serde_json::Value;

/// A validated request for one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u64,
    pub limit: u64,
}

impl PageRequest {
    /// Page 1 and `cap` by default; `limit` is clamped to `cap`.
    pub fn new(page: Option<u64>, limit: Option<u64>, cap: u64) -> PageRequest {
        PageRequest {
            page: page.unwrap_or(1).max(1),
            limit: limit.unwrap_or(cap).clamp(1, cap.max(1)),
        }
    }

    /// Rows before this page.
    pub fn offset(&self) -> u64 {
        (self.page - 1).saturating_mul(self.limit)
    }
}

/// One bounded window of a list: of JSON values, or of references to them when the list is
/// borrowed from a forge answer that other parts of a read still use.
#[derive(Debug, Clone, PartialEq)]
pub struct Window<T = Value> {
    pub items: Vec<T>,
    /// The length of the whole list, when known.
    pub total: Option<u64>,
    pub has_more: bool,
}

/// A page the forge cut: `items` are what it returned for `request`.
pub fn upstream_page<T>(
    mut items: Vec<T>,
    request: PageRequest,
    total: Option<u64>,
    has_next: Option<bool>,
) -> Window<T> {
    // A forge that ignored `limit` returned more than asked; what is beyond is not shown.
    let overflow = items.len() as u64 > request.limit;
    items.truncate(request.limit as usize);
    let shown_to = request.offset() + items.len() as u64;
    let has_more = overflow
        || has_next == Some(true)
        || match total {
            Some(total) => shown_to < total,
            // Nothing says: a full page may have a successor.
            None => has_next.is_none() && items.len() as u64 == request.limit,
        };
    Window {
        items,
        total,
        has_more,
    }
}

/// A page cut here from the whole list (for endpoints that ignore paging).
pub fn server_page<T>(all: Vec<T>, request: PageRequest) -> Window<T> {
    let total = all.len() as u64;
    let start = request.offset().min(total) as usize;
    let end = (request.offset() + request.limit).min(total) as usize;
    let items: Vec<T> = all.into_iter().skip(start).take(end - start).collect();
    Window {
        items,
        total: Some(total),
        has_more: (end as u64) < total,
    }
}

/// The newest `cap` items of a whole list (oldest first, as the forge sends it).
pub fn newest<T>(mut all: Vec<T>, cap: u64) -> Window<T> {
    let total = all.len() as u64;
    let skip = total.saturating_sub(cap) as usize;
    let items = all.split_off(skip);
    Window {
        items,
        total: Some(total),
        has_more: skip > 0,
    }
}

/// How to fetch what a sentinel says was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The following page.
    Page { page: u64, limit: u64 },
    /// The `older` items before the newest ones shown, in pages of at most `max_limit`.
    Older { older: u64, max_limit: u64 },
}

/// The truncation sentinel.
pub fn sentinel(tool: &str, shown: usize, total: Option<u64>, next: Next) -> String {
    let shown_text = match (next, total) {
        (Next::Older { .. }, Some(total)) => format!("the newest {shown} of {total} items shown"),
        (_, Some(total)) => format!("{shown} of {total} items shown"),
        (_, None) => format!("{shown} items shown; more may remain"),
    };
    let how = match next {
        Next::Page { page, limit } => {
            format!("Use {tool} tool with page={page} and limit={limit} to fetch more.")
        }
        Next::Older { older, max_limit } if older <= max_limit => {
            format!(
                "Use {tool} tool with page=1 and limit={older} to fetch the {older} older ones."
            )
        }
        Next::Older { older, max_limit } => {
            let pages = older.div_ceil(max_limit);
            format!(
                "Use {tool} tool with limit={max_limit} and page=1 to page={pages} to fetch the {older} older ones."
            )
        }
    };
    format!("[truncated: {shown_text}. {how}]")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rows(range: std::ops::RangeInclusive<u64>) -> Vec<Value> {
        range.map(|i| json!(i)).collect()
    }

    #[test]
    fn page_requests_clamp() {
        let cases = [
            ((None, None, 30), (1, 30)),
            ((Some(3), Some(10), 30), (3, 10)),
            ((Some(1), Some(500), 30), (1, 30)),
            ((Some(0), Some(0), 30), (1, 1)),
        ];
        for ((page, limit, cap), (p, l)) in cases {
            let r = PageRequest::new(page, limit, cap);
            assert_eq!((r.page, r.limit), (p, l), "{page:?} {limit:?} {cap}");
        }
    }

    #[test]
    fn upstream_pages_know_when_more_remain() {
        let req = PageRequest::new(Some(2), Some(10), 30);
        let w = upstream_page(rows(11..=20), req, Some(25), None);
        assert!(w.has_more);
        let w = upstream_page(
            rows(21..=25),
            PageRequest::new(Some(3), Some(10), 30),
            Some(25),
            None,
        );
        assert!(!w.has_more);
        let w = upstream_page(
            rows(1..=10),
            PageRequest::new(Some(1), Some(10), 30),
            None,
            Some(true),
        );
        assert!(w.has_more);
        let w = upstream_page(
            rows(1..=10),
            PageRequest::new(Some(1), Some(10), 30),
            None,
            Some(false),
        );
        assert!(!w.has_more);
        let w = upstream_page(
            rows(1..=10),
            PageRequest::new(Some(1), Some(10), 30),
            None,
            None,
        );
        assert!(
            w.has_more,
            "a full page with no paging headers may have more"
        );
        let w = upstream_page(
            rows(1..=12),
            PageRequest::new(Some(1), Some(10), 30),
            None,
            Some(false),
        );
        assert_eq!((w.items.len(), w.has_more), (10, true));
    }

    #[test]
    fn server_pages_cover_the_list_once() {
        let all = rows(1..=45);
        let mut seen = Vec::new();
        for page in 1..=5 {
            let w = server_page(all.clone(), PageRequest::new(Some(page), Some(20), 30));
            assert_eq!(w.total, Some(45));
            assert_eq!(w.has_more, page < 3);
            seen.extend(w.items);
        }
        assert_eq!(seen, all);
    }

    #[test]
    fn newest_keeps_the_end() {
        let w = newest(rows(1..=69), 30);
        assert_eq!(w.items.first(), Some(&json!(40)));
        assert_eq!(w.items.last(), Some(&json!(69)));
        assert!(w.has_more);
        assert!(!newest(rows(1..=3), 30).has_more);
    }

    #[test]
    fn sentinels() {
        assert_eq!(
            sentinel("t", 30, None, Next::Page { page: 2, limit: 30 }),
            "[truncated: 30 items shown; more may remain. Use t tool with page=2 and limit=30 to fetch more.]"
        );
        assert_eq!(
            sentinel(
                "list_issue_comments",
                30,
                Some(69),
                Next::Older {
                    older: 39,
                    max_limit: 50
                }
            ),
            "[truncated: the newest 30 of 69 items shown. Use list_issue_comments tool with page=1 and limit=39 to fetch the 39 older ones.]"
        );
        assert_eq!(
            sentinel(
                "c",
                30,
                Some(200),
                Next::Older {
                    older: 170,
                    max_limit: 50
                }
            ),
            "[truncated: the newest 30 of 200 items shown. Use c tool with limit=50 and page=1 to page=4 to fetch the 170 older ones.]"
        );
    }
}
