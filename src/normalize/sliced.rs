//! Redaction of a large text in slices, handing the host's event loop a
//! turn between them ([`Clock::sleep`] of 0), so timers and abort signals
//! fire while a multi-megabyte tool output is normalised.
//!
//! Slices end at a newline where no secret is: each is first redacted with
//! [`OVERLAP_BYTES`] more text in view, the cut is moved past any secret
//! found across it, and the slice is then redacted up to the cut. A secret
//! across a slice boundary is caught whole, as in one pass over the text.

use crate::clock::Clock;
use crate::normalize::redact::{redact, Finding, Redaction};

/// The size of a slice (the cut moves to the next newline after it).
pub const SLICE_BYTES: usize = 256 * 1024;

/// How much text past a slice's end is in view when looking for a safe cut:
/// more than any secret is long (a PEM private key is under 10 KiB).
pub const OVERLAP_BYTES: usize = 64 * 1024;

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// Where the slice starting at `start` ends: just after the first newline
/// at or past `start + SLICE_BYTES` that no secret seen in `probe` (found
/// in `text[start..]` with offsets relative to `start`) spans; the text's
/// end when there is none in view.
fn cut(text: &str, start: usize, probe: &[Finding], view_end: usize) -> usize {
    let mut at = ceil_char_boundary(text, start + SLICE_BYTES);
    loop {
        let Some(newline) = text[at..view_end].find('\n').map(|i| at + i) else {
            return view_end;
        };
        let spanning = probe
            .iter()
            .filter(|f| start + f.start <= newline && start + f.end > newline)
            .map(|f| start + f.end)
            .max();
        match spanning {
            Some(end) => at = ceil_char_boundary(text, end),
            None => return newline + 1,
        }
    }
}

/// [`redact`] of `text`, a slice at a time with a turn of the host's event
/// loop between slices (through `clock`). The same result as one pass.
pub async fn redact_in_slices(text: &str, clock: &dyn Clock) -> Redaction {
    if text.len() <= SLICE_BYTES + OVERLAP_BYTES {
        return redact(text);
    }
    let mut out = Redaction {
        text: String::with_capacity(text.len()),
        findings: Vec::new(),
    };
    let mut start = 0;
    while start < text.len() {
        let view_end = ceil_char_boundary(text, start + SLICE_BYTES + OVERLAP_BYTES);
        let end = if view_end == text.len() {
            text.len()
        } else {
            let probe = redact(&text[start..view_end]);
            cut(text, start, &probe.findings, view_end)
        };
        let slice = redact(&text[start..end]);
        out.text.push_str(&slice.text);
        out.findings
            .extend(slice.findings.into_iter().map(|f| Finding {
                start: f.start + start,
                end: f.end + start,
                ..f
            }));
        start = end;
        if start < text.len() {
            clock.sleep(0.0).await;
        }
    }
    out
}
