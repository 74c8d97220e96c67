//! An injected embedder for recall: the host's model turns texts into
//! vectors, asked in batches, each text's vector cached by its content id so
//! a text is embedded once per processor.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;

use crate::artifacts::content_id;
use crate::error::{Error, ErrorCode, Result};

/// Texts sent to the embedder in one call at most.
pub const EMBED_BATCH: usize = 64;
/// Characters of a text the embedder is given at most (its start).
pub const EMBED_CHARS: usize = 2_000;

/// Turns texts into vectors (one per text, all of one dimension).
#[async_trait(?Send)]
pub trait Embedder {
    /// The vectors of `texts`, in their order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
}

/// Vectors by content id.
#[derive(Default)]
pub struct EmbeddingCache {
    vectors: RefCell<HashMap<String, Rc<[f32]>>>,
}

fn bad(message: String) -> Error {
    Error::new(ErrorCode::ProcessorFailed, message)
}

impl EmbeddingCache {
    /// An empty cache.
    pub fn new() -> Self {
        EmbeddingCache::default()
    }

    /// Vectors cached so far.
    pub fn len(&self) -> usize {
        self.vectors.borrow().len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vectors of `texts` (each cut after [`EMBED_CHARS`]): those not
    /// cached are asked of `embedder` in batches of [`EMBED_BATCH`]. An
    /// answer of the wrong length, with a non-finite number or of another
    /// dimension than the rest is an error, and nothing of it is cached.
    pub async fn vectors(&self, embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Rc<[f32]>>> {
        let cut: Vec<&str> = texts
            .iter()
            .map(|t| match t.char_indices().nth(EMBED_CHARS) {
                Some((at, _)) => &t[..at],
                None => t,
            })
            .collect();
        let ids: Vec<String> = cut.iter().map(|t| content_id(t.as_bytes())).collect();
        let mut missing: Vec<(String, String)> = Vec::new();
        {
            let cached = self.vectors.borrow();
            for (id, text) in ids.iter().zip(&cut) {
                if !cached.contains_key(id) && !missing.iter().any(|(m, _)| m == id) {
                    missing.push((id.clone(), (*text).to_string()));
                }
            }
        }
        let mut dimension = self.vectors.borrow().values().next().map(|v| v.len());
        for batch in missing.chunks(EMBED_BATCH) {
            let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
            let vectors = embedder.embed(&texts).await?;
            if vectors.len() != texts.len() {
                return Err(bad(format!(
                    "the embedder returned {} vectors for {} texts",
                    vectors.len(),
                    texts.len()
                )));
            }
            for v in &vectors {
                if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
                    return Err(bad("the embedder returned an empty vector or one with a number that is not finite".into()));
                }
                if *dimension.get_or_insert(v.len()) != v.len() {
                    return Err(bad(format!(
                        "the embedder returned vectors of {} and {} dimensions",
                        dimension.unwrap_or(0),
                        v.len()
                    )));
                }
            }
            let mut cached = self.vectors.borrow_mut();
            for ((id, _), v) in batch.iter().zip(vectors) {
                cached.insert(id.clone(), Rc::from(v));
            }
        }
        let cached = self.vectors.borrow();
        ids.iter()
            .map(|id| {
                cached
                    .get(id)
                    .cloned()
                    .ok_or_else(|| bad("an embedding went missing".into()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Answers `answer` for any texts, counting the calls.
    struct Fixed {
        answer: Vec<Vec<f32>>,
        calls: Cell<usize>,
    }

    #[async_trait(?Send)]
    impl Embedder for Fixed {
        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
            self.calls.set(self.calls.get() + 1);
            Ok(self
                .answer
                .iter()
                .cycle()
                .take(texts.len())
                .cloned()
                .collect())
        }
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        pollster::block_on(f)
    }

    #[test]
    fn bad_answers_are_errors_and_nothing_of_them_is_cached() {
        for answer in [
            vec![vec![f32::NAN, 1.0]],
            vec![vec![]],
            vec![vec![1.0, 2.0], vec![1.0]],
        ] {
            let cache = EmbeddingCache::new();
            let e = Fixed {
                answer,
                calls: Cell::new(0),
            };
            let err = run(cache.vectors(&e, &["a", "b"])).unwrap_err();
            assert_eq!(err.code(), ErrorCode::ProcessorFailed);
            assert!(cache.is_empty());
        }
        struct Short;
        #[async_trait(?Send)]
        impl Embedder for Short {
            async fn embed(&self, _texts: &[String]) -> Result<Vec<Vec<f32>>> {
                Ok(vec![vec![1.0]])
            }
        }
        let cache = EmbeddingCache::new();
        assert!(run(cache.vectors(&Short, &["a", "b"])).is_err());
    }

    #[test]
    fn texts_are_embedded_once_in_batches() {
        let cache = EmbeddingCache::new();
        let e = Fixed {
            answer: vec![vec![1.0, 0.0]],
            calls: Cell::new(0),
        };
        let texts: Vec<String> = (0..150).map(|i| format!("text {i}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(run(cache.vectors(&e, &refs)).unwrap().len(), 150);
        assert_eq!(e.calls.get(), 3);
        assert_eq!(run(cache.vectors(&e, &refs[..10])).unwrap().len(), 10);
        assert_eq!(e.calls.get(), 3);
        assert_eq!(cache.len(), 150);
    }
}
