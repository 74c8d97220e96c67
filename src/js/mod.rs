//! JavaScript bindings.
