//! The look-back tools' names, apart from the tools themselves: recall,
//! the attacher and the handler only need to tell their calls from others.

/// The name of the tool that searches the session.
pub const SEARCH_HISTORY: &str = "search_history";
/// The name of the tool that reads an externalised output.
pub const READ_ARTIFACT: &str = "read_artifact";

/// Whether `name` is one of the look-back tools (their outputs are never
/// externalised, nor indexed for recall: they are copies of what is).
pub fn is_look_back(name: &str) -> bool {
    name == SEARCH_HISTORY || name == READ_ARTIFACT
}
