//! Standard input read line by line before the transport sees it, so that a line that is not
//! JSON is answered (`-32700`, by [`super::bounded::Bounded`]) and logged rather than dropped
//! without a word, as rmcp's line reader does with it. Every other line passes as it came.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc::UnboundedSender;

/// Past this many bytes without a newline, a line is passed on unjudged: rmcp refuses a line
/// that long itself, and holding it here would only cost memory.
const MAX_JUDGED_LINE: usize = 16 * 1024 * 1024;

/// How much of a refused line the log and the answer quote.
const QUOTED: usize = 80;

/// A reader that keeps out the lines that are not JSON, telling `refused` of each.
pub struct JsonLines<R> {
    inner: R,
    /// Read, not yet a whole line.
    partial: Vec<u8>,
    /// How much of `partial` is known to hold no newline: each byte is searched once, so a
    /// long line arriving in many reads costs its length, not its length squared.
    searched: usize,
    /// Whole lines judged JSON (or too long to judge), to hand on.
    ready: Vec<u8>,
    handed: usize,
    /// The line being passed on unjudged, for being too long.
    passing: bool,
    ended: bool,
    refused: UnboundedSender<String>,
}

impl<R> JsonLines<R> {
    pub fn new(inner: R, refused: UnboundedSender<String>) -> JsonLines<R> {
        JsonLines {
            inner,
            partial: Vec::new(),
            searched: 0,
            ready: Vec::new(),
            handed: 0,
            passing: false,
            ended: false,
            refused,
        }
    }

    /// Judges one whole line (with its newline, if it had one).
    fn judge(&mut self, line: &[u8]) {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        let blank = text.iter().all(u8::is_ascii_whitespace);
        if blank || serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok() {
            self.ready.extend_from_slice(line);
        } else {
            let quoted = String::from_utf8_lossy(&text[..text.len().min(QUOTED)]).into_owned();
            // Nobody listening means the server is going away: nothing to answer then.
            let _ = self.refused.send(crate::forge::printable(&quoted));
        }
    }

    /// Moves what `partial` holds of whole lines into `ready`.
    fn split(&mut self) {
        let mut start = 0;
        while let Some(at) = memchr::memchr(b'\n', &self.partial[start.max(self.searched)..]) {
            let end = start.max(self.searched) + at;
            let line = self.partial[start..=end].to_vec();
            start = end + 1;
            match std::mem::take(&mut self.passing) {
                true => self.ready.extend_from_slice(&line),
                false => self.judge(&line),
            }
        }
        self.partial.drain(..start);
        if self.passing || self.partial.len() > MAX_JUDGED_LINE {
            self.passing = true;
            self.ready.append(&mut self.partial);
        }
        self.searched = self.partial.len();
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for JsonLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.handed < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.handed);
                buf.put_slice(&this.ready[this.handed..this.handed + n]);
                this.handed += n;
                if this.handed == this.ready.len() {
                    this.ready.clear();
                    this.handed = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            // Read straight into the unsearched tail: no buffer to zero and copy per read.
            this.partial.reserve(8192);
            match tokio_util::io::poll_read_buf(Pin::new(&mut this.inner), cx, &mut this.partial) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(0)) => {
                    // The end: a last line without its newline is judged all the same.
                    this.ended = true;
                    let last = std::mem::take(&mut this.partial);
                    match std::mem::take(&mut this.passing) {
                        true => this.ready.extend_from_slice(&last),
                        false if !last.is_empty() => this.judge(&last),
                        false => {}
                    }
                }
                Poll::Ready(Ok(_)) => this.split(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn lines_that_are_not_json_are_kept_out_and_told() {
        let input: &[u8] = b"{\"a\":1}\nnot json\n\n[1,2]\r\n{\"unfinished\":\n{\"b\":2}";
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut out = String::new();
        JsonLines::new(input, tx)
            .read_to_string(&mut out)
            .await
            .unwrap();
        assert_eq!(out, "{\"a\":1}\n\n[1,2]\r\n{\"b\":2}");
        assert_eq!(rx.recv().await.as_deref(), Some("not json"));
        assert_eq!(rx.recv().await.as_deref(), Some("{\"unfinished\":"));
    }

    /// A reader that hands its input on in the pieces given, one per read.
    struct Pieces(std::collections::VecDeque<Vec<u8>>);

    impl AsyncRead for Pieces {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let this = self.get_mut();
            if let Some(mut piece) = this.0.pop_front() {
                let n = piece.len().min(buf.remaining());
                buf.put_slice(&piece[..n]);
                if n < piece.len() {
                    this.0.push_front(piece.split_off(n));
                }
            }
            Poll::Ready(Ok(()))
        }
    }

    fn filtered(pieces: Vec<Vec<u8>>) -> (String, Vec<String>) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut out = String::new();
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(JsonLines::new(Pieces(pieces.into()), tx).read_to_string(&mut out))
            .unwrap();
        let mut refused = Vec::new();
        while let Ok(line) = rx.try_recv() {
            refused.push(line);
        }
        (out, refused)
    }

    proptest::proptest! {
        /// However the input is cut into reads, the same lines pass and the same are refused
        /// (the newline search resumes where the last read left it).
        #[test]
        fn the_lines_do_not_depend_on_how_the_input_is_cut(
            lines in proptest::collection::vec(
                proptest::prop_oneof!["\\{\"a\":[0-9]{0,40}\\}", "[a-z ]{0,30}", "\\[1,\\{\\}\\]\r"],
                0..8,
            ),
            cuts in proptest::collection::vec(1usize..64, 0..20),
        ) {
            let input = lines.join("\n").into_bytes();
            let mut pieces = Vec::new();
            let mut rest = input.as_slice();
            for cut in cuts {
                let (piece, after) = rest.split_at(cut.min(rest.len()));
                pieces.push(piece.to_vec());
                rest = after;
            }
            pieces.push(rest.to_vec());
            proptest::prop_assert_eq!(filtered(pieces), filtered(vec![input]));
        }
    }
}
