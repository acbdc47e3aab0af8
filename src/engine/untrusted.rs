//! Text written by forge users, made visible for what it is before an agent reads it.
//!
//! Fields a manifest marks with `| untrusted` are passed through [`neutralize`]: what a human
//! looking at the forge would not see is made visible, in place, so that nothing changes
//! silently. The markup is judged the way real renderers would treat it — a browser's HTML
//! tokenizer, a CommonMark renderer with raw HTML on — and where they could disagree, the
//! reading that hides or fetches more wins.
//!
//! - Characters: invisible and format characters (zero-width, bidirectional controls, the BOM,
//!   soft hyphens, fillers, the braille blank, private-use characters, noncharacters) and
//!   control characters other than newline and tab become escapes such as `\u{202e}`; a run of
//!   Unicode tag characters (which can spell text no one sees) becomes `[tag characters: "…"]`.
//!   A joiner or variation selector is kept only where it changes what is seen: a zero-width
//!   joiner inside an emoji sequence or between two letters of one joining or Indic script, a
//!   non-joiner between two such letters, one U+FE0E/U+FE0F right after a pictograph (or in a
//!   keycap). Anywhere else they could carry a message one bit or more at a time.
//! - Images, in any text (a client may render it wherever it is shown again): every `![` stays
//!   an image only if it is, on one line and in a form no renderer reads otherwise, an inline
//!   image whose address — raw, with entities decoded, with backslash escapes undone — joins
//!   onto `https://{instance_host}/` as the forge's own host. Every other `![` becomes
//!   `[image link: …`, so a parse got wrong leaves a link, never an outside image.
//! - HTML tags, in any text, are read as a browser's tokenizer reads them. A start tag with an
//!   attribute that makes a renderer fetch (`src`, `srcset`, `poster`, `data`, `background`,
//!   `href` anywhere but on a link, a `style` with `url(`…) from another host becomes
//!   `[image link](url)`, one link per outside address. A tag that text ends inside, or whose
//!   fetches cannot be judged, is defused: its `<` is written `&lt;` (inside an HTML block
//!   backslash escapes do not work, an entity does).
//! - Hidden markup, in markdown only (plain text keeps its markup): an HTML comment becomes
//!   `[hidden comment: …]` with its content defused; processing instructions, declarations,
//!   bogus comments, tags not on a short list of visible formatting tags, and tags with an
//!   attribute outside a small safe set (`hidden`, `style`, `on…`, `dir`, `class`…) become
//!   `[hidden markup] &lt;…`; a line that could be a link reference definition (which renders
//!   as nothing, so it makes a comment) gets `[hidden markup] ` in front of its `[`.
//! - What is left as it was is scanned as text too, so that markup inside an attribute a
//!   renderer might show as text is judged as well; whatever the scan writes is itself inert,
//!   so neutralizing twice changes nothing more. Code spans and blocks get no exemption:
//!   renderers disagree on where they end, and an exemption got wrong would leave markup live.
//!   Text that would make the tag tokenizer quadratic is handled bluntly instead (every `<`
//!   that could open markup defused, every `![` made a link).
//!
//! Blocks of text that hold such fields are then wrapped by [`Envelope`] in tags with a
//! per-answer random boundary, naming what the text is, who wrote it and where it is from; text
//! inside cannot close a tag whose name it cannot know.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;

use url::Url;

/// How a text is shown by the forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// Rendered as markdown (bodies, comments, release notes, wiki pages).
    Markdown,
    /// Shown as it is (titles, names, commit messages, file contents, logs).
    Plain,
}

/// `text` with what a reader of the forge would not see made visible. `instance_host` is the
/// forge's host: images it serves stay images.
pub fn neutralize<'t>(text: &'t str, rendering: Rendering, instance_host: &str) -> Cow<'t, str> {
    if inert(text) {
        return Cow::Borrowed(text);
    }
    // Characters first: the text that tag characters spell is then judged as markup too.
    let escaped = escape_hidden(text);
    let current = escaped.as_deref().unwrap_or(text);
    match surface_markup(current, rendering, instance_host) {
        Some(surfaced) => Cow::Owned(surfaced),
        None => escaped.map_or(Cow::Borrowed(text), Cow::Owned),
    }
}

/// Whether nothing in `text` can need neutralizing, nor hold a credential in an address: it is
/// printable ASCII (newlines and tabs included) without a byte that markup (`<`, `![`, `]:`) or
/// a user part (`@`) starts with. Most strings of an answer are (names, dates, states, hashes,
/// plain sentences), and every string of every answer is asked: one table lookup per byte, with
/// no early exit (nearly every string asked is inert, so the exit would only cost a branch per
/// byte), answers for them, where the full checks pass over the text three times.
pub fn inert(text: &str) -> bool {
    text.bytes().fold(true, |ok, b| ok & INERT[usize::from(b)])
}

const fn inert_byte(b: u8) -> bool {
    let printable = b >= b' ' && b <= b'~' && b != b'<' && b != b'!' && b != b']' && b != b'@';
    printable || b == b'\n' || b == b'\t'
}

static INERT: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = inert_byte(b as u8);
        b += 1;
    }
    table
};

// --- Characters -------------------------------------------------------------------------------

/// Whether `c` is invisible, changes how the text around it is shown, or carries no meaning a
/// reader could see (private use, noncharacters).
fn hidden(c: char) -> bool {
    // Below the soft hyphen only control characters hide anything: most text ends here.
    if (c as u32) < 0xAD {
        return c.is_control() && c != '\n' && c != '\t';
    }
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{2800}' | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFFB}' | '\u{0600}'..='\u{0605}' | '\u{06DD}' | '\u{070F}'
        | '\u{0890}' | '\u{0891}' | '\u{08E2}' | '\u{110BD}' | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}' | '\u{16FE4}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D159}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}'
        // Private use: no reader sees anything agreed on there.
        | '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{10FFFF}'
        // Noncharacters.
        | '\u{FDD0}'..='\u{FDEF}')
        || (c as u32) & 0xFFFE == 0xFFFE
        || c.is_control()
}

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}')
}

/// Pictographs that take part in emoji sequences (and their skin-tone modifiers, which sit in
/// the first range).
fn pictographic(c: char) -> bool {
    matches!(c,
        '\u{1F000}'..='\u{1FAFF}' | '\u{2600}'..='\u{27BF}' | '\u{2300}'..='\u{23FF}'
        | '\u{2B00}'..='\u{2BFF}' | '\u{2190}'..='\u{21FF}' | '\u{25A0}'..='\u{25FF}'
        | '\u{00A9}' | '\u{00AE}' | '\u{203C}' | '\u{2049}' | '\u{2122}' | '\u{2139}'
        | '\u{24C2}' | '\u{2934}' | '\u{2935}' | '\u{3030}' | '\u{303D}' | '\u{3297}'
        | '\u{3299}')
}

/// The joining or Indic script whose shaping a joiner between two of its letters changes: one
/// number for the Arabic blocks, one for Syriac, one per Indic block.
fn joining_script(c: char) -> Option<u32> {
    match c {
        '\u{0600}'..='\u{06FF}'
        | '\u{0750}'..='\u{077F}'
        | '\u{0870}'..='\u{08FF}'
        | '\u{FB50}'..='\u{FDFF}'
        | '\u{FE70}'..='\u{FEFE}' => Some(0),
        '\u{0700}'..='\u{074F}' => Some(1),
        '\u{0900}'..='\u{0DFF}' => Some(c as u32 >> 7),
        _ => None,
    }
}

fn same_joining_script(a: Option<char>, b: Option<char>) -> bool {
    let script = |x: Option<char>| x.filter(|x| !hidden(*x)).and_then(joining_script);
    script(a).is_some() && script(a) == script(b)
}

/// Whether the joiner or selector `c`, after `before` and `prev` and before `next`, changes what
/// is seen, and so is kept. Everywhere else it is an invisible carrier.
fn kept_in_context(c: char, before: Option<char>, prev: Option<char>, next: Option<char>) -> bool {
    let is_pictographic = |x: Option<char>| x.is_some_and(pictographic);
    match c {
        '\u{200D}' => {
            // An emoji before the joiner may carry its presentation selector.
            let emoji_before =
                is_pictographic(prev) || (prev == Some('\u{FE0F}') && is_pictographic(before));
            (emoji_before && is_pictographic(next)) || same_joining_script(prev, next)
        }
        '\u{200C}' => same_joining_script(prev, next),
        '\u{FE0E}' | '\u{FE0F}' => {
            let keycap = c == '\u{FE0F}'
                && prev.is_some_and(|p| matches!(p, '0'..='9' | '#' | '*'))
                && next == Some('\u{20E3}');
            is_pictographic(prev) || keycap
        }
        _ => false,
    }
}

/// The text with hidden characters escaped, or `None` when it has none.
fn escape_hidden(text: &str) -> Option<String> {
    // Printable ASCII, newlines and tabs hide nothing: the bytes are scanned up to the first
    // that is anything else (fast), and only the text from there is decoded and looked at.
    let start = text
        .bytes()
        .position(|b| !matches!(b, b' '..=b'~' | b'\n' | b'\t'))?;
    let suspect = |c: char| hidden(c) || is_variation_selector(c) || c == '\r';
    if !text[start..].chars().any(suspect) {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    let at = |k: Option<usize>| k.and_then(|k| chars.get(k).copied());
    let mut out = String::with_capacity(text.len() + 16);
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_tag(c) {
            let start = i;
            while i < chars.len() && is_tag(chars[i]) {
                i += 1;
            }
            let spelled: String = chars[start..i]
                .iter()
                .filter_map(|t| char::from_u32(*t as u32 - 0xE0000))
                .filter(|t| t.is_ascii_graphic() || *t == ' ')
                .collect();
            out.push_str("[tag characters: \"");
            out.push_str(&spelled);
            out.push_str("\"]");
            changed = true;
            continue;
        }
        let escape = match c {
            // A line end written CRLF is an ordinary line end.
            '\r' => at(Some(i + 1)) != Some('\n'),
            c if suspect(c) => !kept_in_context(
                c,
                at(i.checked_sub(2)),
                at(i.checked_sub(1)),
                at(Some(i + 1)),
            ),
            _ => false,
        };
        if escape {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
            changed = true;
        } else {
            out.push(c);
        }
        i += 1;
    }
    changed.then_some(out)
}

