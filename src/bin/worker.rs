//! The import worker: runs the core's importer off the page's thread.

#[cfg(target_arch = "wasm32")]
fn main() {
    tracelane_app::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
