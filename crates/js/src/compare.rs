//! `memcmp` and `bcmp` for the npm package's wasm modules, eight bytes at a
//! time. Rust lowers every comparison of strings and byte slices that are
//! not of a known small length to a call of these; on `wasm32-unknown-
//! unknown` the ones `compiler_builtins` links (weakly) compare a byte per
//! loop turn, and in a compile of a large window they took a sixth of the
//! time (the event kinds matched per turn, the messages `toMessages`
//! compares with its previous rendering). Defined here, they take the
//! builtins' place in every module that links this crate (elsewhere they
//! keep their mangled names and replace nothing: the tests run them).
#![allow(unsafe_code)]

/// Compares `n` bytes at `a` and `b`: negative, zero or positive as the
/// first byte that differs is smaller in `a`, none differs, or larger.
///
/// # Safety
///
/// `a` and `b` must each be valid for reads of `n` bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // SAFETY: `i + 8 <= n`, and the caller vouches for `n` bytes at
        // each pointer; unaligned reads need no alignment.
        let (x, y) = unsafe {
            (
                a.add(i).cast::<u64>().read_unaligned(),
                b.add(i).cast::<u64>().read_unaligned(),
            )
        };
        if x != y {
            break;
        }
        i += 8;
    }
    while i < n {
        // SAFETY: `i < n`, within the bytes the caller vouches for.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// Zero when the `n` bytes at `a` and `b` are equal, otherwise not zero.
///
/// # Safety
///
/// As [`memcmp`].
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller upholds `memcmp`'s contract.
    unsafe { memcmp(a, b, n) }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::{bcmp, memcmp};

    fn compare(a: &[u8], b: &[u8]) -> Ordering {
        assert_eq!(a.len(), b.len());
        // SAFETY: both slices hold `a.len()` bytes.
        let (m, e) = unsafe {
            (
                memcmp(a.as_ptr(), b.as_ptr(), a.len()),
                bcmp(a.as_ptr(), b.as_ptr(), a.len()),
            )
        };
        assert_eq!(m == 0, e == 0);
        m.cmp(&0)
    }

    #[test]
    fn orders_as_slices_do_at_every_length_and_place() {
        for n in 0..=33usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            assert_eq!(compare(&a, &a), Ordering::Equal);
            for at in 0..n {
                for (x, y) in [(0u8, 1u8), (0x7f, 0x80), (0xff, 0), (b'a', b'b')] {
                    let (mut l, mut r) = (a.clone(), a.clone());
                    l[at] = x;
                    r[at] = y;
                    // A later difference never outweighs the first one.
                    if at + 1 < n {
                        r[n - 1] = l[n - 1].wrapping_sub(1);
                    }
                    assert_eq!(compare(&l, &r), l.cmp(&r), "n {n} at {at}");
                    assert_eq!(compare(&r, &l), r.cmp(&l), "n {n} at {at}");
                }
            }
        }
    }
}