// --- Markup -----------------------------------------------------------------------------------

/// The text with outside images and fetches made links and, in markdown, hidden markup
/// surfaced; `None` when nothing needed it.
fn surface_markup(text: &str, rendering: Rendering, instance_host: &str) -> Option<String> {
    let markdown = rendering == Rendering::Markdown;
    if !has_markup(text.as_bytes(), markdown) {
        return None;
    }
    let forge = Forge::new(instance_host);
    let scanned = Scanner::run(text, markdown, &forge);
    if !markdown {
        return scanned;
    }
    let current = scanned.as_deref().unwrap_or(text);
    surface_definitions(current).or(scanned)
}

/// Whether the bytes hold anything markup could start with: `<`, `![` or (in markdown) `]:`.
fn has_markup(bytes: &[u8], markdown: bool) -> bool {
    // Every string of every answer is asked: skip to the three bytes that can start markup.
    memchr::memchr3_iter(b'<', b'!', b']', bytes).any(|i| match bytes[i] {
        b'<' => true,
        b'!' => bytes.get(i + 1) == Some(&b'['),
        _ => markdown && bytes.get(i + 1) == Some(&b':'),
    })
}

/// The forge's own address, which relative addresses are joined onto.
struct Forge {
    base: Url,
}

impl Forge {
    fn new(instance_host: &str) -> Forge {
        let base = Url::parse(&format!("https://{instance_host}/"))
            .ok()
            .filter(|u| u.host_str().is_some_and(|h| !h.is_empty()))
            // Without a host of its own a forge still serves relative addresses; this host
            // (reserved, never resolved) stands for it.
            .unwrap_or_else(|| {
                Url::parse("https://forge.invalid/").expect("a constant URL parses")
            });
        Forge { base }
    }

    /// Whether `address`, as the browser resolves it, is on the forge's host.
    fn lands(&self, address: &str) -> bool {
        self.base
            .join(address)
            .is_ok_and(|u| u.host_str() == self.base.host_str())
    }

    /// Whether every address in `raw` is the forge's, however a renderer reads it: as it is,
    /// with character references decoded (strictly, as CommonMark does, or leniently, as a
    /// browser does in attributes) and with or without backslash escapes undone.
    fn hosts(&self, raw: &str, split: Split) -> bool {
        if !raw.contains(['&', '\\']) {
            return self.all_land(raw, split);
        }
        let mut judged: Vec<Cow<str>> = Vec::with_capacity(6);
        for refs in [Refs::Kept, Refs::Strict, Refs::Lenient] {
            for backslashes in [false, true] {
                let reading = decode(raw, refs, backslashes);
                if judged.contains(&reading) {
                    continue;
                }
                if !self.all_land(&reading, split) {
                    return false;
                }
                judged.push(reading);
            }
        }
        true
    }

    fn all_land(&self, reading: &str, split: Split) -> bool {
        match split {
            Split::One => self.lands(reading),
            // Every whitespace-separated token, whole, without the separator around it and cut
            // at it: a superset of what a `srcset` parser takes as its addresses.
            Split::List(separator) => {
                reading
                    .split(is_html_space)
                    .filter(|t| !t.is_empty())
                    .all(|t| {
                        self.lands(t)
                            && self.lands(t.trim_matches(separator))
                            && t.split(separator).all(|p| self.lands(p))
                    })
            }
            Split::Refresh => refresh_target(reading).is_none_or(|t| self.lands(t)),
        }
    }

    /// The addresses a `style` (attribute or element) would fetch that are not the forge's, or
    /// `None` when that cannot be told (a CSS escape can spell anything).
    fn outside_in_css(&self, css: &str) -> Option<Vec<String>> {
        let mut outside = Vec::new();
        for reading in [
            decode(css, Refs::Kept, false),
            decode(css, Refs::Lenient, false),
        ] {
            if reading.contains('\\') {
                return None;
            }
            for address in css_addresses(&reading) {
                if !self.hosts(address, Split::One) {
                    push_new(&mut outside, shown(address));
                }
            }
        }
        Some(outside)
    }
}

/// How an attribute holds its addresses.
#[derive(Clone, Copy)]
enum Split {
    One,
    /// Candidates separated by this character and whitespace (`srcset`, SVG `values`).
    List(char),
    /// A `<meta http-equiv=refresh>` content: a delay, then the address.
    Refresh,
}

fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C')
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// The address a refresh `content` sends the page to, if any: after the delay and a `;` or
/// `,`, with or without `url=`.
fn refresh_target(content: &str) -> Option<&str> {
    let rest = content
        .trim_start_matches(is_html_space)
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
        .trim_start_matches(is_html_space);
    let rest = rest
        .strip_prefix([';', ','])
        .unwrap_or(rest)
        .trim_start_matches(is_html_space);
    let rest = match rest.get(..3) {
        Some(word) if word.eq_ignore_ascii_case("url") => {
            match rest[3..]
                .trim_start_matches(is_html_space)
                .strip_prefix('=')
            {
                Some(after) => after.trim_start_matches(is_html_space),
                None => rest,
            }
        }
        _ => rest,
    };
    let rest = rest.trim_matches(['"', '\'']).trim_matches(is_html_space);
    (!rest.is_empty()).then_some(rest)
}

/// What in CSS could be fetched: the inside of every `url(…)` and, where a function takes
/// strings as addresses (`image-set()`, `image()`, `src()`, `@import`), every string. Found by
/// substring rather than by tokenizing, so comments and strings cannot hide one.
fn css_addresses(css: &str) -> Vec<&str> {
    let lower = css.to_ascii_lowercase();
    let mut found = Vec::new();
    for (at, _) in lower.match_indices("url(") {
        let inside = css[at + 4..].trim_start_matches(is_html_space);
        let address = match inside.chars().next() {
            Some(q @ ('"' | '\'')) => inside[1..].split(q).next().unwrap_or(""),
            _ => inside.split(')').next().unwrap_or(""),
        };
        found.push(address.trim_matches(is_html_space));
    }
    if ["image-set(", "image(", "src(", "@import"]
        .iter()
        .any(|f| lower.contains(f))
    {
        let mut rest = css;
        while let Some(open) = rest.find(['"', '\'']) {
            let quote = &rest[open..open + 1];
            let after = &rest[open + 1..];
            let len = after.find(quote).unwrap_or(after.len());
            found.push(after[..len].trim_matches(is_html_space));
            rest = after.get(len + 1..).unwrap_or("");
        }
    }
    found
}

/// An address as the destination of the markdown link that stands for it: decoded as the
/// browser would, with whatever could end the link or hide in it percent-encoded.
fn shown(address: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let decoded = decode(address, Refs::Lenient, false);
    let mut out = String::with_capacity(decoded.len());
    for c in decoded.trim_matches(|c: char| c <= ' ').chars() {
        if matches!(c, '\t' | '\n' | '\r') {
            // Browsers drop them from addresses.
            continue;
        }
        let plain = c.is_ascii_alphanumeric()
            || "-._~:/?#@$&+,;=%*".contains(c)
            || (!c.is_ascii() && !hidden(c) && !is_variation_selector(c));
        if plain {
            out.push(c);
        } else {
            for byte in c.encode_utf8(&mut [0; 4]).bytes() {
                out.push('%');
                out.push(char::from(HEX[usize::from(byte >> 4)]));
                out.push(char::from(HEX[usize::from(byte & 15)]));
            }
        }
    }
    out
}

/// Which character references [`decode`] turns into what they stand for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Refs {
    /// None.
    Kept,
    /// Those CommonMark decodes: with their `;`, numbers of bounded length.
    Strict,
    /// Also what a browser decodes in attribute values: numbers without `;`, `&amp` and the
    /// like without it.
    Lenient,
}

