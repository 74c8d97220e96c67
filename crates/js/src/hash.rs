//! SHA-256 through the host's crypto: `node:crypto` in Node, `crypto.subtle`
//! in browsers, Deno and workerd (the entries install them, js/node.js and
//! js/web.js), `sha2` in Rust where the host has neither (a page served
//! over plain HTTP has no `crypto.subtle`) or its answer is not a digest.
//! Every path gives the same digest, so artifact ids never depend on it.
//!
//! One of the crate's modules allowed `unsafe` (with `alloc.rs` and
//! `text.rs`): a view of wasm memory that the synchronous host hash reads.
#![allow(unsafe_code)]

use async_trait::async_trait;
use js_sys::{ArrayBuffer, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::fatal::{with_host, Host};
use context_compiler::artifacts::{sha256, Hasher};
use context_compiler::error::Result;

#[wasm_bindgen]
extern "C" {
    /// The host's SHA-256 of `data`: its digest, a promise of it, or
    /// `undefined` when the host has no crypto.
    #[wasm_bindgen(method, catch)]
    fn sha256(this: &Host, data: &Uint8Array) -> std::result::Result<JsValue, JsValue>;

    /// The host's synchronous SHA-256 of `data`, or `undefined`.
    #[wasm_bindgen(method, catch, js_name = sha256Sync)]
    fn sha256_sync(this: &Host, data: &Uint8Array) -> std::result::Result<JsValue, JsValue>;
}

/// Hashes with the host's crypto, or in Rust without it.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsHasher;

#[async_trait(?Send)]
impl Hasher for JsHasher {
    async fn sha256(&self, data: &[u8]) -> Result<[u8; 32]> {
        if let Some(digest) = synchronous(data) {
            return Ok(digest);
        }
        // An asynchronous digest gets its own copy of the bytes: wasm memory
        // may move before the host reads them.
        let digest = asynchronous(&Uint8Array::from(data)).await;
        Ok(digest.unwrap_or_else(|| sha256(data)))
    }
}

/// The SHA-256 of bytes in JS memory, by the host's crypto, or in Rust (on
/// a copy) where the host has none.
pub async fn sha256_js(data: &Uint8Array) -> [u8; 32] {
    if let Some(digest) = host_sync(data) {
        return digest;
    }
    match asynchronous(data).await {
        Some(digest) => digest,
        None => sha256(&data.to_vec()),
    }
}

/// The host's synchronous digest of `data`, if it has one.
fn synchronous(data: &[u8]) -> Option<[u8; 32]> {
    // SAFETY: the view lives only during the host call, which runs no wasm
    // code and so cannot grow (and detach) the memory it views.
    let view = unsafe { Uint8Array::view(data) };
    let digest = host_sync(&view);
    drop(view);
    digest
}

/// The host's synchronous digest of the bytes `data` views, if it has one.
pub fn host_sync(data: &Uint8Array) -> Option<[u8; 32]> {
    let answer = with_host(|host| host.sha256_sync(data)).and_then(|r| r.ok());
    answer.as_ref().and_then(digest_of)
}

/// The host's asynchronous digest of `data` (which must not be a view of
/// wasm memory), if it has one.
async fn asynchronous(data: &Uint8Array) -> Option<[u8; 32]> {
    let answer = with_host(|host| host.sha256(data)).and_then(|r| r.ok());
    let promise = answer.and_then(|a| a.dyn_into::<Promise>().ok())?;
    let digest = JsFuture::from(promise).await.ok()?;
    digest_of(&digest)
}

/// The 32 bytes of a digest the host returned (a `Uint8Array`, e.g. a Node
/// `Buffer`, or an `ArrayBuffer`), if it is one.
fn digest_of(value: &JsValue) -> Option<[u8; 32]> {
    let bytes = match value.dyn_ref::<ArrayBuffer>() {
        Some(buffer) => Uint8Array::new(buffer),
        None => value.dyn_ref::<Uint8Array>()?.clone(),
    };
    (bytes.length() == 32).then(|| {
        let mut digest = [0u8; 32];
        bytes.copy_to(&mut digest);
        digest
    })
}

/// The artifact id of `data`, by the host's synchronous hash or in Rust.
pub fn content_id_now(data: &[u8]) -> String {
    context_compiler::artifacts::hex(&synchronous(data).unwrap_or_else(|| sha256(data)))
}
