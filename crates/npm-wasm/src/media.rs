//! `attachMedia`: an image or a PDF into an artifact store, and the part
//! that names it in an event.

use wasm_bindgen::prelude::*;

use crate::artifact_store_arg::artifact_store_arg;
use crate::types::AttachMediaOptionsArg;
use context_compiler::error::Result;
use context_compiler::media::{attach, AttachOptions};
use context_compiler_js::convert::{bytes, to_js};
use context_compiler_js::options::optional_string;
use context_compiler_js::promise::spawn;

/// Stores `bytes` (a PNG, JPEG, GIF or WebP image, or a PDF; a
/// `Uint8Array` or `ArrayBuffer`) in `store` and resolves to the
/// `MediaPart` to record beside a turn's text:
/// `session.record("user_input", { text, media: [part] })`. The part names
/// the artifact and what its cost depends on (dimensions, pages), never the
/// bytes. Options: `mediaType` (sniffed when absent), `filename`, `detail`
/// (OpenAI's `low`, `high`, `auto`), `source` (default `"user"`),
/// `sessionId`. Bytes of another type are `INVALID_ARGUMENT`.
#[wasm_bindgen(js_name = attachMedia, unchecked_return_type = "Promise<MediaPart>")]
pub fn attach_media(
    #[wasm_bindgen(unchecked_param_type = "ArtifactStoreLike")] store: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] data: JsValue,
    options: Option<AttachMediaOptionsArg>,
) -> js_sys::Promise {
    let prepared = (|| -> Result<_> {
        let store = artifact_store_arg(&store, "store")?;
        let data = bytes(&data, "bytes")?;
        let options = AttachOptions {
            media_type: optional_string(&options, "mediaType")?,
            filename: optional_string(&options, "filename")?,
            detail: optional_string(&options, "detail")?,
            source: optional_string(&options, "source")?.unwrap_or_else(|| "user".into()),
            session_id: optional_string(&options, "sessionId")?,
        };
        Ok((store, data, options))
    })();
    spawn(async move {
        let (store, data, options) = prepared?;
        let part = attach(store.as_ref(), &data, options).await?;
        to_js(&part)
    })
}
