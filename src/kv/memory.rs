//! A key-value store in memory, optionally enforcing a value-size limit.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::KeyValue;

/// A [`KeyValue`] store held in memory. With a value limit it rejects larger
/// values the way Deno KV (64 KiB) or Cloudflare KV (25 MiB) do, which makes
/// it the native stand-in for those stores in tests.
///
/// With a clock ([`MemoryKv::with_clock`]) it keeps expiring keys
/// ([`KeyValue::put_expiring`]) by that clock, as Redis does by its own.
#[derive(Default)]
pub struct MemoryKv {
    values: RefCell<BTreeMap<String, Vec<u8>>>,
    max_value_bytes: Option<usize>,
    clock: Option<Rc<dyn Clock>>,
    /// When each expiring key expires, by `clock`.
    expiries: RefCell<BTreeMap<String, f64>>,
}

impl std::fmt::Debug for MemoryKv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryKv")
            .field("values", &self.values.borrow().len())
            .field("max_value_bytes", &self.max_value_bytes)
            .finish()
    }
}

impl MemoryKv {
    /// An empty store without a value limit.
    pub fn new() -> Self {
        MemoryKv::default()
    }

    /// An empty store whose `put` rejects values over `max_value_bytes`.
    pub fn with_value_limit(max_value_bytes: usize) -> Self {
        MemoryKv {
            max_value_bytes: Some(max_value_bytes),
            ..MemoryKv::default()
        }
    }

    /// An empty store whose expiring keys expire by `clock`.
    pub fn with_clock(clock: Rc<dyn Clock>) -> Self {
        MemoryKv {
            clock: Some(clock),
            ..MemoryKv::default()
        }
    }

    /// Every key, sorted (for inspecting what a store wrote).
    pub fn keys(&self) -> Vec<String> {
        self.values.borrow().keys().cloned().collect()
    }

    /// The raw value of `key`, read without going through a store.
    pub fn raw_get(&self, key: &str) -> Option<Vec<u8>> {
        let expired = match (&self.clock, self.expiries.borrow().get(key)) {
            (Some(clock), Some(&at)) => clock.now_ms() >= at,
            _ => false,
        };
        if expired {
            self.raw_delete(key);
        }
        self.values.borrow().get(key).cloned()
    }

    /// Sets `key` behind any store's back (for corruption tests).
    pub fn raw_put(&self, key: &str, value: Vec<u8>) {
        self.values.borrow_mut().insert(key.to_string(), value);
    }

    /// Removes `key` behind any store's back (for corruption tests).
    pub fn raw_delete(&self, key: &str) {
        self.values.borrow_mut().remove(key);
        self.expiries.borrow_mut().remove(key);
    }
}

#[async_trait(?Send)]
impl KeyValue for MemoryKv {
    type Value = Vec<u8>;

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.raw_get(key))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        if let Some(max) = self.max_value_bytes {
            if value.len() > max {
                return Err(Error::new(
                    ErrorCode::StoreFailed,
                    format!(
                        "value of {key} is {} bytes, over the limit of {max}",
                        value.len()
                    ),
                ));
            }
        }
        self.expiries.borrow_mut().remove(key);
        self.raw_put(key, value);
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.raw_delete(key);
        Ok(())
    }

    fn has_put_if(&self) -> bool {
        true
    }

    fn has_expiry(&self) -> bool {
        self.clock.is_some()
    }

    async fn put_expiring(&self, key: &str, value: Vec<u8>, ttl_ms: u64) -> Result<()> {
        let Some(clock) = &self.clock else {
            return Err(Error::new(
                ErrorCode::StoreUnsupported,
                "a MemoryKv without a clock keeps no expiring keys",
            ));
        };
        self.put(key, value).await?;
        self.expiries
            .borrow_mut()
            .insert(key.to_string(), clock.now_ms() + ttl_ms as f64);
        Ok(())
    }

    async fn put_if(&self, key: &str, value: Vec<u8>, expected: Option<&Vec<u8>>) -> Result<bool> {
        if self.raw_get(key).as_ref() != expected {
            return Ok(false);
        }
        self.put(key, value).await.map(|()| true)
    }

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        Ok(Some(
            self.values
                .borrow()
                .range(prefix.to_string()..)
                .take_while(|(k, _)| k.starts_with(prefix))
                .map(|(k, _)| k.clone())
                .collect(),
        ))
    }
}
