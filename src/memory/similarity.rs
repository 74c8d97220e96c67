//! How alike two texts are, for deduplicating facts: a built-in lexical
//! measure, or the cosine of embeddings from an injected [`Embedder`].

use std::collections::HashMap;

use async_trait::async_trait;

use super::in_memory::terms;
use crate::error::Result;

/// Turns text into a vector (a host's embedding model).
#[async_trait(?Send)]
pub trait Embedder {
    /// The embedding of `text`.
    async fn embed(&self, text: &str) -> Result<Vec<f32>>;
}

/// The cosine of the term-frequency vectors of `a` and `b` (terms as memory
/// recall splits them: lower-cased words, CJK characters one by one): 1 for
/// the same words in any order and case, 0 for no word in common.
pub fn lexical_similarity(a: &str, b: &str) -> f64 {
    let count = |text: &str| {
        let mut counts: HashMap<String, f64> = HashMap::new();
        for t in terms(text) {
            *counts.entry(t).or_insert(0.0) += 1.0;
        }
        counts
    };
    let (a, b) = (count(a), count(b));
    let dot: f64 = a.iter().filter_map(|(t, x)| b.get(t).map(|y| x * y)).sum();
    let norm = |v: &HashMap<String, f64>| v.values().map(|x| x * x).sum::<f64>().sqrt();
    let denominator = norm(&a) * norm(&b);
    if denominator == 0.0 {
        0.0
    } else {
        (dot / denominator).min(1.0)
    }
}

/// The cosine of two vectors; 0 when either is all zeros or their lengths
/// differ.
pub fn cosine_similarity(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    let denominator = na.sqrt() * nb.sqrt();
    if denominator == 0.0 || !denominator.is_finite() {
        0.0
    } else {
        (dot / denominator).clamp(-1.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_similarity_ignores_order_case_and_punctuation() {
        assert!(
            (lexical_similarity(
                "The user prefers metric units.",
                "the USER prefers metric units"
            ) - 1.0)
                .abs()
                < 1e-9
        );
        assert!(
            (lexical_similarity(
                "units metric prefers user the",
                "The user prefers metric units"
            ) - 1.0)
                .abs()
                < 1e-9
        );
        assert_eq!(lexical_similarity("alpha beta", "gamma delta"), 0.0);
        assert_eq!(lexical_similarity("", "anything"), 0.0);
        let near = lexical_similarity(
            "The user prefers metric units",
            "The user prefers metric units always",
        );
        assert!(near > 0.85 && near < 1.0, "{near}");
        let far = lexical_similarity(
            "The user prefers metric units",
            "The deploy runs on Fridays",
        );
        assert!(far < 0.5, "{far}");
    }

    #[test]
    fn cosine_handles_degenerate_vectors() {
        assert!((cosine_similarity(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine_similarity(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine_similarity(&[1.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine_similarity(&[f32::NAN], &[1.0]), 0.0);
    }
}
