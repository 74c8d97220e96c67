//! Robust statistics of scores: how far one stands out from the rest.
//! Medians are found by selection (linear time), not by sorting: a search
//! over a large index takes the median of every matching text's score.

/// The distinction of a match when nearly every key scores the same.
pub const MAX_DISTINCTION: f64 = 100.0;

/// How far `value` stands out from `values` in robust standard deviations
/// (the median absolute deviation, scaled to a normal distribution's):
/// 0 when it does not, at most [`MAX_DISTINCTION`].
pub fn standing_out(value: f64, values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    let centre = median_with_zeros(&mut sorted, 0);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    let spread = 1.4826 * median_weighted(&mut deviations, 0);
    distinction(value, centre, spread)
}

/// How far `value` stands out from a centre and a spread (see
/// [`standing_out`]).
pub fn distinction(value: f64, centre: f64, spread: f64) -> f64 {
    if spread > 0.0 {
        ((value - centre) / spread).clamp(0.0, MAX_DISTINCTION)
    } else if value > centre {
        MAX_DISTINCTION
    } else {
        0.0
    }
}

/// The `k`-th smallest of `values` (0-based); reorders `values`.
fn kth(values: &mut [f64], k: usize) -> f64 {
    if k >= values.len() {
        return 0.0;
    }
    *values.select_nth_unstable_by(k, f64::total_cmp).1
}

/// The median of `values` and `zeros` more zeros (`values` not negative);
/// reorders `values`.
pub fn median_with_zeros(values: &mut [f64], zeros: usize) -> f64 {
    let n = values.len() + zeros;
    middle(n, |k| {
        if k < zeros {
            0.0
        } else {
            kth(values, k - zeros)
        }
    })
}

/// The median of `values` where the last value (when `repeat` > 0) stands
/// for `repeat` equal values; reorders `values`.
pub fn median_weighted(values: &mut Vec<f64>, repeat: usize) -> f64 {
    let repeated = if repeat > 0 { values.pop() } else { None };
    let Some(r) = repeated else {
        return middle(values.len(), |k| kth(values, k));
    };
    // The repeated value sits at its sorted place, `repeat` times.
    let below = values.iter().filter(|v| **v < r).count();
    let n = values.len() + repeat;
    middle(n, |k| {
        if k < below {
            kth(values, k)
        } else if k < below + repeat {
            r
        } else {
            kth(values, k - repeat)
        }
    })
}

/// The median of `n` values whose `k`-th smallest `at` gives (0 when there
/// are none).
fn middle(n: usize, mut at: impl FnMut(usize) -> f64) -> f64 {
    match n {
        0 => 0.0,
        n if n % 2 == 1 => at(n / 2),
        n => (at(n / 2 - 1) + at(n / 2)) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_count_the_unmatched_and_the_repeated() {
        assert_eq!(median_with_zeros(&mut [3.0, 1.0], 0), 2.0);
        assert_eq!(median_with_zeros(&mut [5.0, 4.0], 3), 0.0);
        assert_eq!(median_with_zeros(&mut [5.0, 4.0, 6.0], 2), 4.0);
        assert_eq!(median_with_zeros(&mut [], 0), 0.0);
        // [1, 2] and 2 for 3 times: 1 2 2 2 2 -> 2.
        assert_eq!(median_weighted(&mut vec![1.0, 2.0, 2.0], 3), 2.0);
        // [9] and 1 for 4 times: 1 1 1 1 9 -> 1.
        assert_eq!(median_weighted(&mut vec![9.0, 1.0], 4), 1.0);
        assert_eq!(median_weighted(&mut vec![4.0, 8.0], 0), 6.0);
        // [1, 5, 7] and 3 for 2 times: 1 3 3 5 7 -> 3.
        assert_eq!(median_weighted(&mut vec![7.0, 1.0, 5.0, 3.0], 2), 3.0);
    }

    #[test]
    fn selection_gives_the_medians_sorting_gives() {
        let mut r = 0x2545_f491_u64;
        for n in 0..60usize {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    r ^= r << 13;
                    r ^= r >> 7;
                    r ^= r << 17;
                    (r % 7) as f64
                })
                .collect();
            for zeros in [0, 1, 2, n / 2, n + 3] {
                let mut sorted: Vec<f64> = vec![0.0; zeros];
                sorted.extend(&values);
                sorted.sort_by(f64::total_cmp);
                let want = middle(sorted.len(), |k| sorted[k]);
                assert_eq!(median_with_zeros(&mut values.clone(), zeros), want);
                if let Some(&last) = values.last() {
                    let mut repeated = values[..n - 1].to_vec();
                    repeated.extend(std::iter::repeat_n(last, zeros.max(1)));
                    repeated.sort_by(f64::total_cmp);
                    let want = middle(repeated.len(), |k| repeated[k]);
                    assert_eq!(median_weighted(&mut values.clone(), zeros.max(1)), want);
                }
            }
        }
    }

    #[test]
    fn one_value_far_above_the_rest_stands_out() {
        let values = [0.1, 0.12, 0.11, 0.09, 0.1, 0.9];
        assert!(standing_out(0.9, &values) > 10.0);
        assert_eq!(standing_out(0.1, &values), 0.0);
        assert_eq!(standing_out(1.0, &[1.0, 1.0]), 0.0);
    }
}
