//! Output bounding: how much of a list one answer shows, whether more remain, and the sentinel
//! that says how to get the rest. The rules (see `docs/output-bounding.md`):
//!
//! - A page shows at most `limit` items, and `limit` is clamped to the cap.
//! - Forgejo pages by offset: page `p` of size `l` holds rows `(p-1)·l+1 ..= p·l`. Exactly `l`
//!   rows are asked for; whether more remain comes from `X-Total-Count` or `Link: rel="next"`.
//!   (Asking for `l+1` and showing `l` would skip a row at every page boundary.)
//! - Endpoints that ignore paging are windowed here with the same arithmetic.
//! - Whenever more remain, a sentinel names the fallback tool and the exact next call.
//! - Every answer also fits a byte budget (`--max-answer-bytes`). A page too large for it
//!   becomes a smaller page at the same offset ([`fit_page`]), so that its continuation is an
//!   ordinary `page`/`limit`; anything else has its largest strings and arrays shortened
//!   ([`fit`]), each cut marked where it happened and listed in the answer.
//!
//! ```
//! use forgelens::engine::bound::{PageRequest, mention, sentinel, Next};
//! let page = PageRequest::new(Some(1), Some(100), 30);
//! assert_eq!((page.page, page.limit), (1, 30));
//! assert_eq!(
//!     sentinel(&mention("list_repo_labels", None), 30, Some(69), Next::Page { page: 2, limit: 30 }),
//!     "[truncated: 30 of 69 items shown. Use list_repo_labels tool with page=2 and limit=30 to fetch more.]",
//! );
//! ```

use serde_json::{Map, Value};

use crate::forge::Request;

/// The names of the paging query pairs, and of the arguments and variables that carry them.
pub const PAGE: &str = "page";
pub const LIMIT: &str = "limit";

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

    /// Asks the forge for this page: `page`, and `limit` unless the forge's page size is its own.
    pub fn ask(&self, request: &mut Request, with_limit: bool) {
        request.query.push((PAGE.into(), self.page.to_string()));
        if with_limit {
            request.query.push((LIMIT.into(), self.limit.to_string()));
        }
    }
}

/// A list page's items fitted to a byte room ([`fit_page`] applied): the page they now are,
/// whether more remain, and whether the room cut the page short.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub page: PageRequest,
    pub total: Option<u64>,
    pub has_more: bool,
    pub items: Vec<Value>,
    pub cut: bool,
}

impl Fitted {
    /// Fits the projected `items` of `window`'s page `page` into `room` bytes.
    pub fn new<T>(window: Window<T>, items: Vec<Value>, page: PageRequest, room: usize) -> Fitted {
        let mut items = items;
        // Most pages are far below the room: their most possible size says so without
        // writing them out; only a page that might not fit is measured item by item.
        let most: usize = items.iter().map(|i| json_size_at_most(i) + 1).sum();
        let fits = match most <= room {
            true => None,
            false => {
                let sizes: Vec<usize> = items.iter().map(json_size).collect();
                fit_page(page, &sizes, room)
            }
        };
        match fits {
            Some(smaller) => {
                items.truncate(smaller.limit as usize);
                Fitted {
                    page: smaller,
                    total: window.total,
                    has_more: true,
                    items,
                    cut: true,
                }
            }
            None => Fitted {
                page,
                total: window.total,
                has_more: window.has_more,
                items,
                cut: false,
            },
        }
    }

    /// The serialized size of the items.
    pub fn size(&self) -> usize {
        self.items.iter().map(json_size).sum::<usize>() + self.items.len()
    }

