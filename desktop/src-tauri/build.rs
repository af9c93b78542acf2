//! Tauri's build step: the app's configuration, context and ACL. The two
//! commands the web UI calls are declared in an app manifest, so the
//! capability in `capabilities/` can grant them to the served page.

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&["pick_folder", "notify"]);
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest)) {
        // A build script reports failure by panicking.
        #[allow(clippy::panic)]
        {
            panic!("tauri-build: {e:#}");
        }
    }
}
