//! A PDF's page count, which the providers price a document by.
//!
//! Read, in order: the linearisation dictionary's `/N`; the largest `/Count`
//! of a `/Type /Pages` dictionary (the page tree's root holds them all);
//! the same inside compressed object streams (`/Type /ObjStm`, Flate), where
//! every PDF 1.5+ writer puts the page tree; the `/Type /Page` objects
//! counted, in the open and in those streams. When none of these reads (a
//! broken or encrypted file), [`UNKNOWN_PAGES`].

use miniz_oxide::inflate::decompress_to_vec_zlib_with_limit;

/// The page count assumed for a PDF whose count cannot be read: the
/// documented assumption, so that an unreadable document is not priced as
/// one page.
pub const UNKNOWN_PAGES: u32 = 10;

/// At most this many bytes are inflated from all of a file's object
/// streams together (each charged what it inflated, whole or cut): hostile
/// streams (zip bombs, one or many) stop there.
const MAX_INFLATED: usize = 64 << 20;

/// The page count of `bytes` (see the module documentation); at least 1.
pub fn pdf_pages(bytes: &[u8]) -> u32 {
    if let Some(n) = linearized_pages(bytes) {
        return n.max(1);
    }
    if let Some(n) = tree_count(bytes) {
        return n.max(1);
    }
    let streams = object_streams(bytes).streams;
    if let Some(n) = streams.iter().filter_map(|s| tree_count(s)).max() {
        return n.max(1);
    }
    let objects = streams.iter().fold(page_objects(bytes), |n, s| {
        n.saturating_add(page_objects(s))
    });
    if objects > 0 {
        return objects;
    }
    UNKNOWN_PAGES
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Every start of `needle` in `haystack`.
fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + find(haystack.get(from..)?, needle)?;
        from = at + needle.len();
        Some(at)
    })
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\r' | b'\n' | b'\t' | b'\x0c' | 0) {
        i += 1;
    }
    i
}

/// The non-negative integer at `bytes[i..]` (after white space).
fn integer_at(bytes: &[u8], i: usize) -> Option<u32> {
    let start = skip_space(bytes, i);
    let digits = bytes[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    std::str::from_utf8(&bytes[start..start + digits])
        .ok()?
        .parse()
        .ok()
}

/// The integer value of `key` in the dictionary text `dict` (`/N 60`),
/// when `key` is followed by a delimiter.
fn key_value(dict: &[u8], key: &[u8]) -> Option<u32> {
    find_all(dict, key)
        .filter(|&at| {
            dict.get(at + key.len())
                .is_some_and(|b| !b.is_ascii_alphanumeric())
        })
        .find_map(|at| integer_at(dict, at + key.len()))
}

/// The dictionary around `at` (from the `<<` opening it to its `>>`,
/// nested ones included), at most 4 KB either side.
fn enclosing_dict(bytes: &[u8], at: usize) -> &[u8] {
    &bytes[enclosing_dict_range(bytes, at)]
}

/// Where [`enclosing_dict`] is in `bytes`.
fn enclosing_dict_range(bytes: &[u8], at: usize) -> std::ops::Range<usize> {
    let lo = at.saturating_sub(4096);
    let mut depth = 0i32;
    let mut start = lo;
    let mut i = at;
    while i > lo {
        i -= 1;
        if bytes[i..].starts_with(b">>") {
            depth += 1;
        } else if bytes[i..].starts_with(b"<<") {
            if depth == 0 {
                start = i;
                break;
            }
            depth -= 1;
        }
    }
    let hi = at.saturating_add(4096).min(bytes.len());
    let mut depth = 0i32;
    let mut end = hi;
    let mut j = start + 2;
    while j + 1 < hi {
        if bytes[j..].starts_with(b"<<") {
            depth += 1;
            j += 2;
        } else if bytes[j..].starts_with(b">>") {
            if depth == 0 {
                end = j + 2;
                break;
            }
            depth -= 1;
            j += 2;
        } else {
            j += 1;
        }
    }
    start.min(end)..end
}

/// `/N` of the linearisation dictionary, which comes first in the file.
fn linearized_pages(bytes: &[u8]) -> Option<u32> {
    let head = &bytes[..bytes.len().min(2048)];
    let at = find(head, b"/Linearized")?;
    key_value(enclosing_dict(bytes, at), b"/N")
}

/// Where `/Type /Pages` (any white space) starts in `bytes`.
fn pages_types(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    find_all(bytes, b"/Type").filter(move |&at| {
        let j = skip_space(bytes, at + 5);
        bytes[j..].starts_with(b"/Pages")
            && !bytes.get(j + 6).is_some_and(u8::is_ascii_alphanumeric)
    })
}

/// The largest `/Count` of a `/Type /Pages` dictionary in `bytes`.
fn tree_count(bytes: &[u8]) -> Option<u32> {
    pages_types(bytes)
        .filter_map(|at| key_value(enclosing_dict(bytes, at), b"/Count"))
        .max()
}

/// How many `/Type /Page` objects (not `/Pages`) `bytes` holds.
fn page_objects(bytes: &[u8]) -> u32 {
    let count = find_all(bytes, b"/Type")
        .filter(|&at| {
            let j = skip_space(bytes, at + 5);
            bytes[j..].starts_with(b"/Page")
                && !bytes.get(j + 5).is_some_and(u8::is_ascii_alphanumeric)
        })
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// What a file's object streams inflated: the contents of those that
/// inflated whole, and how many bytes were inflated in all (a stream cut
/// at the budget or broken midway included).
struct Inflated {
    streams: Vec<Vec<u8>>,
    bytes: usize,
}

/// The file's `endstream` keywords, found once: each stream's end is the
/// first after its start.
struct EndStreams(Vec<usize>);

impl EndStreams {
    fn of(bytes: &[u8]) -> EndStreams {
        EndStreams(find_all(bytes, b"endstream").collect())
    }

    /// The first `endstream` at or after `start`.
    fn after(&self, start: usize) -> Option<usize> {
        self.0.get(self.0.partition_point(|&p| p < start)).copied()
    }
}

/// Where the data of the stream whose `stream` keyword ends at `start`
/// ends: `start + length` when `/Length` gives one that fits in the file,
/// else the `endstream` after it. `None` when neither reads.
fn stream_end(
    bytes: &[u8],
    start: usize,
    length: Option<usize>,
    ends: &EndStreams,
) -> Option<usize> {
    match length {
        Some(n) if start.checked_add(n).is_some_and(|end| end <= bytes.len()) => Some(start + n),
        _ if start <= bytes.len() => ends.after(start),
        _ => None,
    }
}

/// The data of the object stream whose dictionary is `dict` (at `dict` in
/// `bytes`): the `stream` keyword right after it, an end of line, the
/// data, `endstream`. (Only white space may come between a dictionary and
/// its `stream`: looking further, per `/ObjStm`, made a file of them
/// quadratic.)
fn stream_data<'a>(
    bytes: &'a [u8],
    dict: std::ops::Range<usize>,
    ends: &EndStreams,
) -> Option<&'a [u8]> {
    let keyword = skip_space(bytes, dict.end);
    if !bytes.get(keyword..)?.starts_with(b"stream") {
        return None;
    }
    let mut start = keyword + 6;
    if bytes[start..].starts_with(b"\r\n") {
        start += 2;
    } else if bytes[start..].starts_with(b"\n") || bytes[start..].starts_with(b"\r") {
        start += 1;
    }
    let length = key_value(&bytes[dict], b"/Length").and_then(|n| usize::try_from(n).ok());
    let end = stream_end(bytes, start, length, ends)?;
    bytes.get(start..end)
}

