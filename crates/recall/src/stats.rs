//! Robust statistics of scores: how far one stands out from the rest.

/// How far `value` stands out from `values` in robust standard deviations
/// (the median absolute deviation, scaled to a normal distribution's):
/// 0 when it does not, at most [`crate::index::MAX_DISTINCTION`].
pub fn standing_out(value: f64, values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    let centre = median_with_zeros(&mut sorted, 0);
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    let spread = 1.4826 * median_weighted(&mut deviations, 0);
    if spread > 0.0 {
        ((value - centre) / spread).clamp(0.0, crate::index::MAX_DISTINCTION)
    } else if value > centre {
        crate::index::MAX_DISTINCTION
    } else {
        0.0
    }
}

/// The median of `values` and `zeros` more zeros; reorders `values`.
pub fn median_with_zeros(values: &mut [f64], zeros: usize) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    let at = |k: usize| {
        if k < zeros {
            0.0
        } else {
            values.get(k - zeros).copied().unwrap_or(0.0)
        }
    };
    middle(values.len() + zeros, at)
}

/// The median of `values` where the last value (when `repeat` > 0) stands
/// for `repeat` equal values; reorders `values`.
pub fn median_weighted(values: &mut Vec<f64>, repeat: usize) -> f64 {
    let repeated = if repeat > 0 { values.pop() } else { None };
    values.sort_unstable_by(f64::total_cmp);
    let Some(r) = repeated else {
        return middle(values.len(), |k| values.get(k).copied().unwrap_or(0.0));
    };
    // The repeated value sits at its sorted place, `repeat` times.
    let below = values.partition_point(|v| *v < r);
    let at = |k: usize| {
        if k < below {
            values[k]
        } else if k < below + repeat {
            r
        } else {
            values.get(k - repeat).copied().unwrap_or(r)
        }
    };
    middle(values.len() + repeat, at)
}

/// The median of `n` sorted values read by `at` (0 when there are none).
fn middle(n: usize, at: impl Fn(usize) -> f64) -> f64 {
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
    }

    #[test]
    fn one_value_far_above_the_rest_stands_out() {
        let values = [0.1, 0.12, 0.11, 0.09, 0.1, 0.9];
        assert!(standing_out(0.9, &values) > 10.0);
        assert_eq!(standing_out(0.1, &values), 0.0);
        assert_eq!(standing_out(1.0, &[1.0, 1.0]), 0.0);
    }
}
