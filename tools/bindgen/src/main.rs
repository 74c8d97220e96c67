//! `acc-bindgen`: wasm-bindgen's JS glue generator for `scripts/build.sh`.
//!
//! The `wasm-bindgen` command line (crate `wasm-bindgen-cli`) is a thin layer
//! over `wasm-bindgen-cli-support`; installing it compiles a web server, an
//! HTTP client with TLS and a test runner that the build never uses, about
//! two minutes on two cores. This tool is the same library, at the version
//! the modules link, built with the workspace in seconds, behind the
//! options the build uses, with the command line's defaults for the rest,
//! so its output is the command line's byte for byte:
//!
//! ```text
//! acc-bindgen --target web|bundler --out-dir DIR --out-name NAME INPUT.wasm
//! ```

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use wasm_bindgen_cli_support::Bindgen;

/// The glue's flavour (`--target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// An ES module with an async `init` and `initSync` (`--target web`).
    Web,
    /// An ES module importing the `.wasm` for a bundler; the build keeps
    /// only its `.d.ts` (`--target bundler`).
    Bundler,
}

/// What one run generates.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    target: Target,
    out_dir: PathBuf,
    out_name: String,
    input: PathBuf,
}

const USAGE: &str =
    "usage: acc-bindgen --target web|bundler --out-dir DIR --out-name NAME INPUT.wasm";

/// Reads the command line (without the program name).
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, String> {
    let mut target = None;
    let mut out_dir = None;
    let mut out_name = None;
    let mut input = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.into_string().map_err(|a| format!("not UTF-8: {a:?}"))?;
        let mut value = |flag: &str| {
            args.next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--target" => {
                target = Some(match value("--target")?.as_str() {
                    "web" => Target::Web,
                    "bundler" => Target::Bundler,
                    other => return Err(format!("unknown --target {other} (web or bundler)")),
                })
            }
            "--out-dir" => out_dir = Some(PathBuf::from(value("--out-dir")?)),
            "--out-name" => out_name = Some(value("--out-name")?),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            path if input.is_none() => input = Some(PathBuf::from(path)),
            extra => return Err(format!("one input only, also given {extra}")),
        }
    }
    Ok(Args {
        target: target.ok_or("--target is required")?,
        out_dir: out_dir.ok_or("--out-dir is required")?,
        out_name: out_name.ok_or("--out-name is required")?,
        input: input.ok_or("the input .wasm is required")?,
    })
}

/// Generates the glue, set up as `wasm-bindgen` 0.2.130's command line sets
/// up the library for these options: TypeScript declarations on, the
/// default module path kept, externref off whatever the environment says
/// (the command line sets it from its own, deprecated, flag); everything
/// else is the library's default, which is the command line's.
#[allow(deprecated)] // `reference_types`, called as the command line does.
fn run(args: &Args) -> Result<(), String> {
    let mut bindgen = Bindgen::new();
    match args.target {
        Target::Web => bindgen.web(true),
        Target::Bundler => bindgen.bundler(true),
    }
    .map_err(|e| format!("{e:#}"))?;
    bindgen
        .input_path(&args.input)
        .out_name(&args.out_name)
        .typescript(true)
        .omit_default_module_path(false)
        .reference_types(false)
        .generate(&args.out_dir)
        .map_err(|e| format!("{}: {e:#}", args.input.display()))
}

fn main() -> ExitCode {
    match parse(std::env::args_os().skip(1)).and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("acc-bindgen: {message}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Args, String> {
        parse(line.split_whitespace().map(OsString::from))
    }

    #[test]
    fn reads_the_options_the_build_uses() {
        assert_eq!(
            args("--target web --out-dir pkg --out-name context_compiler m.wasm"),
            Ok(Args {
                target: Target::Web,
                out_dir: "pkg".into(),
                out_name: "context_compiler".into(),
                input: "m.wasm".into(),
            })
        );
        assert_eq!(
            args("m.wasm --out-name n --target bundler --out-dir t").map(|a| a.target),
            Ok(Target::Bundler)
        );
    }

    #[test]
    fn refuses_what_it_does_not_do() {
        for (line, message) in [
            (
                "--target nodejs --out-dir p --out-name n m.wasm",
                "unknown --target nodejs",
            ),
            (
                "--target web --out-dir p --out-name n --debug m.wasm",
                "unknown option --debug",
            ),
            (
                "--target web --out-dir p --out-name n a.wasm b.wasm",
                "one input only",
            ),
            ("--target web --out-dir p m.wasm", "--out-name is required"),
            ("--target web --out-name n m.wasm", "--out-dir is required"),
            ("--out-dir p --out-name n m.wasm", "--target is required"),
            (
                "--target web --out-dir p --out-name n",
                "the input .wasm is required",
            ),
            ("--target", "--target needs a value"),
        ] {
            let error = args(line).expect_err(line);
            assert!(error.contains(message), "{line}: {error}");
        }
    }

    /// The versions of package `name` in the workspace's Cargo.lock.
    fn locked_versions(lock: &str, name: &str) -> Vec<String> {
        let mut versions = Vec::new();
        let mut lines = lock.lines();
        while let Some(line) = lines.next() {
            if line == format!("name = \"{name}\"") {
                if let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = ")) {
                    versions.push(version.trim_matches('"').to_string());
                }
            }
        }
        versions
    }

    #[test]
    fn the_generator_is_the_version_the_modules_link() {
        // A module linked against another wasm-bindgen than the generator's
        // fails to bind ("a different bindgen format"): bump them together.
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("the workspace's Cargo.lock");
        let linked = locked_versions(&lock, "wasm-bindgen");
        assert_eq!(
            linked.len(),
            1,
            "one wasm-bindgen in the workspace: {linked:?}"
        );
        assert_eq!(locked_versions(&lock, "wasm-bindgen-cli-support"), linked);
    }

    #[test]
    fn a_missing_input_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("acc-bindgen-test-{}", std::process::id()));
        let error = run(&Args {
            target: Target::Web,
            out_dir: dir.clone(),
            out_name: "n".into(),
            input: dir.join("missing.wasm"),
        })
        .expect_err("no such input");
        assert!(error.contains("missing.wasm"), "{error}");
        assert!(!dir.exists(), "nothing is written for a failed run");
    }
}
