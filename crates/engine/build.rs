//! The build's identity: a hash of the source that decides a run's numbers (the track, core
//! and engine crates: their `src/` and manifests), fixed at build time as
//! `RDBENCH_SOURCE_HASH`. Records and reports carry it, so that a resume or a merge never
//! takes a run that another build computed. Deterministic: files in path order, CRLF read
//! as LF, FNV-1a 64 (the run hash's function), nothing of the machine or the time.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    // Read when the script runs, not baked in when it is compiled: checkouts at other paths
    // share one compiled script through a shared target directory.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let crates = Path::new(&manifest).join("..");
    let mut all = Vec::new();
    for krate in ["track", "core", "engine"] {
        let root = crates.join(krate);
        println!("cargo:rerun-if-changed={}", root.join("src").display());
        println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
        files(&root.join("src"), &mut all);
        all.push(root.join("Cargo.toml"));
    }
    // Paths relative to crates/, with '/', so the hash does not depend on where the tree is.
    let mut named: Vec<(String, PathBuf)> = all
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&crates).expect("under crates/");
            (rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"), p)
        })
        .collect();
    named.sort();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash = (hash ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (rel, path) in &named {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
        eat(rel.as_bytes());
        eat(&[0]);
        eat(text.as_bytes());
        eat(&[0]);
    }
    println!("cargo:rustc-env=RDBENCH_SOURCE_HASH={hash:016x}");
}
