//! SHA-256 for artifact ids and verified reads, from whoever computes it
//! fastest: the host's crypto where the binding has one (`node:crypto`,
//! `crypto.subtle`), `sha2` in Rust otherwise. Every hasher gives the same
//! digest, so ids do not depend on where content was stored.

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorCode, Result};

/// Computes SHA-256 digests (single-threaded, as the stores are).
#[async_trait(?Send)]
pub trait Hasher {
    /// The SHA-256 of `data`.
    async fn sha256(&self, data: &[u8]) -> Result<[u8; 32]>;
}

/// SHA-256 in Rust (the `sha2` crate): the default, and the component's.
#[derive(Debug, Default, Clone, Copy)]
pub struct Sha2Hasher;

#[async_trait(?Send)]
impl Hasher for Sha2Hasher {
    async fn sha256(&self, data: &[u8]) -> Result<[u8; 32]> {
        Ok(sha256(data))
    }
}

/// The SHA-256 of `data`, in Rust.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// A digest as lower-case hex.
pub fn hex(digest: &[u8; 32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[(byte >> 4) as usize]));
        out.push(char::from(HEX[(byte & 0xF) as usize]));
    }
    out
}

/// The artifact id of `content` by `hasher`: its SHA-256, lower-case hex.
pub async fn content_id_by(hasher: &dyn Hasher, content: &[u8]) -> Result<String> {
    Ok(hex(&hasher.sha256(content).await?))
}

/// Fails with [`ErrorCode::ArtifactIntegrity`] unless `content` hashes to
/// `artifact_id` by `hasher`.
pub async fn verify_by(hasher: &dyn Hasher, artifact_id: &str, content: &[u8]) -> Result<()> {
    verify_digest(artifact_id, &hasher.sha256(content).await?)
}

/// Fails with [`ErrorCode::ArtifactIntegrity`] unless `digest`, the SHA-256
/// of some content, is `artifact_id`.
pub(crate) fn verify_digest(artifact_id: &str, digest: &[u8; 32]) -> Result<()> {
    let actual = hex(digest);
    if actual == artifact_id {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::ArtifactIntegrity,
            format!("artifact {artifact_id} is corrupted: its content hashes to {actual}"),
        ))
    }
}
