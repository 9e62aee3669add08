//! The ranks worker, started by the page when a distributed run is opened
//! (see `tracelane_app::ranks_worker`).

#[cfg(target_arch = "wasm32")]
fn main() {
    tracelane_app::ranks_worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
