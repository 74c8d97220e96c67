//! Mutated real files for the fuzz targets: a seed (a file of
//! `tests/fixtures/media/` or `tests/fixtures/fuzz/`) and a few edits:
//! bytes flipped, inserted, deleted, cut, spliced, and tokens the parser
//! looks for (lengths near the limits of 32 and 64 bits, keywords, magic
//! numbers) written over or into it.

use std::path::Path;

use proptest::prelude::*;
use proptest::sample::Index;

/// The bytes of `name` under `tests/fixtures/`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One edit of a seed.
#[derive(Debug, Clone)]
pub enum Edit {
    /// XOR a byte with a mask.
    Flip(Index, u8),
    /// Insert bytes.
    Insert(Index, Vec<u8>),
    /// Delete up to n bytes.
    Delete(Index, usize),
    /// Write one of the tokens over the bytes there.
    Overwrite(Index, Index),
    /// Insert one of the tokens.
    Token(Index, Index),
    /// Cut the file there.
    Truncate(Index),
    /// Copy a run of the file elsewhere in it.
    Splice(Index, Index, usize),
}

/// Up to `max` edits, any kind.
pub fn edits(max: usize) -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<Index>(), 1u8..=255).prop_map(|(i, m)| Edit::Flip(i, m)),
        (any::<Index>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Edit::Insert(i, b)),
        (any::<Index>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Edit::Overwrite(i, t)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Edit::Token(i, t)),
        any::<Index>().prop_map(Edit::Truncate),
        (any::<Index>(), any::<Index>(), 1usize..256).prop_map(|(a, b, n)| Edit::Splice(a, b, n)),
    ];
    prop::collection::vec(edit, 0..=max)
}

/// `seed` with `edits` applied, tokens taken from `tokens`.
pub fn apply(seed: &[u8], edits: &[Edit], tokens: &[&[u8]]) -> Vec<u8> {
    let mut out = seed.to_vec();
    let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len + 1) };
    for edit in edits {
        let len = out.len();
        match edit {
            Edit::Flip(i, mask) if len > 0 => {
                let j = i.index(len);
                out[j] ^= mask;
            }
            Edit::Flip(..) => {}
            Edit::Insert(i, bytes) => {
                let j = at(i, len);
                out.splice(j..j, bytes.iter().copied());
            }
            Edit::Delete(i, n) => {
                let j = at(i, len);
                out.drain(j..(j + n).min(len));
            }
            Edit::Overwrite(i, t) if !tokens.is_empty() => {
                let token = t.get(tokens);
                let j = at(i, len);
                let end = (j + token.len()).min(len);
                out.splice(j..end, token.iter().copied());
            }
            Edit::Token(i, t) if !tokens.is_empty() => {
                let j = at(i, len);
                out.splice(j..j, t.get(tokens).iter().copied());
            }
            Edit::Overwrite(..) | Edit::Token(..) => {}
            Edit::Truncate(i) => out.truncate(at(i, len)),
            Edit::Splice(from, to, n) if len > 0 => {
                let a = from.index(len);
                let run = out[a..(a + n).min(len)].to_vec();
                let b = at(to, len);
                out.splice(b..b, run);
            }
            Edit::Splice(..) => {}
        }
    }
    out
}

/// What a PDF parser looks for, and lengths and counts at the limits.
pub const PDF_TOKENS: &[&[u8]] = &[
    b"/Length 4294967290",
    b"/Length 4294967295 ",
    b"/Length 18446744073709551615",
    b"/Length 99999999999999999999999",
    b"/Length 0",
    b"stream\r\n",
    b"stream\n",
    b"endstream",
    b"<<",
    b">>",
    b"<< /Type /ObjStm /Filter /FlateDecode >>",
    b"/Type /ObjStm",
    b"/Filter /FlateDecode",
    b"/DecodeParms",
    b"/Type /Pages /Count 4294967295",
    b"/Type /Pages",
    b"/Type /Page",
    b"/Count 4294967296",
    b"/Count ",
    b"<</Linearized 1/N 4294967295>>",
    b"/Linearized",
    b"/N ",
    b"\x78\x9c",
    b"\x78\xda\xed\xc1\x01\x0d\x00\x00\x00\xc2\xa0\xf7\x4f",
    b"\0",
];

/// What the image headers hold: magic numbers, chunk names, sizes at the
/// limits.
pub const IMAGE_TOKENS: &[&[u8]] = &[
    b"\x89PNG\r\n\x1a\n",
    b"IHDR",
    b"\xff\xd8\xff",
    b"\xff\xc0",
    b"\xff\xc2",
    b"\xff\xe1",
    b"\xff\xd9",
    b"GIF89a",
    b"GIF87a",
    b"RIFF",
    b"WEBP",
    b"VP8X",
    b"VP8L",
    b"VP8 ",
    b"ftypavif",
    b"\xff\xff\xff\xff",
    b"\xff\xff",
    b"\x00\x00\x00\x00",
    b"\x7f\xff\xff\xff",
    b"\x00",
];