    /// The envelope every list page answers with, a resource's or a tool's: `page`, the
    /// `limit` used, `total_count` when the forge counts the list, `has_more`, `next_page`
    /// when more remain, and `items`. Each face adds how to go on in its own terms.
    pub fn envelope(self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(PAGE.into(), self.page.page.into());
        out.insert(LIMIT.into(), self.page.limit.into());
        if let Some(total) = self.total {
            out.insert("total_count".into(), total.into());
        }
        out.insert("has_more".into(), self.has_more.into());
        if self.has_more {
            out.insert("next_page".into(), (self.page.page + 1).into());
        }
        out.insert("items".into(), Value::Array(self.items));
        out
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

/// How an answer names the tool to call next, with the meta-tool to call it through when
/// `tools/list` does not show it.
pub fn mention(tool: &str, via: Option<&str>) -> String {
    match via {
        Some(via) => format!("{tool} tool (through {via})"),
        None => format!("{tool} tool"),
    }
}

/// The truncation sentinel; `tool` is the tool as [`mention`] names it.
pub fn sentinel(tool: &str, shown: usize, total: Option<u64>, next: Next) -> String {
    sentinel_with(tool, &[], shown, total, next)
}

/// The truncation sentinel of a filtered list: the next call also names each filter
/// (`state=closed`), so that it continues the same sequence.
pub fn sentinel_with(
    tool: &str,
    filters: &[String],
    shown: usize,
    total: Option<u64>,
    next: Next,
) -> String {
    let with: String = filters.iter().map(|f| format!("{f}, ")).collect();
    let shown_text = match (next, total) {
        (Next::Older { .. }, Some(total)) => format!("the newest {shown} of {total} items shown"),
        (_, Some(total)) => format!("{shown} of {total} items shown"),
        (_, None) => format!("{shown} items shown; more may remain"),
    };
    let how = match next {
        Next::Page { page, limit } => {
            format!("Use {tool} with {with}page={page} and limit={limit} to fetch more.")
        }
        Next::Older { older, max_limit } if older <= max_limit => {
            format!("Use {tool} with page=1 and limit={older} to fetch the {older} older ones.")
        }
        Next::Older { older, max_limit } => {
            let pages = older.div_ceil(max_limit);
            format!(
                "Use {tool} with limit={max_limit} and page=1 to page={pages} to fetch the {older} older ones."
            )
        }
    };
    format!("[truncated: {shown_text}. {how}]")
}

/// The size of `value`'s JSON text, as an agent reads it.
pub fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value).expect("a JSON value always serializes");
    count.0
}

/// A size `value`'s JSON text never exceeds, found without writing it: a string's every byte
/// written as a six-byte escape at worst, every number as long as the longest one serde_json
/// writes.
pub fn json_size_at_most(value: &Value) -> usize {
    let string = |s: &str| 2 + 6 * s.len();
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => string(s),
        Value::Array(items) => {
            2 + items
                .iter()
                .map(|i| json_size_at_most(i) + 1)
                .sum::<usize>()
        }
        Value::Object(members) => {
            2 + members
                .iter()
                .map(|(k, v)| string(k) + 1 + json_size_at_most(v) + 1)
                .sum::<usize>()
        }
    }
}

/// The page to show instead of `page` when its items (of these serialized sizes) do not fit in
/// `room` bytes: the largest that fits and starts at the same row, with a size that divides its
/// offset, so that the next page at that size continues exactly. `None` when everything fits.
/// A single item too large for the room still makes a page of one (then cut by [`fit`]): `None`
/// when that is all the page holds.
pub fn fit_page(page: PageRequest, sizes: &[usize], room: usize) -> Option<PageRequest> {
    let mut used = 0;
    let fitting = sizes
        .iter()
        .take_while(|&&size| {
            used += size + 1;
            used <= room
        })
        .count();
    if fitting == sizes.len() {
        return None;
    }
    let offset = page.offset();
    let most = fitting.max(1) as u64;
    let limit = match offset {
        0 => most,
        _ => (1..=most)
            .rev()
            .find(|d| offset.is_multiple_of(*d))
            .unwrap_or(1),
    };
    // A page of one that does not fit stays a page of one; its item is then cut by `fit`.
    (limit < sizes.len() as u64).then_some(PageRequest {
        page: offset / limit + 1,
        limit,
    })
}

/// What [`fit`] cut: where, and how much of how much is left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub path: String,
    pub kept: usize,
    pub of: usize,
    pub unit: &'static str,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` holds {} of {} {}",
            self.path, self.kept, self.of, self.unit
        )
    }
}