/// `text` with character references decoded as `refs` says and, if `backslashes`, CommonMark
/// backslash escapes undone, in one pass as CommonMark does.
fn decode(text: &str, refs: Refs, backslashes: bool) -> Cow<'_, str> {
    if (refs == Refs::Kept && !backslashes) || !text.contains(['&', '\\']) {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' if backslashes && b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push_str(&text[copied..i]);
                out.push(char::from(b[i + 1]));
                i += 2;
                copied = i;
            }
            b'&' if refs != Refs::Kept => match reference(&text[i..], refs == Refs::Lenient) {
                Some((decoded, len)) => {
                    out.push_str(&text[copied..i]);
                    match decoded {
                        Decoded::Char(c) => out.push(c),
                        Decoded::Str(s) => out.push_str(s),
                    }
                    i += len;
                    copied = i;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

enum Decoded {
    Char(char),
    Str(&'static str),
}

/// The character reference `text` starts with (at its `&`) and its length.
fn reference(text: &str, lenient: bool) -> Option<(Decoded, usize)> {
    let b = text.as_bytes();
    if b.get(1) == Some(&b'#') {
        let hex = matches!(b.get(2), Some(b'x' | b'X'));
        let (from, radix) = if hex { (3, 16) } else { (2, 10) };
        let digits = b[from.min(b.len())..]
            .iter()
            .take_while(|d| d.is_ascii_digit() || (hex && d.is_ascii_hexdigit()))
            .count();
        let semicolon = b.get(from + digits) == Some(&b';');
        let bounded = digits <= if hex { 6 } else { 7 };
        let accepted = lenient || (semicolon && bounded);
        if digits == 0 || !accepted {
            return None;
        }
        let c = u32::from_str_radix(&text[from..from + digits], radix)
            .ok()
            .and_then(char::from_u32)
            .filter(|c| *c != '\0')
            .unwrap_or('\u{FFFD}');
        return Some((Decoded::Char(c), from + digits + usize::from(semicolon)));
    }
    let len = b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    let name = &text[1..1 + len];
    if b.get(1 + len) == Some(&b';')
        && let Some(decoded) = named_reference(name)
    {
        return Some((Decoded::Str(decoded), len + 2));
    }
    if lenient {
        // Browsers still decode these few without their `;`.
        for legacy in ["amp", "AMP", "lt", "LT", "gt", "GT", "quot", "QUOT"] {
            if name.starts_with(legacy) {
                let decoded = named_reference(legacy).expect("the legacy names are in the table");
                return Some((Decoded::Str(decoded), 1 + legacy.len()));
            }
        }
    }
    None
}

/// The named references that stand for ASCII (the only ones that can change how an address
/// parses) and the no-break space.
fn named_reference(name: &str) -> Option<&'static str> {
    Some(match name {
        "Tab" => "\t",
        "NewLine" => "\n",
        "excl" => "!",
        "quot" | "QUOT" => "\"",
        "num" => "#",
        "dollar" => "$",
        "percnt" => "%",
        "amp" | "AMP" => "&",
        "apos" => "'",
        "lpar" => "(",
        "rpar" => ")",
        "ast" | "midast" => "*",
        "plus" => "+",
        "comma" => ",",
        "period" => ".",
        "sol" => "/",
        "colon" => ":",
        "semi" => ";",
        "lt" | "LT" => "<",
        "equals" => "=",
        "gt" | "GT" => ">",
        "quest" => "?",
        "commat" => "@",
        "lsqb" | "lbrack" => "[",
        "bsol" => "\\",
        "rsqb" | "rbrack" => "]",
        "Hat" => "^",
        "lowbar" | "UnderBar" => "_",
        "grave" | "DiacriticalGrave" => "`",
        "lcub" | "lbrace" => "{",
        "verbar" | "vert" | "VerticalLine" => "|",
        "rcub" | "rbrace" => "}",
        "fjlig" => "fj",
        "nbsp" | "NonBreakingSpace" => "\u{A0}",
        _ => return None,
    })
}

/// The scan ran out of the work it may do on this text (markup nested to make it quadratic).
#[derive(Debug)]
struct Exhausted;

/// One pass over the text, left to right, writing what changes.
struct Scanner<'t, 'f> {
    text: &'t str,
    markdown: bool,
    forge: &'f Forge,
    /// Every `<` that may open markup is defused and every `![` made a link, without reading
    /// tags: the answer to text that would take the tokenizer too long.
    blunt: bool,
    out: String,
    /// `text[..copied]` is accounted for in `out`.
    copied: usize,
    changed: bool,
    /// Bytes the tag tokenizer may still read.
    work: usize,
}

impl<'t, 'f> Scanner<'t, 'f> {
    /// The scanned text, or `None` when nothing changed.
    fn run(text: &'t str, markdown: bool, forge: &'f Forge) -> Option<String> {
        let mut scanner = Scanner {
            text,
            markdown,
            forge,
            blunt: false,
            out: String::new(),
            copied: 0,
            changed: false,
            work: text.len().saturating_mul(16).saturating_add(1 << 16),
        };
        if scanner.scan().is_err() {
            scanner = Scanner {
                blunt: true,
                out: String::new(),
                copied: 0,
                changed: false,
                ..scanner
            };
            scanner
                .scan()
                .expect("a blunt scan reads no tags, so it spends no work");
        }
        scanner.changed.then(|| {
            let mut out = scanner.out;
            out.push_str(&text[scanner.copied..]);
            out
        })
    }

    fn scan(&mut self) -> Result<(), Exhausted> {
        let bytes = self.text.as_bytes();
        let mut i = 0;
        while let Some(found) = bytes[i..].iter().position(|&b| b == b'<' || b == b'!') {
            let at = i + found;
            i = if bytes[at] == b'<' {
                self.angle(at)?
            } else if bytes.get(at + 1) == Some(&b'[') {
                self.image(at)
            } else {
                at + 1
            };
        }
        Ok(())
    }

    fn replace(&mut self, from: usize, to: usize, with: &str) {
        self.out.push_str(&self.text[self.copied..from]);
        if with.starts_with('[') && self.out.ends_with('!') {
            // `!` and the bracket written here would open an image.
            self.out.push(' ');
        }
        self.out.push_str(with);
        self.copied = to;
        self.changed = true;
    }

    /// The `<` at `at` written so that it opens nothing, flagged in markdown.
    fn defuse(&mut self, at: usize) {
        let with = if self.markdown {
            "[hidden markup] &lt;"
        } else {
            "&lt;"
        };
        self.replace(at, at + 1, with);
    }

    /// The `<` at `at`, which opens something a browser hides, flagged and defused in markdown.
    fn hidden_markup(&mut self, at: usize) {
        if self.markdown {
            self.defuse(at);
        }
    }

    /// Judges what the `<` at `at` opens; the position to scan on from.
    fn angle(&mut self, at: usize) -> Result<usize, Exhausted> {
        let rest = &self.text.as_bytes()[at + 1..];
        match rest.first() {
            Some(b'!') if rest.starts_with(b"!--") => return Ok(self.comment(at)),
            // Processing instructions, declarations and CDATA are comments to a browser.
            Some(b'!' | b'?') => self.hidden_markup(at),
            Some(b'/') => match rest.get(1) {
                Some(b) if b.is_ascii_alphabetic() => return self.tag(at),
                // `</>` is dropped and `</` at the end is text: neither hides anything.
                Some(b'>') | None => {}
                // Any other `</` opens a bogus comment.
                Some(_) => self.hidden_markup(at),
            },
            Some(b) if b.is_ascii_alphabetic() => return self.tag(at),
            _ => {}
        }
        // What follows the `<` is scanned as text: a renderer may show it as text.
        Ok(at + 1)
    }

    /// The comment at `at`: in markdown shown as `[hidden comment: …]`, its content defused;
    /// in plain text left as it is and its content scanned.
    fn comment(&mut self, at: usize) -> usize {
        if !self.markdown {
            return at + 1;
        }
        let open = at + 4;
        let rest = &self.text[open..];
        let (content, end) = if rest.starts_with('>') {
            ("", open + 1)
        } else if rest.starts_with("->") {
            ("", open + 2)
        } else {
            match comment_end(rest) {
                Some((len, closer)) => (&rest[..len], open + len + closer),
                // An unclosed comment hides the rest of the text.
                None => (rest, self.text.len()),
            }
        };
        let mut shown = String::with_capacity(content.len() + 20);
        shown.push_str("[hidden comment: ");
        defuse_into(&mut shown, content.trim());
        shown.push(']');
        self.replace(at, end, &shown);
        end
    }

    /// Judges the tag at `at` (`<` then a letter, or `</` then a letter).
    fn tag(&mut self, at: usize) -> Result<usize, Exhausted> {
        if self.blunt {
            self.defuse(at);
            return Ok(at + 1);
        }
        let tag = Tag::read(self.text, at);
        self.spend(tag.end - at)?;
        if !tag.closed {
            // Whatever follows the text could complete the tag: it is judged unsafe.
            self.defuse(at);
            return Ok(at + 1);
        }
        if !tag.end_tag {
            match self.fetches(&tag)? {
                Fetches::Outside(addresses) => {
                    let links: Vec<String> = addresses
                        .iter()
                        .map(|a| format!("[image link]({a})"))
                        .collect();
                    self.replace(at, tag.end, &links.join(" "));
                    return Ok(tag.end);
                }
                Fetches::Unknown => {
                    self.defuse(at);
                    return Ok(at + 1);
                }
                Fetches::Forge => {}
            }
        }
        if self.markdown && tag.hides(&self.text[at..tag.end]) {
            self.defuse(at);
        }
        Ok(at + 1)
    }

    /// Takes `bytes` from the work left, or fails when there is not that much.
    fn spend(&mut self, bytes: usize) -> Result<(), Exhausted> {
        self.work = self.work.checked_sub(bytes).ok_or(Exhausted)?;
        Ok(())
    }

    /// What the start tag `tag` makes a renderer fetch.
    fn fetches(&mut self, tag: &Tag) -> Result<Fetches, Exhausted> {
        let mut outside = Vec::new();
        let name = tag.name.as_str();
        for (attribute, value) in &tag.attrs {
            let split = match attribute.as_str() {
                "src" | "lowsrc" | "dynsrc" | "poster" | "data" | "background" | "codebase"
                | "manifest" | "icon" => Split::One,
                // On a link `href` is followed when clicked; anywhere else (`<link>`, SVG
                // `<image>` and `<use>`, `<base>`) it is fetched or changes what is.
                "href" | "xlink:href" if !matches!(name, "a" | "area") => Split::One,
                "srcset" | "imagesrcset" => Split::List(','),
                "to" | "from" | "by" | "values" if name == "set" || name.starts_with("animate") => {
                    Split::List(';')
                }
                "content" if name == "meta" => Split::Refresh,
                "style" => {
                    self.spend(judging(value.len()))?;
                    match self.forge.outside_in_css(value) {
                        Some(found) => {
                            found.into_iter().for_each(|a| push_new(&mut outside, a));
                            continue;
                        }
                        None => return Ok(Fetches::Unknown),
                    }
                }
                // A whole document inline: not judged here.
                "srcdoc" => return Ok(Fetches::Unknown),
                _ => continue,
            };
            self.spend(judging(value.len()))?;
            if !self.forge.hosts(value, split) {
                for address in self.shown_outside(value, split) {
                    push_new(&mut outside, address);
                }
            }
        }
        if name == "style" {
            let rest = &self.text[tag.end..];
            let len = find_ignoring_case(rest, "</style").unwrap_or(rest.len());
            self.spend(judging(len))?;
            match self.forge.outside_in_css(&rest[..len]) {
                Some(found) => found.into_iter().for_each(|a| push_new(&mut outside, a)),
                None => return Ok(Fetches::Unknown),
            }
        }
        Ok(if outside.is_empty() {
            Fetches::Forge
        } else {
            Fetches::Outside(outside)
        })
    }

    /// The addresses of an attribute judged outside, as they are shown: those of its
    /// candidates that are outside themselves, or all of them.
    fn shown_outside(&self, value: &str, split: Split) -> Vec<String> {
        let decoded = decode(value, Refs::Lenient, false);
        let candidates: Vec<&str> = match split {
            Split::One => vec![decoded.as_ref()],
            Split::List(separator) => decoded
                .split(separator)
                .filter_map(|c| c.split(is_html_space).find(|t| !t.is_empty()))
                .collect(),
            Split::Refresh => refresh_target(&decoded).into_iter().collect(),
        };
        let outside: Vec<String> = candidates
            .iter()
            .filter(|c| !self.forge.hosts(c, Split::One))
            .map(|c| shown(c))
            .collect();
        if outside.is_empty() {
            vec![shown(&decoded)]
        } else {
            outside
        }
    }

    /// Judges the `![` at `at`: kept when it is verifiably an inline image the forge serves,
    /// made a link otherwise. What follows is scanned either way.
    fn image(&mut self, at: usize) -> usize {
        if self.blunt || !forge_image(self.text, at, self.forge) {
            self.replace(at, at + 2, "[image link: ");
        }
        at + 2
    }
}

/// Whether the `![` at `at` opens `![alt](address)` or `![alt](address "title")` on one
/// line, in a form every renderer reads as that image (no nested or unescaped brackets, no
/// code span or HTML that could take precedence, no backslash or space in the address,
/// nothing a reference could stand in for), with the address on the forge's host.
fn forge_image(text: &str, at: usize, forge: &Forge) -> bool {
    let b = text.as_bytes();
    let mut i = at + 2;
    loop {
        match b.get(i) {
            None | Some(b'\n' | b'\r' | b'<' | b'`' | b'[') => return false,
            Some(b'\\') if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => i += 2,
            Some(b']') => break,
            Some(_) => i += 1,
        }
    }
    if b.get(i + 1) != Some(&b'(') {
        return false;
    }
    i += 2;
    let from = i;
    while b.get(i).is_some_and(|&c| {
        !matches!(
            c,
            0..=b' ' | 0x7F | b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'`' | b'\\' | b'"' | b'\''
        )
    }) {
        i += 1;
    }
    let address = &text[from..i];
    let spaces = b[i..].iter().take_while(|&&c| c == b' ').count();
    i += spaces;
    if spaces > 0 && b.get(i) == Some(&b'"') {
        i += 1;
        while b.get(i).is_some_and(|&c| {
            !matches!(
                c,
                b'"' | b'\\' | b'\n' | b'\r' | b'<' | b'>' | b'[' | b']' | b'`'
            )
        }) {
            i += 1;
        }
        if b.get(i) != Some(&b'"') {
            return false;
        }
        i += 1;
        i += b[i..].iter().take_while(|&&c| c == b' ').count();
    }
    !address.is_empty() && b.get(i) == Some(&b')') && forge.hosts(address, Split::One)
}

/// The work, in bytes read, that judging a value of `len` bytes costs: each of up to six
/// readings decoded and parsed, and a fixed cost per value, so that many short ones count too.
fn judging(len: usize) -> usize {
    len.saturating_mul(8).saturating_add(256)
}

/// Where a comment's content ends, per the browser (`-->` or `--!>`), and the closer's length.
fn comment_end(rest: &str) -> Option<(usize, usize)> {
    let b = rest.as_bytes();
    let mut from = 0;
    while let Some(found) = rest[from..].find("--") {
        let at = from + found;
        match &b[at + 2..] {
            [b'>', ..] => return Some((at, 3)),
            [b'!', b'>', ..] => return Some((at, 4)),
            _ => from = at + 1,
        }
    }
    None
}

/// `text` appended to `out` with nothing in it left to open markup: every `<` that could is
/// written `&lt;` and every `![` made a link.
fn defuse_into(out: &mut String, text: &str) {
    let b = text.as_bytes();
    let mut copied = 0;
    for (i, &c) in b.iter().enumerate() {
        let with = match (c, b.get(i + 1)) {
            (b'<', Some(n)) if n.is_ascii_alphabetic() || matches!(n, b'/' | b'!' | b'?') => "&lt;",
            (b'!', Some(b'[')) => "[image link: ",
            _ => continue,
        };
        out.push_str(&text[copied..i]);
        if out.ends_with('!') && with.starts_with('[') {
            out.push(' ');
        }
        out.push_str(with);
        // `![` is replaced whole: its `[` is in the replacement.
        copied = i + if c == b'!' { 2 } else { 1 };
    }
    out.push_str(&text[copied..]);
}

fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
}

/// What a start tag fetches.
enum Fetches {
    /// Nothing from another host.
    Forge,
    /// These addresses, shown as link destinations.
    Outside(Vec<String>),
    /// Something that cannot be judged (inline CSS escapes, a `srcdoc`).
    Unknown,
}

/// A tag as a browser's tokenizer reads it.
struct Tag<'t> {
    /// Lowercased, as the tokenizer does.
    name: String,
    end_tag: bool,
    /// Names lowercased, values raw (references not decoded), duplicates kept.
    attrs: Vec<(String, &'t str)>,
    /// Just past the closing `>`, or the end of the text.
    end: usize,
    /// Whether the text holds the closing `>`.
    closed: bool,
}

/// Whitespace to the HTML tokenizer.
fn is_tag_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C')
}