/// The inflated contents of the file's Flate-compressed object streams
/// (`/Type /ObjStm`), within [`MAX_INFLATED`] bytes in all.
fn object_streams(bytes: &[u8]) -> Inflated {
    let mut out = Inflated {
        streams: Vec::new(),
        bytes: 0,
    };
    let mut budget = MAX_INFLATED;
    let ends = EndStreams::of(bytes);
    for at in find_all(bytes, b"/ObjStm") {
        let range = enclosing_dict_range(bytes, at);
        let dict = &bytes[range.clone()];
        if find(dict, b"/FlateDecode").is_none() || find(dict, b"/DecodeParms").is_some() {
            continue;
        }
        let Some(data) = stream_data(bytes, range, &ends) else {
            continue;
        };
        match decompress_to_vec_zlib_with_limit(data, budget) {
            Ok(inflated) => {
                budget -= inflated.len();
                out.bytes += inflated.len();
                out.streams.push(inflated);
            }
            // A stream cut at the budget (a bomb) or broken midway is
            // charged what it inflated: N bombs inflate the budget once.
            Err(e) => {
                budget = budget.saturating_sub(e.output.len());
                out.bytes += e.output.len();
            }
        }
        if budget == 0 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::compress_to_vec_zlib;

    #[test]
    fn the_page_tree_counts() {
        let pdf = b"%PDF-1.4\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>\n2 0 obj << /Type /Page /Parent 1 0 R >>\n3 0 obj <</Type/Page/Parent 1 0 R>>\n";
        assert_eq!(pdf_pages(pdf), 2);
        // The root's count, not a kid's nor an outline's.
        let nested = b"%PDF-1.4 << /Type /Pages /Count 7 /Kids [] >> << /Type /Pages /Count 3 >> << /Type /Outlines /Count 40 >>";
        assert_eq!(pdf_pages(nested), 7);
        let linearized =
            b"%PDF-1.6\n1 0 obj <</Linearized 1/L 19293/H [1155 192]/O 124/E 2550/N 60/T 18422>>";
        assert_eq!(pdf_pages(linearized), 60);
    }

    #[test]
    fn compressed_object_streams_are_read() {
        let objects = b"2 0 4 30 << /Type /Pages /Count 60 /Kids [4 0 R] >> << /Type /Page >>";
        let data = compress_to_vec_zlib(objects, 6);
        let mut pdf = format!(
            "%PDF-1.5\n5 0 obj << /Type /ObjStm /N 2 /First 8 /Filter /FlateDecode /Length {} >>\nstream\n",
            data.len()
        )
        .into_bytes();
        pdf.extend_from_slice(&data);
        pdf.extend_from_slice(b"\nendstream\nendobj\n");
        assert_eq!(pdf_pages(&pdf), 60);
    }

    /// A stream whose `/Length` reaches past the address space (on wasm32,
    /// `/Length 4294967290`; here, lengths near `usize::MAX`) ends at its
    /// `endstream`, never at a wrapped-around offset.
    #[test]
    fn a_length_past_the_address_space_reads_to_endstream() {
        let bytes = b"<< /Length 4294967290 >> stream\nabc\nendstream";
        let start = 32;
        let ends = EndStreams::of(bytes);
        for length in [usize::MAX, usize::MAX - 3, usize::MAX - start + 1] {
            assert_eq!(stream_end(bytes, start, Some(length), &ends), Some(36));
        }
        assert_eq!(stream_end(bytes, start, Some(3), &ends), Some(35));
        assert_eq!(
            stream_end(bytes, bytes.len() + 1, Some(usize::MAX), &ends),
            None
        );
        let objects = b"1 0 << /Type /Page >>";
        let data = compress_to_vec_zlib(objects, 6);
        let mut pdf =
            b"%PDF-1.5 << /Type /ObjStm /Filter /FlateDecode /Length 4294967290 >>\nstream\n"
                .to_vec();
        pdf.extend_from_slice(&data);
        pdf.extend_from_slice(b"\nendstream");
        assert_eq!(pdf_pages(&pdf), 1);
    }

    /// A file of dictionaries naming `/ObjStm` and `/FlateDecode` with no
    /// `stream` after them is read in linear time: 16 × the file, well
    /// under 16 × the time (it was quadratic: 60× for 16×).
    #[test]
    fn object_stream_dictionaries_without_streams_are_read_in_linear_time() {
        let time = |n: usize| {
            let pdf = b"<</ObjStm/FlateDecode>>".repeat(n);
            let started = std::time::Instant::now();
            assert_eq!(pdf_pages(&pdf), UNKNOWN_PAGES);
            started.elapsed().as_secs_f64()
        };
        let small = time(2_000).max(1e-4);
        let large = time(32_000);
        assert!(large < small * 64.0, "{large} s against {small} s");
    }

    /// Zip bombs in one file share one budget: three streams each
    /// inflating past the cap inflate [`MAX_INFLATED`] bytes in all.
    #[test]
    fn bombs_in_one_file_share_one_budget() {
        let bomb = compress_to_vec_zlib(&vec![b' '; MAX_INFLATED + 1024], 9);
        let mut pdf = b"%PDF-1.5\n".to_vec();
        for _ in 0..3 {
            pdf.extend_from_slice(b"<< /Type /ObjStm /Filter /FlateDecode >> stream\n");
            pdf.extend_from_slice(&bomb);
            pdf.extend_from_slice(b"\nendstream\n");
        }
        let inflated = object_streams(&pdf);
        assert!(
            inflated.bytes <= MAX_INFLATED,
            "{} bytes inflated, the cap is {MAX_INFLATED}",
            inflated.bytes
        );
        assert!(inflated.streams.is_empty());
        assert_eq!(pdf_pages(&pdf), UNKNOWN_PAGES);
    }

    #[test]
    fn what_cannot_be_read_counts_the_assumed_pages() {
        assert_eq!(pdf_pages(b"%PDF-1.7 nothing readable"), UNKNOWN_PAGES);
        assert_eq!(pdf_pages(b""), UNKNOWN_PAGES);
        // A stream that does not inflate, a count with no digits.
        let broken = b"%PDF-1.5 << /Type /ObjStm /Filter /FlateDecode /Length 4 >> stream\nabcd\nendstream << /Type /Pages /Count >>";
        assert_eq!(pdf_pages(broken), UNKNOWN_PAGES);
        // A zip bomb inflates no further than the limit.
        let bomb = compress_to_vec_zlib(&vec![b' '; MAX_INFLATED + 1024], 9);
        let mut pdf = b"%PDF-1.5 << /Type /ObjStm /Filter /FlateDecode >> stream\n".to_vec();
        pdf.extend_from_slice(&bomb);
        pdf.extend_from_slice(b"\nendstream");
        assert_eq!(pdf_pages(&pdf), UNKNOWN_PAGES);
    }
}