/// Shortens `value` until its JSON text fits in `room` bytes: the largest string keeps its
/// start and ends with a marker saying how much of it is shown; the largest array (of more than
/// one item) keeps its first items. A string is cut once; an array may be cut again. The cuts
/// are returned largest first. At most [`MAX_CUTS`] rounds are made, so an answer of countless
/// tiny parts costs bounded time (and may stay a little over).
pub fn fit(value: &mut Value, room: usize) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    for _ in 0..MAX_CUTS {
        let size = json_size(value);
        if size <= room {
            break;
        }
        let mut best: Option<(usize, Vec<Step>)> = None;
        let mut path = Vec::new();
        largest(value, &mut path, &cuts, &mut best);
        let Some((node_size, steps)) = best else {
            break;
        };
        let excess = size - room;
        let name = render_path(&steps);
        let Some(node) = walk(value, &steps) else {
            break;
        };
        let cut = match node {
            Value::String(text) => {
                let of = text.chars().count();
                let target = node_size.saturating_sub(excess);
                // The longest start whose JSON text, marker and all, fits: escapes make the
                // text longer than the string, so each try is measured.
                let marked = |keep: usize| {
                    let kept = text[..keep].chars().count();
                    format!("{} … [cut: {kept} of {of} characters shown]", &text[..keep])
                };
                let (mut low, mut high) = (0, text.len());
                while low < high {
                    let mut middle = (low + high).div_ceil(2);
                    while !text.is_char_boundary(middle) {
                        middle -= 1;
                    }
                    if middle <= low {
                        break;
                    }
                    match json_size(&Value::String(marked(middle))) <= target {
                        true => low = middle,
                        false => high = middle - 1,
                    }
                }
                while !text.is_char_boundary(low) {
                    low -= 1;
                }
                let kept = text[..low].chars().count();
                *text = marked(low);
                Cut {
                    path: name,
                    kept,
                    of,
                    unit: "characters",
                }
            }
            Value::Array(items) => {
                let target = node_size.saturating_sub(excess);
                // `[`, `]`, and a comma before every item but the first.
                let mut used = 1;
                let kept = items
                    .iter()
                    .take_while(|item| {
                        used += json_size(item) + 1;
                        used <= target
                    })
                    .count()
                    .max(1);
                let of = match cuts.iter().position(|c| c.path == name) {
                    Some(earlier) => cuts.remove(earlier).of,
                    None => items.len(),
                };
                items.truncate(kept);
                Cut {
                    path: name,
                    kept,
                    of,
                    unit: "items",
                }
            }
            _ => break,
        };
        cuts.push(cut);
    }
    cuts
}

/// The most rounds [`fit`] makes.
const MAX_CUTS: usize = 64;

