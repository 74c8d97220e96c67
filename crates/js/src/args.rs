//! Argument types shared by the main module and the stores module: JS values
//! checked at run time and typed in TypeScript (the stores' methods take them
//! in both modules).

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A string argument (checked at run time).
    #[wasm_bindgen(typescript_type = "string")]
    pub type StringArg;
    /// The `ImportOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "ImportOptions")]
    pub type ImportOptionsArg;
    /// The `StoreOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "StoreOptions")]
    pub type StoreOptionsArg;
}
