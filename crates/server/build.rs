//! Release builds carry the built app (trunk's `dist/`, made by
//! `scripts/build-app.sh`), so one binary is the whole product;
//! `COUNTERSIGN_APP_DIR` names another folder. Debug builds carry none, and
//! do not watch it, so building the server for its tests never waits on the
//! app: they serve it with `--app-dir`. Every build watches the migrations.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // sqlx's `migrate!` embeds the migrations as they are when it compiles: a
    // migration added later must build the server again.
    println!("cargo::rerun-if-changed=migrations");
    println!("cargo::rerun-if-env-changed=COUNTERSIGN_APP_DIR");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let dir = match std::env::var_os("COUNTERSIGN_APP_DIR") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if release => Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist")),
        None => None,
    };
    let mut files = Vec::new();
    if let Some(dir) = &dir {
        // Watched whether or not it exists: the app built later is picked up.
        println!("cargo::rerun-if-changed={}", dir.display());
        if dir.join("index.html").is_file() {
            collect(dir, dir, &mut files);
        } else {
            println!(
                "cargo::warning=no built app in {}: this countersign serves the API only (run scripts/build-app.sh, then build again)",
                dir.display()
            );
        }
    }
    files.sort();
    let mut code = String::from(
        "/// The built app's files, by path, sorted.\npub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (path, file) in &files {
        code.push_str(&format!(
            "    ({path:?}, include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    code.push_str("];\n");
    std::fs::write(out.join("app_files.rs"), code).expect("write app_files.rs");
}

/// Every file under `dir`, as (`/path/in/the/app`, absolute file).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(relative) = path.strip_prefix(root) {
            let absolute = path.canonicalize().unwrap_or(path.clone());
            files.push((format!("/{}", relative.display()), absolute));
        }
    }
}
