//! The Parquet decoder worker, started by the import worker the first time
//! a device profile is opened (see `tracelane_app::decoder`).

#[cfg(target_arch = "wasm32")]
fn main() {
    tracelane_app::decoder::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {}
