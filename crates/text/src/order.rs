//! One stable sort for every ordering the library makes.
//!
//! Each `sort_by` with its own comparator is a separate copy of the standard
//! library's driftsort (~4.5 KB of wasm apiece, fifteen of them in the
//! module). Here every caller maps its items to a [`SortKey`] of two `u64`s,
//! the keys (with each item's position) are sorted by the one shared
//! instantiation of `sort_unstable`, and the items are moved into place by
//! swaps. Positions break ties, so the result is stable.

use std::cmp::Ordering;

/// A sort key: compared by its first word, then its second.
pub type SortKey = (u64, u64);

/// Sorts `items` stably by `key`, ascending.
pub fn sort_stable_by_key<T>(items: &mut [T], key: impl Fn(&T) -> SortKey) {
    let mut keyed: Vec<(SortKey, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (key(item), i))
        .collect();
    sort_keys(&mut keyed);
    let mut order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    place(items, &mut order);
}

/// Sorts `items` stably by `compare`, for orders no [`SortKey`] holds
/// (strings): one shared sort of positions, the comparator called through
/// a reference.
pub fn sort_stable_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions_by(&mut order, &|a, b| compare(&items[a], &items[b]));
    place(items, &mut order);
}

/// Sorts positions (or any `usize`s) ascending.
pub fn sort_positions(positions: &mut [usize]) {
    sort_stable_by_key(positions, |&p| (p as u64, 0));
}

/// Moves `items` into `order` (each slot's source position), following each
/// position's chain of earlier swaps to where its item is now (the standard
/// library's `sort_by_cached_key` does the same).
fn place<T>(items: &mut [T], order: &mut [usize]) {
    for i in 0..order.len() {
        let mut from = order[i];
        while from < i {
            from = order[from];
        }
        order[i] = from;
        items.swap(i, from);
    }
}

/// The one instantiation of the standard sort behind every keyed caller.
#[inline(never)]
fn sort_keys(keyed: &mut [(SortKey, usize)]) {
    keyed.sort_unstable();
}

/// The one instantiation of the standard stable sort behind every
/// comparing caller.
#[inline(never)]
fn sort_positions_by(order: &mut [usize], compare: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|a, b| compare(*a, *b));
}

/// `x`, ordered largest first.
pub fn descending(x: u64) -> u64 {
    !x
}

/// `x` as a `u64` in the order of [`f64::total_cmp`].
pub fn float(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// `x` ordered largest first, in the order of [`f64::total_cmp`].
pub fn float_descending(x: f64) -> u64 {
    descending(float(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_the_standard_stable_sort(pairs in proptest::collection::vec((0u64..8, 0u64..4, any::<u32>()), 0..200)) {
            let mut ours = pairs.clone();
            sort_stable_by_key(&mut ours, |&(a, b, _)| (a, descending(b)));
            let mut std = pairs;
            std.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn comparing_sorts_match_the_standard_stable_sort(words in proptest::collection::vec("[a-c]{0,3}", 0..100)) {
            let mut ours: Vec<(String, usize)> = words.iter().cloned().zip(0..).collect();
            sort_stable_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std: Vec<(String, usize)> = words.into_iter().zip(0..).collect();
            std.sort_by(|a, b| a.0.cmp(&b.0));
            prop_assert_eq!(ours, std);
        }

        #[test]
        fn positions_sort_ascending(mut v in proptest::collection::vec(0usize..50, 0..100)) {
            let mut std = v.clone();
            std.sort_unstable();
            sort_positions(&mut v);
            prop_assert_eq!(v, std);
        }

        #[test]
        fn floats_keep_the_total_order(a in any::<f64>(), b in any::<f64>()) {
            prop_assert_eq!(float(a).cmp(&float(b)), a.total_cmp(&b));
            prop_assert_eq!(float_descending(a).cmp(&float_descending(b)), b.total_cmp(&a));
        }
    }

    #[test]
    fn floats_at_the_edges() {
        let mut xs = [
            3.5,
            -0.0,
            f64::INFINITY,
            0.0,
            -2.0,
            f64::NEG_INFINITY,
            1e-300,
        ];
        sort_stable_by_key(&mut xs, |&x| (float(x), 0));
        assert_eq!(
            xs,
            [
                f64::NEG_INFINITY,
                -2.0,
                -0.0,
                0.0,
                1e-300,
                3.5,
                f64::INFINITY
            ]
        );
    }
}