impl<'t> Tag<'t> {
    /// The tag whose `<` is at `at`, followed by a letter or by `/` and a letter.
    fn read(text: &'t str, at: usize) -> Tag<'t> {
        let b = text.as_bytes();
        let n = b.len();
        let mut i = at + 1;
        let end_tag = b[i] == b'/';
        i += usize::from(end_tag);
        let start = i;
        while i < n && !is_tag_space(b[i]) && b[i] != b'/' && b[i] != b'>' {
            i += 1;
        }
        let mut tag = Tag {
            name: text[start..i].to_ascii_lowercase(),
            end_tag,
            attrs: Vec::new(),
            end: n,
            closed: false,
        };
        loop {
            // Between attributes a `/` counts as whitespace (`<img/src=x>`).
            while i < n && (is_tag_space(b[i]) || b[i] == b'/') {
                i += 1;
            }
            if i >= n {
                return tag;
            }
            if b[i] == b'>' {
                tag.end = i + 1;
                tag.closed = true;
                return tag;
            }
            // A name's first character may be anything, `=` included.
            let name_start = i;
            i += 1;
            while i < n && !is_tag_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
                i += 1;
            }
            let name = text[name_start..i].to_ascii_lowercase();
            while i < n && is_tag_space(b[i]) {
                i += 1;
            }
            let mut value = "";
            if i < n && b[i] == b'=' {
                i += 1;
                while i < n && is_tag_space(b[i]) {
                    i += 1;
                }
                match b.get(i) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let from = i + 1;
                        match b[from..].iter().position(|&c| c == quote) {
                            Some(len) => {
                                value = &text[from..from + len];
                                i = from + len + 1;
                            }
                            None => {
                                tag.attrs.push((name, &text[from..]));
                                return tag;
                            }
                        }
                    }
                    Some(b'>') | None => {}
                    Some(_) => {
                        let from = i;
                        while i < n && !is_tag_space(b[i]) && b[i] != b'>' {
                            i += 1;
                        }
                        value = &text[from..i];
                    }
                }
            }
            tag.attrs.push((name, value));
        }
    }

    /// Whether, in markdown, the closed tag `raw` (this one) would hide something or is not
    /// plainly visible formatting.
    fn hides(&self, raw: &str) -> bool {
        if self.end_tag {
            return !visible_tag(&self.name) || !self.attrs.is_empty();
        }
        if autolink(raw) {
            return false;
        }
        !visible_tag(&self.name)
            || self
                .attrs
                .iter()
                .any(|(attribute, _)| !safe_attribute(&self.name, attribute))
            // Where a renderer shows the tag as text, what is inside it would be markup.
            || raw[1..].contains(['<', '[', ']'])
    }
}

/// Tags that only format what they hold, visibly.
fn visible_tag(name: &str) -> bool {
    matches!(
        name,
        "a" | "abbr"
            | "b"
            | "blockquote"
            | "br"
            | "caption"
            | "cite"
            | "code"
            | "col"
            | "colgroup"
            | "dd"
            | "del"
            | "dfn"
            | "div"
            | "dl"
            | "dt"
            | "em"
            | "figcaption"
            | "figure"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hr"
            | "i"
            | "img"
            | "ins"
            | "kbd"
            | "li"
            | "mark"
            | "ol"
            | "p"
            | "picture"
            | "pre"
            | "q"
            | "s"
            | "samp"
            | "small"
            | "source"
            | "span"
            | "strike"
            | "strong"
            | "sub"
            | "summary"
            | "sup"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "tt"
            | "u"
            | "ul"
            | "var"
            | "wbr"
    )
}

/// Attributes that change nothing about what of the text is seen, per tag. `title`, `class`,
/// `id`, `style`, `hidden`, `dir` and handlers are not among them: each can hide or move text.
fn safe_attribute(tag: &str, attribute: &str) -> bool {
    match attribute {
        "align" => matches!(
            tag,
            "p" | "div"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "table"
                | "caption"
                | "tr"
                | "td"
                | "th"
                | "thead"
                | "tbody"
                | "tfoot"
                | "img"
        ),
        "href" | "name" => tag == "a",
        "src" | "alt" => tag == "img",
        "srcset" | "width" | "height" => matches!(tag, "img" | "source"),
        "media" => tag == "source",
        "type" => matches!(tag, "ol" | "ul" | "source"),
        "colspan" | "rowspan" => matches!(tag, "td" | "th"),
        "span" => matches!(tag, "col" | "colgroup"),
        "start" | "reversed" => tag == "ol",
        "value" => tag == "li",
        _ => false,
    }
}

