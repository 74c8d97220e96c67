//! What a session id may be, on every store.

use crate::error::{Error, ErrorCode, Result};

/// The longest session id, in UTF-8 bytes.
pub const MAX_SESSION_ID_BYTES: usize = 1024;

/// Checks a session id before anything is written or read under it: not
/// empty, at most [`MAX_SESSION_ID_BYTES`] bytes of UTF-8, no NUL character
/// (some stores cannot hold one). Well-formed Unicode is what a Rust string
/// is; the bindings refuse JavaScript strings with lone surrogates, which
/// would otherwise become U+FFFD and two ids one. `INVALID_ARGUMENT`
/// otherwise.
pub fn check_session_id(id: &str) -> Result<()> {
    let problem = if id.is_empty() {
        "must not be empty".to_string()
    } else if id.len() > MAX_SESSION_ID_BYTES {
        format!(
            "is {} bytes of UTF-8, over the {MAX_SESSION_ID_BYTES} a session id may have",
            id.len()
        )
    } else if id.contains('\0') {
        "holds a NUL character".to_string()
    } else {
        return Ok(());
    };
    let shown: String = id.chars().take(40).collect();
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!("session id {shown:?} {problem}"),
    ))
}

/// [`check_session_id`] of an optional id (none is fine).
pub fn check_optional_session_id(id: Option<&str>) -> Result<()> {
    id.map_or(Ok(()), check_session_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_bounded_and_hold_no_nul() {
        assert!(check_session_id("a").is_ok());
        assert!(check_session_id(&"東".repeat(341)).is_ok(), "1,023 bytes");
        for bad in ["", "a\0b", &"x".repeat(1025), &"東".repeat(342)] {
            let e = check_session_id(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad:?}");
        }
        assert!(check_optional_session_id(None).is_ok());
    }
}