/// The sentence an answer cut by [`fit`] carries.
pub fn fit_note(budget: usize, cuts: &[Cut]) -> String {
    let list: Vec<String> = cuts.iter().map(Cut::to_string).collect();
    format!(
        "[truncated to stay under {budget} bytes: {}. Ask for less at once (a page, a line range, a filter, one item) to see the rest.]",
        list.join("; ")
    )
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn render_path(steps: &[Step]) -> String {
    let mut out = String::from("$");
    for step in steps {
        match step {
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn walk<'v>(value: &'v mut Value, steps: &[Step]) -> Option<&'v mut Value> {
    steps
        .iter()
        .try_fold(value, |node, step| match (step, node) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        })
}

/// The size of `value`'s JSON text, noting in `best` the largest string not cut yet or array
/// of more than one item.
fn largest(
    value: &Value,
    path: &mut Vec<Step>,
    cut: &[Cut],
    best: &mut Option<(usize, Vec<Step>)>,
) -> usize {
    let size = match value {
        Value::Object(map) => {
            // `{`, `}`, a colon per entry and a comma between entries.
            let mut size = 2 + map.len().saturating_sub(1);
            for (key, inner) in map {
                path.push(Step::Key(key.clone()));
                size +=
                    json_size(&Value::String(key.clone())) + 1 + largest(inner, path, cut, best);
                path.pop();
            }
            size
        }
        Value::Array(items) => {
            let mut size = 2 + items.len().saturating_sub(1);
            for (i, inner) in items.iter().enumerate() {
                path.push(Step::Index(i));
                size += largest(inner, path, cut, best);
                path.pop();
            }
            size
        }
        other => json_size(other),
    };
    let candidate = match value {
        Value::String(_) => !cut
            .iter()
            .any(|c| c.unit == "characters" && c.path == render_path(path)),
        Value::Array(items) => items.len() > 1,
        _ => false,
    };
    if candidate && best.as_ref().is_none_or(|(b, _)| size > *b) {
        *best = Some((size, path.clone()));
    }
    size
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
            sentinel(
                &mention("t", None),
                30,
                None,
                Next::Page { page: 2, limit: 30 }
            ),
            "[truncated: 30 items shown; more may remain. Use t tool with page=2 and limit=30 to fetch more.]"
        );
        assert_eq!(
            sentinel(
                &mention("list_issue_comments", Some("call_read_tool")),
                30,
                Some(69),
                Next::Older {
                    older: 39,
                    max_limit: 50
                }
            ),
            "[truncated: the newest 30 of 69 items shown. Use list_issue_comments tool (through call_read_tool) with page=1 and limit=39 to fetch the 39 older ones.]"
        );
        assert_eq!(
            sentinel(
                &mention("c", None),
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

    #[test]
    fn a_page_too_large_becomes_a_smaller_page_at_the_same_offset() {
        let sizes = vec![100; 30];
        // Page 1: the first items that fit, and the next page at that size starts after them.
        let first = fit_page(PageRequest::new(Some(1), Some(30), 30), &sizes, 1_000).unwrap();
        assert_eq!((first.page, first.limit), (1, 9));
        // Page 3 of 30 starts at row 61: the page size divides 60, so page 11 of 6 is that row.
        let later = fit_page(PageRequest::new(Some(3), Some(30), 30), &sizes, 1_000).unwrap();
        assert_eq!((later.page, later.limit), (11, 6));
        assert_eq!(later.offset(), 60);
        assert_eq!(
            fit_page(PageRequest::new(Some(2), Some(30), 30), &sizes, 10_000),
            None
        );
        let huge = fit_page(PageRequest::new(Some(2), Some(5), 30), &[5_000; 5], 1_000).unwrap();
        assert_eq!((huge.page, huge.limit), (6, 1));
    }

    #[test]
    fn fit_cuts_the_largest_parts_and_says_where() {
        let mut value = json!({
            "title": "short",
            "body": "x".repeat(10_000),
            "items": (0..100).map(|i| json!({"n": i})).collect::<Vec<_>>(),
        });
        let cuts = fit(&mut value, 2_000);
        assert!(json_size(&value) <= 2_000, "{}", json_size(&value));
        assert_eq!(cuts[0].path, "$.body");
        assert_eq!(cuts[0].of, 10_000);
        assert!(value["body"].as_str().unwrap().ends_with(&format!(
            "[cut: {} of 10000 characters shown]",
            cuts[0].kept
        )));
        assert_eq!(value["title"], "short");
        let note = fit_note(2_000, &cuts);
        assert!(note.contains("`$.body` holds"), "{note}");
        let mut small = json!({"a": "b"});
        assert!(fit(&mut small, 100).is_empty());
    }

    #[test]
    fn fit_measures_exactly_and_cuts_a_long_array_in_one_go() {
        let tree: Vec<Value> = (0..20_000)
            .map(|i| json!({"path": format!("src/m{i}/f.rs"), "type": "blob"}))
            .collect();
        let mut value = json!({"sha": "abc", "tree": tree});
        let mut path = Vec::new();
        let mut best = None;
        assert_eq!(
            largest(&value, &mut path, &[], &mut best),
            json_size(&value)
        );
        let cuts = fit(&mut value, 10_000);
        assert!(json_size(&value) <= 10_000);
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert_eq!((cuts[0].path.as_str(), cuts[0].of), ("$.tree", 20_000));
    }

    proptest::proptest! {
        // Each case serializes a few kilobytes many times over: fewer cases keep it quick.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A fitted page starts at the row asked for, holds fewer items than were given, and
        /// fits (unless one item alone does not); without a fitted page, everything fits or the
        /// page was one item.
        #[test]
        fn a_fitted_page_starts_where_it_was_asked_and_fits(
            page in 1u64..50,
            limit in 1u64..50,
            sizes in proptest::collection::vec(1usize..5_000, 1..50),
            room in 100usize..60_000,
        ) {
            let request = PageRequest { page, limit };
            let sizes = &sizes[..sizes.len().min(limit as usize)];
            let used = |n: usize| sizes[..n].iter().map(|s| s + 1).sum::<usize>();
            match fit_page(request, sizes, room) {
                Some(smaller) => {
                    proptest::prop_assert_eq!(smaller.offset(), request.offset());
                    proptest::prop_assert!((smaller.limit as usize) < sizes.len());
                    proptest::prop_assert!(smaller.limit == 1 || used(smaller.limit as usize) <= room);
                }
                // Everything fits, or the page is one item (which `fit` then cuts).
                None => proptest::prop_assert!(used(sizes.len()) <= room || sizes.len() == 1),
            }
        }

        /// No value's JSON text is longer than its most possible size.
        #[test]
        fn no_answer_is_longer_than_its_most_possible_size(
            text in "(\\PC|[\u{0}-\u{1f}\"\\\\])*",
            numbers in proptest::collection::vec(proptest::num::f64::ANY, 0..4),
            ints in proptest::collection::vec(proptest::num::i64::ANY, 0..4),
        ) {
            let value = json!({text.clone(): [text, numbers, ints, null, true, {"": u64::MAX}]});
            proptest::prop_assert!(json_size(&value) <= json_size_at_most(&value));
        }

        /// Whatever its strings and arrays, a fitted answer fits.
        #[test]
        fn a_fitted_answer_fits(
            body in ".{0,3000}",
            rows in proptest::collection::vec("[a-z\"\\\\]{0,200}", 0..300),
            room in 600usize..20_000,
        ) {
            let mut value = json!({"title": "t", "body": body, "rows": rows});
            fit(&mut value, room);
            proptest::prop_assert!(json_size(&value) <= room, "{} > {room}", json_size(&value));
        }
    }
}