/// Whether `raw` is a CommonMark autolink (`<https://…>`, `<someone@example.com>`), which
/// renders as the visible link it is.
fn autolink(raw: &str) -> bool {
    let Some(inner) = raw.strip_prefix('<').and_then(|r| r.strip_suffix('>')) else {
        return false;
    };
    if inner
        .bytes()
        .any(|b| b <= b' ' || matches!(b, b'<' | b'>' | 0x7F))
    {
        return false;
    }
    if let Some((scheme, _)) = inner.split_once(':')
        && (2..=32).contains(&scheme.len())
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
    {
        return true;
    }
    let Some((local, domain)) = inner.split_once('@') else {
        return false;
    };
    let label = |l: &str| {
        (1..=63).contains(&l.len())
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    !local.is_empty()
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&b))
        && domain.split('.').all(label)
}

/// Markdown with every line that could be a link reference definition flagged, or `None`
/// when there is none. A definition renders as nothing, so `[//]: # (…)` and its like are
/// comments; flagged, the line is a paragraph, shown.
fn surface_definitions(text: &str) -> Option<String> {
    if !text.contains("]:") {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::new();
    let (mut copied, mut changed) = (0, false);
    let mut line = 0;
    loop {
        let at = after_container_marks(b, line);
        // A label holds no unescaped bracket: it ends at the next one, which must be `]` and
        // followed by `:`. Each look ends at or before the next line's `[`, so the looks do
        // not overlap and the scan stays linear.
        if b.get(at) == Some(&b'[') {
            let found = next_unescaped_bracket(b, at + 1).filter(|&c| b[c] == b']');
            if found.is_some_and(|c| b.get(c + 1) == Some(&b':')) {
                out.push_str(&text[copied..at]);
                out.push_str("[hidden markup] ");
                copied = at;
                changed = true;
            }
        }
        match b[line..].iter().position(|&c| c == b'\n') {
            Some(len) => line += len + 1,
            None => break,
        }
    }
    changed.then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Past the indentation, blockquote marks and list markers a line starts with (more than
/// CommonMark would take: a definition can sit in any container).
fn after_container_marks(b: &[u8], mut i: usize) -> usize {
    loop {
        match b.get(i) {
            Some(b' ' | b'\t' | b'>') => i += 1,
            Some(b'-' | b'+' | b'*') if matches!(b.get(i + 1), Some(b' ' | b'\t')) => i += 2,
            Some(b'0'..=b'9') => {
                let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                let j = i + digits;
                if digits <= 9
                    && matches!(b.get(j), Some(b'.' | b')'))
                    && matches!(b.get(j + 1), Some(b' ' | b'\t'))
                {
                    i = j + 2;
                } else {
                    return i;
                }
            }
            _ => return i,
        }
    }
}

fn next_unescaped_bracket(b: &[u8], mut i: usize) -> Option<usize> {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' | b']' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// `text` inside a fresh envelope whose boundary it does not contain, saying what it is
/// (`kind`), who wrote it and where it is from: how every answer, read or call, shows
/// user-written text to a model.
pub fn enveloped(text: &str, kind: &str, author: Option<&str>, uri: &str) -> String {
    Envelope::fresh(std::iter::once(text)).wrap(text, kind, author, uri)
}

/// The tags one answer wraps user-written text in.
#[derive(Debug, Clone)]
struct Envelope {
    tag: String,
}

impl Envelope {
    /// Tags with a fresh random boundary that none of `texts` contains.
    fn fresh<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Envelope {
        static KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        loop {
            let mut hasher = KEYS.build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let tag = format!("untrusted-{:08x}", hasher.finish() as u32);
            if !texts.clone().any(|t| t.contains(&tag)) {
                return Envelope { tag };
            }
        }
    }

    /// `text` inside the tags, which say what it is, who wrote it and where it is from.
    fn wrap(&self, text: &str, kind: &str, author: Option<&str>, uri: &str) -> String {
        let attr = |v: &str| v.replace(['"', '<', '>', '\n'], "_");
        let author = author.map_or(String::new(), |a| format!(" author=\"{}\"", attr(a)));
        format!(
            "<{tag} kind=\"{}\"{author} uri=\"{}\">\n{text}\n</{tag}>",
            attr(kind),
            attr(uri),
            tag = self.tag
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOST: &str = "forge.example";

    fn md(text: &str) -> String {
        neutralize(text, Rendering::Markdown, HOST).into_owned()
    }

    fn plain(text: &str) -> String {
        neutralize(text, Rendering::Plain, HOST).into_owned()
    }

    /// Each input against what `rendering` makes of it, the input named on failure.
    fn check(rendering: Rendering, cases: &[(&str, &str)]) {
        for (input, expected) in cases {
            let out = neutralize(input, rendering, HOST);
            assert_eq!(out, *expected, "{rendering:?} input: {input:?}");
        }
    }

    /// In both renderings.
    fn check_both(cases: &[(&str, &str)]) {
        check(Rendering::Markdown, cases);
        check(Rendering::Plain, cases);
    }

    #[test]
    fn clean_text_is_not_copied() {
        for text in [
            "A normal body with `code`, a [link](https://x.example) and émoji 👍.",
            "a < b, c > d, x! [y] z: w",
            "👨\u{200D}👩\u{200D}👧 ❤\u{FE0F} क्\u{200D}ष",
        ] {
            assert!(
                matches!(
                    neutralize(text, Rendering::Markdown, HOST),
                    Cow::Borrowed(_)
                ),
                "{text:?}"
            );
        }
    }

    #[test]
    fn invisible_and_bidirectional_characters_become_escapes() {
        check_both(&[
            ("pay\u{200B}load", "pay\\u{200b}load"),
            ("abc\u{202E}txt.exe", "abc\\u{202e}txt.exe"),
            ("\u{FEFF}start", "\\u{feff}start"),
            ("a\u{1b}[2Kb", "a\\u{001b}[2Kb"),
            ("line\r\nnext\rover", "line\r\nnext\\u{000d}over"),
            ("x\u{FE0F}", "x\\u{fe0f}"),
            ("a\u{2800}b", "a\\u{2800}b"),
            ("a\u{FFF0}\u{FFF8}b", "a\\u{fff0}\\u{fff8}b"),
            ("a\u{16FE4}\u{1D159}b", "a\\u{16fe4}\\u{1d159}b"),
            ("a\u{E000}\u{F8FF}b", "a\\u{e000}\\u{f8ff}b"),
            ("a\u{F0000}\u{10FFFD}b", "a\\u{f0000}\\u{10fffd}b"),
            (
                "a\u{FDD0}\u{FFFE}\u{1FFFF}b",
                "a\\u{fdd0}\\u{fffe}\\u{1ffff}b",
            ),
        ]);
    }

    #[test]
    fn joiners_and_selectors_stay_only_where_they_are_seen() {
        let kept = [
            "👨\u{200D}👩\u{200D}👧",
            "❤\u{FE0F}",
            "❤\u{FE0F}\u{200D}🔥",
            "👩🏽\u{200D}💻",
            "1\u{FE0F}\u{20E3}",
            "क्\u{200D}ष",
            "क्\u{200C}ष",
            "می\u{200C}خواهم",
        ];
        for text in kept {
            assert_eq!(md(text), text, "{text:?}");
        }
        check_both(&[
            ("é\u{200D}é", "é\\u{200d}é"),
            ("é\u{200C}é", "é\\u{200c}é"),
            ("a\u{200D}b", "a\\u{200d}b"),
            ("é\u{FE0F}", "é\\u{fe0f}"),
            ("❤\u{FE0F}\u{FE0F}", "❤\u{FE0F}\\u{fe0f}"),
            ("❤\u{FE00}", "❤\\u{fe00}"),
            ("👍\u{200D}a", "👍\\u{200d}a"),
            // Two scripts: no shaping between them.
            ("क\u{200D}ب", "क\\u{200d}ب"),
            ("1\u{FE0F}", "1\\u{fe0f}"),
        ]);
    }

    #[test]
    fn tag_characters_show_what_they_spell_and_it_is_judged() {
        let spell = |s: &str| -> String {
            s.chars()
                .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
                .collect()
        };
        assert_eq!(
            md(&format!("hi{}!", spell("obey me"))),
            "hi[tag characters: \"obey me\"]!"
        );
        assert_eq!(
            plain(&spell("<img src=//evil.example/x>")),
            "[tag characters: \"[image link](//evil.example/x)\"]"
        );
    }

    #[test]
    fn outside_markdown_images_become_links() {
        check_both(&[
            (
                "![x](https://evil.example/c?d=1)",
                "[image link: x](https://evil.example/c?d=1)",
            ),
            (
                "![x](//evil.example/p.png)",
                "[image link: x](//evil.example/p.png)",
            ),
            // Another scheme than the base's takes an authority even without its slashes.
            (
                "![x](http:evil.example/p)",
                "[image link: x](http:evil.example/p)",
            ),
            (
                "![x](\\\\evil.example/x)",
                "[image link: x](\\\\evil.example/x)",
            ),
            ("![x](/\\evil.example)", "[image link: x](/\\evil.example)"),
            (
                "![x](https:\\\\evil.example)",
                "[image link: x](https:\\\\evil.example)",
            ),
            (
                "![x](https&#58;//evil.example)",
                "[image link: x](https&#58;//evil.example)",
            ),
            (
                "![x](&#x2F;&#x2F;evil.example)",
                "[image link: x](&#x2F;&#x2F;evil.example)",
            ),
            (
                "![x](https\\://evil.example)",
                "[image link: x](https\\://evil.example)",
            ),
            (
                "![x](ht\ntps://evil.example)",
                "[image link: x](ht\ntps://evil.example)",
            ),
            (
                "![x](ht\ttps://evil.example)",
                "[image link: x](ht\ttps://evil.example)",
            ),
            (
                "![x]( https://evil.example)",
                "[image link: x]( https://evil.example)",
            ),
            (
                "![a](https://evil.example \"t\")",
                "[image link: a](https://evil.example \"t\")",
            ),
            (
                "![a [b] c](https://evil.example)",
                "[image link: a [b] c](https://evil.example)",
            ),
            (
                "![a \\] b](https://evil.example)",
                "[image link: a \\] b](https://evil.example)",
            ),
            (
                "![a\nb](https://evil.example)",
                "[image link: a\nb](https://evil.example)",
            ),
            (
                "![a](https://forge.example@evil.example/)",
                "[image link: a](https://forge.example@evil.example/)",
            ),
            (
                "![a](https://forge.example.evil.example/)",
                "[image link: a](https://forge.example.evil.example/)",
            ),
            (
                "![a](data:image/png;base64,AA)",
                "[image link: a](data:image/png;base64,AA)",
            ),
            // A code span in the alt could take the brackets: never kept.
            (
                "![a `](/ok)` ](//evil.example)",
                "[image link: a `](/ok)` ](//evil.example)",
            ),
            ("![a][r]", "[image link: a][r]"),
            ("![a][]", "[image link: a][]"),
            ("![a]", "[image link: a]"),
            (
                "\\![a](//evil.example)",
                "\\[image link: a](//evil.example)",
            ),
        ]);
        check(
            Rendering::Markdown,
            &[
                (
                    "![x](<https://evil.example>)",
                    "[image link: x](<https://evil.example>)",
                ),
                (
                    "![a][r]\n\n[r]: https://e.example/x",
                    "[image link: a][r]\n\n[hidden markup] [r]: https://e.example/x",
                ),
                (
                    "![a]\n\n[a]: https://e.example/x",
                    "[image link: a]\n\n[hidden markup] [a]: https://e.example/x",
                ),
                (
                    "![a <span title=\"](/ok)\">x</span>](//evil.example)",
                    "[image link: a [hidden markup] &lt;span title=\"](/ok)\">x</span>](//evil.example)",
                ),
            ],
        );
        check(
            Rendering::Plain,
            &[(
                "![a][r]\n\n[r]: https://e.example/x",
                "[image link: a][r]\n\n[r]: https://e.example/x",
            )],
        );
    }

    #[test]
    fn the_forges_own_images_stay() {
        let kept = [
            "![x](/attachments/abc)",
            "![x](attachments/abc)",
            "![x](https://forge.example/acme/w/attachments/1)",
            "![x](https://FORGE.example/a.png)",
            "![x](http://forge.example:3000/a.png)",
            "![x](/a.png \"a title\")",
            "![x](/a.png?b=1&amp;c=2)",
            "![a \\[b\\] c](/a.png)",
            "[![x](/a.png)](https://elsewhere.example)",
            "<img src=\"/avatars/m.png\">",
            "<img src=\"https://forge.example/a.png\" alt=\"a\" width=\"10\">",
            "<img srcset=\"/a.png 1x, /b.png 2x\">",
            "<picture><source srcset=\"/a.png\" media=\"(min-width: 1px)\"><img src=\"/b.png\"></picture>",
        ];
        for text in kept {
            assert_eq!(md(text), text, "markdown: {text:?}");
            assert_eq!(plain(text), text, "plain: {text:?}");
        }
    }

    #[test]
    fn html_that_fetches_from_elsewhere_becomes_links() {
        check_both(&[
            (
                "<img src=\"https://evil.example/p?d=2\" alt=\"q\">",
                "[image link](https://evil.example/p?d=2)",
            ),
            (
                "<img src=\" https://evil.example/p\">",
                "[image link](https://evil.example/p)",
            ),
            (
                "<img src=//evil.example/p>",
                "[image link](//evil.example/p)",
            ),
            (
                "<img src=http:evil.example/p>",
                "[image link](http:evil.example/p)",
            ),
            (
                "<img/src=//evil.example/p>",
                "[image link](//evil.example/p)",
            ),
            (
                "<IMG SRC = '//evil.example/p'>",
                "[image link](//evil.example/p)",
            ),
            (
                "<img\nsrc=\"//evil.example/p\"\n>",
                "[image link](//evil.example/p)",
            ),
            (
                "<img src=\"/ok\" src=\"//evil.example/p\">",
                "[image link](//evil.example/p)",
            ),
            (
                "<img src=\"https&#58;//evil.example/p\">",
                "[image link](https://evil.example/p)",
            ),
            (
                "<img src=\"&#x2F;&#x2F;evil.example/p\">",
                "[image link](//evil.example/p)",
            ),
            (
                "<img src=\"https&colon;//evil.example/p\">",
                "[image link](https://evil.example/p)",
            ),
            (
                "<img src=\"ht&#9;tps://evil.example/p\">",
                "[image link](https://evil.example/p)",
            ),
            (
                "<img src=\"ht\ntps://evil.example/p\">",
                "[image link](https://evil.example/p)",
            ),
            (
                "<img src=\"\\\\evil.example/p\">",
                "[image link](%5C%5Cevil.example/p)",
            ),
            (
                "<img srcset=\"/ok 1x, https://evil.example/b.png 2x\">",
                "[image link](https://evil.example/b.png)",
            ),
            (
                "<picture><source srcset=\"//evil.example/a.png\"><img src=\"/ok\"></picture>",
                "<picture>[image link](//evil.example/a.png)<img src=\"/ok\"></picture>",
            ),
            (
                "<video src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<audio src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<source src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<input type=image src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<embed src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<object data=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<iframe src=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<link rel=stylesheet href=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<image href=\"//evil.example/a\"/>",
                "[image link](//evil.example/a)",
            ),
            (
                "<use xlink:href=\"//evil.example/a#x\"/>",
                "[image link](//evil.example/a#x)",
            ),
            (
                "<use href=\"//evil.example/a#x\"/>",
                "[image link](//evil.example/a#x)",
            ),
            (
                "<table background=//evil.example/a>",
                "[image link](//evil.example/a)",
            ),
            (
                "<div style=\"background:url('//evil.example/a')\">",
                "[image link](//evil.example/a)",
            ),
            (
                "<div style=\"background:URL( &quot;//evil.example/a&quot; )\">",
                "[image link](//evil.example/a)",
            ),
            (
                "<div style=\"background-image: image-set('//evil.example/a' 1x)\">",
                "[image link](//evil.example/a)",
            ),
            (
                "<meta http-equiv=refresh content=\"0; url=https://evil.example/\">",
                "[image link](https://evil.example/)",
            ),
            (
                "<set attributeName=href to=\"//evil.example/a\"/>",
                "[image link](//evil.example/a)",
            ),
            (
                "<img src=\"https://evil.example/a b)![c](//evil.example/d\">",
                "[image link](https://evil.example/a%20b%29%21%5Bc%5D%28//evil.example/d)",
            ),
        ]);
        check(
            Rendering::Markdown,
            &[
                (
                    "<video poster=//evil.example/p src=/ok></video>",
                    "[image link](//evil.example/p)[hidden markup] &lt;/video>",
                ),
                (
                    "<svg><image href=\"//evil.example/a\"/></svg>",
                    "[hidden markup] &lt;svg>[image link](//evil.example/a)[hidden markup] &lt;/svg>",
                ),
                (
                    "<style>body { background: url(//evil.example/a) }</style>",
                    "[image link](//evil.example/a)body { background: url(//evil.example/a) }[hidden markup] &lt;/style>",
                ),
                // What cannot be judged is defused.
                (
                    "<div style=\"background:u\\72l(//evil.example/a)\">x",
                    "[hidden markup] &lt;div style=\"background:u\\72l(//evil.example/a)\">x",
                ),
                (
                    "<iframe srcdoc=\"&lt;img src=//evil.example/a&gt;\">",
                    "[hidden markup] &lt;iframe srcdoc=\"&lt;img src=//evil.example/a&gt;\">",
                ),
                // Text that ends inside a tag could be completed by what follows it.
                ("a <img src=\"/ok", "a [hidden markup] &lt;img src=\"/ok"),
            ],
        );
        check(
            Rendering::Plain,
            &[
                (
                    "<style>@import \"//evil.example/a\";</style>",
                    "[image link](//evil.example/a)@import \"//evil.example/a\";</style>",
                ),
                ("a <img src=\"/ok", "a &lt;img src=\"/ok"),
                // Markup inside an attribute is judged too: a renderer may show it as text.
                (
                    "<b title=\"<img src=//evil.example/a>\">x</b>",
                    "<b title=\"[image link](//evil.example/a)\">x</b>",
                ),
                (
                    "<b title=\"![a](//evil.example/a)\">x</b>",
                    "<b title=\"[image link: a](//evil.example/a)\">x</b>",
                ),
                // Inside a comment too: renderers differ on where one ends.
                (
                    "<!-- <img src=//evil.example/a> -->",
                    "<!-- [image link](//evil.example/a) -->",
                ),
            ],
        );
    }

    #[test]
    fn comments_are_surfaced_with_their_content_defused() {
        check(
            Rendering::Markdown,
            &[
                ("a<!-- do it -->b", "a[hidden comment: do it]b"),
                ("a<!-->b<!--->c", "a[hidden comment: ]b[hidden comment: ]c"),
                ("a<!---->b", "a[hidden comment: ]b"),
                ("a<!-- rest of it", "a[hidden comment: rest of it]"),
                ("a<!-- x --!> b", "a[hidden comment: x] b"),
                ("a<!-- x --->b", "a[hidden comment: x -]b"),
                (
                    "<!-- <img src=//evil.example/a> ![b](//evil.example/b) -->",
                    "[hidden comment: &lt;img src=//evil.example/a> [image link: b](//evil.example/b)]",
                ),
                (
                    "<!-- outer <!-- inner --> after -->",
                    "[hidden comment: outer &lt;!-- inner] after -->",
                ),
                // The bracket closing the form cannot make a definition.
                ("<!--x-->: /y", "[hidden markup] [hidden comment: x]: /y"),
            ],
        );
    }

    #[test]
    fn hidden_markup_is_surfaced_and_defused() {
        check(
            Rendering::Markdown,
            &[
                ("<?php x ?>", "[hidden markup] &lt;?php x ?>"),
                ("<!DOCTYPE html>", "[hidden markup] &lt;!DOCTYPE html>"),
                // What the defused `<` leaves is text, its `![` made a link like any other.
                (
                    "<![CDATA[x]]>",
                    "[hidden markup] &lt;[image link: CDATA[x]]>",
                ),
                ("!<!--x-->", "! [hidden comment: x]"),
                (
                    "!<img src=//evil.example/a>",
                    "! [image link](//evil.example/a)",
                ),
                ("</ x>", "[hidden markup] &lt;/ x>"),
                (
                    "<details><summary>s</summary>x</details>",
                    "[hidden markup] &lt;details><summary>s</summary>x[hidden markup] &lt;/details>",
                ),
                (
                    "<template>x</template>",
                    "[hidden markup] &lt;template>x[hidden markup] &lt;/template>",
                ),
                (
                    "<style>p{}</style>",
                    "[hidden markup] &lt;style>p{}[hidden markup] &lt;/style>",
                ),
                (
                    "<script>x</script>",
                    "[hidden markup] &lt;script>x[hidden markup] &lt;/script>",
                ),
                ("<noscript>x", "[hidden markup] &lt;noscript>x"),
                ("<title>x", "[hidden markup] &lt;title>x"),
                ("<textarea>x", "[hidden markup] &lt;textarea>x"),
                ("<dialog>x", "[hidden markup] &lt;dialog>x"),
                (
                    "<head><meta charset=utf-8><base target=_blank>",
                    "[hidden markup] &lt;head>[hidden markup] &lt;meta charset=utf-8>[hidden markup] &lt;base target=_blank>",
                ),
                ("<svg>x", "[hidden markup] &lt;svg>x"),
                ("<math>x", "[hidden markup] &lt;math>x"),
                ("<my-tag>x", "[hidden markup] &lt;my-tag>x"),
                (
                    "<div hidden>x</div>",
                    "[hidden markup] &lt;div hidden>x</div>",
                ),
                (
                    "<p id=x hidden>t</p>",
                    "[hidden markup] &lt;p id=x hidden>t</p>",
                ),
                (
                    "<p title=\"a\" hidden class=b>t",
                    "[hidden markup] &lt;p title=\"a\" hidden class=b>t",
                ),
                ("<p HIDDEN>t", "[hidden markup] &lt;p HIDDEN>t"),
                (
                    "<span style=\"color: red\">x</span>",
                    "[hidden markup] &lt;span style=\"color: red\">x</span>",
                ),
                (
                    "<b onmouseover=x>x</b>",
                    "[hidden markup] &lt;b onmouseover=x>x</b>",
                ),
                (
                    "<span dir=rtl>x</span>",
                    "[hidden markup] &lt;span dir=rtl>x</span>",
                ),
                (
                    "<b title=\"<i>\">x</b>",
                    "[hidden markup] &lt;b title=\"<i>\">x</b>",
                ),
                ("<b/x>y", "[hidden markup] &lt;b/x>y"),
                ("</b x>", "[hidden markup] &lt;/b x>"),
                ("if a <b and c> d", "if a [hidden markup] &lt;b and c> d"),
                ("a <b", "a [hidden markup] &lt;b"),
            ],
        );
    }

    #[test]
    fn visible_formatting_stays() {
        let kept = [
            "<b>bold</b> <i>i</i> <em>e</em> <strong>s</strong> <code>c</code>",
            "<a href=\"https://x.example\">link</a> <a name=top></a>",
            "line<br>line<br/>line<br />",
            "<p align=\"center\">x</p> <div align=center>y</div>",
            "<table><tr><td colspan=2>x</td></tr></table>",
            "<ol start=3><li>x</li></ol> <kbd>Ctrl</kbd> <sub>a</sub><sup>b</sup>",
            "<https://example.com/x> and <someone@example.com>",
            "a < b and c > d, a<3",
            "</>",
        ];
        for text in kept {
            assert_eq!(md(text), text, "{text:?}");
        }
    }

    #[test]
    fn reference_definitions_are_surfaced() {
        check(
            Rendering::Markdown,
            &[
                ("[//]: # (do it)", "[hidden markup] [//]: # (do it)"),
                (
                    "[comment]: <> (do it)",
                    "[hidden markup] [comment]: <> (do it)",
                ),
                (
                    "x\n\n[x]: http://a.example \"hidden title\"",
                    "x\n\n[hidden markup] [x]: http://a.example \"hidden title\"",
                ),
                ("> [x]: /y", "> [hidden markup] [x]: /y"),
                ("- [x]: /y", "- [hidden markup] [x]: /y"),
                ("1. > [x]: /y", "1. > [hidden markup] [x]: /y"),
                ("   [x]: /y", "   [hidden markup] [x]: /y"),
                ("[a\nb]: /y", "[hidden markup] [a\nb]: /y"),
                ("[a\\]b]: /y", "[hidden markup] [a\\]b]: /y"),
                ("[a\\[b]: /y", "[hidden markup] [a\\[b]: /y"),
                ("[^1]: note", "[hidden markup] [^1]: note"),
                ("![a]: /y", "[hidden markup] [image link: a]: /y"),
            ],
        );
        let kept = [
            "see [x]: y",
            "[x] : y",
            "[x](y): z",
            "[hidden markup] [x]: y",
            // Not a label: it holds a bracket.
            "[a [b]: y",
            "[a\n[b] c",
        ];
        for text in kept {
            assert_eq!(md(text), text, "{text:?}");
        }
    }

    #[test]
    fn plain_text_keeps_its_markup_but_not_outside_images() {
        let text = "<!-- a comment in an HTML file --> <details> [x]: y <?php ?>";
        assert_eq!(plain(text), text);
        assert_eq!(
            plain("a ![x](https://e.example/p)"),
            "a [image link: x](https://e.example/p)"
        );
    }

    #[test]
    fn a_forge_without_a_host_keeps_only_relative_images() {
        for host in ["", "not a host"] {
            assert_eq!(
                neutralize("![x](/a.png)", Rendering::Plain, host),
                "![x](/a.png)"
            );
            assert_eq!(
                neutralize("![x](https://forge.example/a.png)", Rendering::Plain, host),
                "[image link: x](https://forge.example/a.png)"
            );
        }
        assert_eq!(
            neutralize(
                "![x](http://127.0.0.1/a.png)",
                Rendering::Plain,
                "127.0.0.1"
            ),
            "![x](http://127.0.0.1/a.png)"
        );
    }

    #[test]
    fn markup_that_would_take_quadratic_work_is_defused_bluntly() {
        let nested = format!("{}>", "<a ".repeat(40_000));
        let out = md(&nested);
        assert!(!out.contains("<a"), "a tag survived");
        let out = plain(&format!(
            "{}<img src=//evil.example/x>",
            "<b title=\"<b ".repeat(20_000)
        ));
        assert!(!out.contains("<img"), "an image survived");
    }

    #[test]
    fn the_envelope_names_the_text_and_cannot_be_guessed() {
        let tag_of = |wrapped: &str| wrapped[1..].split(' ').next().unwrap().to_owned();
        let a = enveloped(
            "body",
            "issue",
            Some("al\"ice"),
            "forgejo://repo/a/b/issue/1",
        );
        let b = enveloped("body", "issue", None, "forgejo://repo/a/b/issue/1");
        let tag = tag_of(&a);
        assert!(tag.starts_with("untrusted-"), "{a}");
        assert_ne!(tag, tag_of(&b));
        assert!(
            a.starts_with(&format!("<{tag} kind=\"issue\" author=\"al_ice\"")),
            "{a}"
        );
        assert!(a.ends_with(&format!("\nbody\n</{tag}>")), "{a}");
    }

    /// Pieces markup is made of, outside addresses in every disguise among them; every outside
    /// host is `evil.example`, which no forge address spells.
    fn markup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z ]{0,6}",
            prop::sample::select(vec![
                "<",
                ">",
                "</",
                "/",
                "![",
                "[",
                "]",
                "(",
                ")",
                "\n",
                "\n\n",
                "\"",
                "'",
                "=",
                " ",
                "\\",
                "&",
                "`",
                "<!--",
                "-->",
                "]:",
                "<!",
                "<?",
                "> ",
                "- ",
                "&lt;",
                "#",
                ":",
                "img",
                "IMG",
                "source",
                "video",
                "a",
                "p",
                "b",
                "details",
                "style",
                "svg",
                "image",
                "meta",
                " src=",
                " srcset=",
                " href=",
                " style=",
                " hidden",
                " poster=",
                " background=",
                " title=",
                " alt=",
                " content=",
                "url(",
                "image-set(",
                "/ok",
                "https://forge.example/ok",
                "//evil.example/x",
                "https://evil.example",
                "https&#58;//evil.example",
                "\\\\evil.example",
                "/\\evil.example",
                "https:\\\\evil.example",
                "&#x2F;&#x2F;evil.example",
                "https\\://evil.example",
                "ht\ntps://evil.example",
                "https&colon;//evil.example",
                "evil.example",
                "\u{200B}",
                "\u{200D}",
                "\u{FE0F}",
                "👍",
                "é",
                "\u{E0041}",
                "\u{E003C}",
                "\u{E005B}",
                "http:evil.example",
                "&#44;",
                ", ",
                " 1x",
                "url=",
                ";",
                " srcdoc=",
                "\r\n",
                "\r",
                "1. ",
                "    ",
            ])
            .prop_map(str::to_owned),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    /// Whether an address among those `value` could hold, parted by the characters of `cut`,
    /// has `evil.example` for its host: a rough reading of its own, with backslashes as
    /// slashes, tabs and newlines dropped and each address trimmed of spaces.
    fn names_evil_host(value: &str, cut: &str) -> bool {
        let value = value
            .to_ascii_lowercase()
            .replace(['\t', '\n', '\r'], "")
            .replace('\\', "/");
        value
            .split(|c: char| cut.contains(c))
            .map(|candidate| candidate.trim_matches([' ', '\x0c']))
            .any(|candidate| {
                let (scheme, rest) = match candidate.split_once(':') {
                    Some((s, r))
                        if !s.is_empty()
                            && s.chars()
                                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) =>
                    {
                        (Some(s), r)
                    }
                    _ => (None, candidate),
                };
                let after = rest.trim_start_matches('/');
                let slashes = rest.len() - after.len();
                let authority = slashes >= 2 || scheme.is_some_and(|s| s != "https");
                authority
                    && after
                        .split(['/', '?', '#'])
                        .next()
                        .is_some_and(|a| a.contains("evil"))
            })
    }

    /// Whether `text` still holds, as live markup, an address on `evil.example`: in a tag's
    /// attribute (any attribute that could fetch) or as a markdown image.
    fn evil_fetch(text: &str) -> Option<String> {
        let b = text.as_bytes();
        let forge = Forge::new(HOST);
        for (at, _) in text.match_indices('<') {
            if !b.get(at + 1).is_some_and(u8::is_ascii_alphabetic) {
                continue;
            }
            let tag = Tag::read(text, at);
            for (attribute, value) in &tag.attrs {
                let value = decode(value, Refs::Lenient, false);
                // Every attribute some element fetches from (the test's own list), with the
                // characters that part its addresses: none where the value is one address.
                const ANY: &str = " \x0c,;()'\"=";
                let cut = match attribute.as_str() {
                    "src" | "poster" | "data" | "background" | "lowsrc" | "dynsrc" | "codebase" => {
                        Some("")
                    }
                    "srcset" | "imagesrcset" => Some(" \x0c,"),
                    "to" | "from" | "by" | "values" => Some(" \x0c;"),
                    "srcdoc" => Some(ANY),
                    // CSS fetches through a function or an import, which an escape can spell.
                    "style" => {
                        let css = value.to_ascii_lowercase();
                        let fetches = css.contains('\\')
                            || ["url(", "image", "src(", "@import"]
                                .iter()
                                .any(|f| css.contains(f));
                        fetches.then_some(ANY)
                    }
                    "href" | "xlink:href" => (tag.name != "a").then_some(""),
                    "content" => (tag.name == "meta").then_some(ANY),
                    _ => None,
                };
                if let Some(cut) = cut
                    && (names_evil_host(&value, cut)
                        || names_evil_host(&decode(&value, Refs::Kept, true), cut))
                {
                    return Some(text[at..tag.end].to_owned());
                }
            }
        }
        // Every `![` left must be a kept image, with no outside host in its address.
        text.match_indices("![")
            .map(|(at, _)| at)
            .find(|&at| {
                let address = text[at..]
                    .split_once("](")
                    .map_or("", |(_, rest)| rest.split(')').next().unwrap_or(""));
                !forge_image(text, at, &forge) || names_evil_host(address, " \x0c,;()'\"=")
            })
            .map(|at| text[at..].to_owned())
    }

    proptest! {
        /// Skipping to the bytes that can start markup finds it exactly where looking at every
        /// byte in turn does.
        #[test]
        fn markup_is_found_by_skipping_as_by_looking_everywhere(
            text in "[<!\\[\\]:a ]{0,12}",
            markdown in any::<bool>(),
        ) {
            let b = text.as_bytes();
            let everywhere = (0..b.len()).any(|i| match b[i] {
                b'<' => true,
                b'!' => b.get(i + 1) == Some(&b'['),
                b']' => markdown && b.get(i + 1) == Some(&b':'),
                _ => false,
            });
            prop_assert_eq!(has_markup(b, markdown), everywhere, "{:?}", text);
        }

        /// Whatever the text, no hidden character but a kept joiner or selector survives, and
        /// text without them comes back unchanged.
        #[test]
        fn nothing_hidden_survives(text in "(\\PC|[\u{200B}-\u{200F}\u{202A}-\u{202E}\u{2060}-\u{2064}\u{E0020}-\u{E007F}\u{FE00}-\u{FE0F}\u{E000}\u{2800}\r\u{1b}])*") {
            let out = neutralize(&text, Rendering::Plain, HOST);
            let chars: Vec<char> = out.chars().collect();
            let at = |k: Option<usize>| k.and_then(|k| chars.get(k).copied());
            for (i, c) in chars.iter().enumerate() {
                if hidden(*c) || is_variation_selector(*c) {
                    let next = at(Some(i + 1));
                    prop_assert!(
                        kept_in_context(*c, at(i.checked_sub(2)), at(i.checked_sub(1)), next)
                            || (*c == '\r' && next == Some('\n')),
                        "{c:?} in {out:?}"
                    );
                }
            }
            let clean = !text.chars().any(|c| hidden(c) || is_variation_selector(c) || c == '\r');
            if clean && !has_markup(text.as_bytes(), false) {
                prop_assert_eq!(out.as_ref(), text.as_str());
            }
        }

        /// Text the quick check calls inert is what the full checks leave as it is, in either
        /// rendering, with no credential to drop.
        #[test]
        fn inert_text_is_what_the_full_checks_leave_alone(text in "[\t\n\r -~\u{0}-\u{1f}\u{7f}é\u{200B}]{0,40}") {
            if inert(&text) {
                prop_assert!(matches!(super::super::policy::strip_url_credentials(&text), Cow::Borrowed(_)));
                for rendering in [Rendering::Markdown, Rendering::Plain] {
                    let escaped = escape_hidden(&text);
                    prop_assert!(escaped.is_none(), "{:?}", text);
                    prop_assert!(surface_markup(&text, rendering, HOST).is_none(), "{:?}", text);
                }
            }
        }

        /// A string is inert when each of its bytes is, wherever the byte sits.
        #[test]
        fn inert_is_decided_byte_by_byte(text in "[\t\n\r -~\u{0}-\u{1f}\u{7f}é]{0,40}") {
            prop_assert_eq!(inert(&text), text.bytes().all(inert_byte));
        }

        /// Text without a suspicious byte or character comes back borrowed.
        #[test]
        fn clean_text_comes_back_borrowed(text in "[\t\n \"-;=-\\\\^-~éж中👍]*") {
            for rendering in [Rendering::Markdown, Rendering::Plain] {
                prop_assert!(matches!(neutralize(&text, rendering, HOST), Cow::Borrowed(_)));
            }
        }

        /// Whatever the text, no tag attribute or markdown image that would fetch from another
        /// host survives as markup.
        #[test]
        fn no_outside_fetch_survives(text in markup()) {
            for rendering in [Rendering::Markdown, Rendering::Plain] {
                let out = neutralize(&text, rendering, HOST);
                prop_assert!(evil_fetch(&out).is_none(), "{rendering:?} {text:?} -> {out:?}: {:?}", evil_fetch(&out));
            }
        }

        /// Neutralizing what was neutralized changes nothing.
        #[test]
        fn neutralize_is_idempotent(text in markup()) {
            for rendering in [Rendering::Markdown, Rendering::Plain] {
                let once = neutralize(&text, rendering, HOST).into_owned();
                let twice = neutralize(&once, rendering, HOST);
                prop_assert_eq!(twice.as_ref(), once.as_str(), "{:?} {:?}", rendering, text);
            }
        }

        /// In markdown nothing that hides is left as markup: no comment, no processing
        /// instruction or declaration, no tag but visible formatting with safe attributes, no
        /// line that could be a reference definition.
        #[test]
        fn no_hidden_markup_survives_in_markdown(text in markup()) {
            let out = md(&text);
            let b = out.as_bytes();
            for (at, _) in out.match_indices('<') {
                match b.get(at + 1) {
                    Some(b'!' | b'?') => prop_assert!(false, "{text:?} -> {out:?}"),
                    Some(c) if c.is_ascii_alphabetic() || *c == b'/' && b.get(at + 2).is_some_and(u8::is_ascii_alphabetic) => {
                        let tag = Tag::read(&out, at);
                        prop_assert!(tag.closed && !tag.hides(&out[at..tag.end]), "{text:?} -> {out:?}");
                    }
                    _ => {}
                }
            }
            prop_assert!(surface_definitions(&out).is_none(), "{text:?} -> {out:?}");
        }

        /// A 32-byte message hidden in selectors after letters, or in joiners between them,
        /// does not survive: no joiner or selector is left. After pictographs at most one
        /// presentation selector each is, which cannot carry it.
        #[test]
        fn a_hidden_message_does_not_survive(
            message in prop::collection::vec(any::<u8>(), 32),
            letter in prop::sample::select(vec!['é', 'ж', 'λ', '中', 'ß', 'ğ', 'ø', 'ש']),
            emoji in prop::sample::select(vec!['👍', '❤', '😀', '🔥']),
        ) {
            let nibbles: Vec<u32> = message.iter().flat_map(|b| [u32::from(b >> 4), u32::from(b & 15)]).collect();
            let bits: Vec<bool> = message.iter().flat_map(|b| (0..8).map(move |k| b >> k & 1 == 1)).collect();
            let selectors: String = nibbles.iter().flat_map(|n| [letter, char::from_u32(0xFE00 + n).unwrap()]).collect();
            let joiners: String = bits.iter().flat_map(|&bit| [letter, if bit { '\u{200D}' } else { '\u{200C}' }]).collect();
            let invisible = |c: &char| matches!(c, '\u{200C}' | '\u{200D}' | '\u{FE00}'..='\u{FE0F}');
            for text in [&selectors, &joiners] {
                for rendering in [Rendering::Markdown, Rendering::Plain] {
                    let out = neutralize(text, rendering, HOST);
                    prop_assert_eq!(out.chars().filter(invisible).count(), 0);
                }
            }
            let on_emoji: String = nibbles.iter().flat_map(|n| [emoji, char::from_u32(0xFE00 + n).unwrap()]).collect();
            let out = md(&on_emoji);
            let kept: Vec<char> = out.chars().filter(invisible).collect();
            let presentation = kept.iter().all(|c| matches!(c, '\u{FE0E}' | '\u{FE0F}'));
            prop_assert!(presentation, "{:?}", kept);
            // One bit each at most, from 64 pictographs: not the 256 bits of the message.
            prop_assert!(kept.len() <= 64);
        }
    }
}
