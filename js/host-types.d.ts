// Types of what the host hands the loaders, written so that they need neither
// the DOM lib nor @types/node: each host type is looked up on `globalThis`
// (the way @types/node declares URL) and drops out of the unions where the
// project's libs do not declare it.

declare global {
  interface SymbolConstructor {
    /**
     * `Symbol.dispose` (TC39 explicit resource management), which every
     * class's `[Symbol.dispose]()` is keyed by. Declared as @types/node and
     * TypeScript's `esnext.disposable` lib declare it, for projects on
     * neither (e.g. `lib: ["es2022", "dom"]`).
     */
    readonly dispose: unique symbol;
  }
}

/** A compiled `WebAssembly.Module`, where the project's libs declare `WebAssembly`. */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: abstract new (...args: never[]) => infer M } } ? M : never;
/** A fetch `Response`, where the project's libs declare one (DOM, @types/node, workers). */
export type FetchResponse = typeof globalThis extends { Response: abstract new (...args: never[]) => infer R } ? R : never;
/** A `URL`, where the project's libs declare one. */
export type HostUrl = typeof globalThis extends { URL: abstract new (...args: never[]) => infer U } ? U : never;
/** Bytes: an `ArrayBuffer` or a view of one (a `Uint8Array`, a Node `Buffer`). */
export type Bytes = ArrayBuffer | ArrayBufferView;
/**
 * What a module can be loaded from: its URL (a `URL` or a string, as a
 * bundler's URL import gives), a fetch `Response` (or a promise of one), its
 * bytes, or a compiled `WebAssembly.Module`.
 */
export type ModuleInput = string | HostUrl | FetchResponse | Promise<FetchResponse> | Bytes | WasmModule;
/** What a module can be loaded from synchronously: its bytes or a compiled module. */
export type SyncModuleInput = Bytes | WasmModule;
