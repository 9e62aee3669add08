//! The tracelane page: mounts the leptos app (see `tracelane_app::web`).

#[cfg(target_arch = "wasm32")]
fn main() {
    tracelane_app::page::app::start();
}

/// The page only runs in a browser; natively this binary just says so.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("tracelane-app is the browser app: build it with `trunk build` (see README)");
}
