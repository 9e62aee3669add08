//! The page's side of the channel to the primary worker: commands are
//! posted, questions ([`Ask`]) are numbered and awaited.
//!
//! ```ignore
//! let answer = client::ask(Ask::ShapeRows { id }).await;
//! ```
//!
//! A component that asks again before an answer arrives (a new search, a
//! new range) uses a [`Latest`]: only the answer to its last question is
//! delivered.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use leptos::prelude::*;
use wasm_bindgen::JsValue;
use web_sys::Worker;

use crate::shared::protocol::{Answer, Ask, ToWorker};
use crate::transfer::Transfer;

#[derive(Default)]
struct Slot {
    answer: Option<Result<Answer, String>>,
    waker: Option<Waker>,
}

/// Hears `(stage, done)`: how far a question has come.
pub type OnProgress = Rc<dyn Fn(String, f64)>;

thread_local! {
    static PRIMARY: RefCell<Option<Worker>> = const { RefCell::new(None) };
    static NEXT_REQUEST: Cell<u32> = const { Cell::new(0) };
    static PENDING: RefCell<HashMap<u32, Rc<RefCell<Slot>>>> = RefCell::new(HashMap::new());
    /// Who hears how far a pending question has come.
    static PROGRESS: RefCell<HashMap<u32, OnProgress>> = RefCell::new(HashMap::new());
}

/// The worker that imports and keeps the models (replaced when it dies:
/// questions still pending then are answered with an error).
pub fn set_primary(worker: Option<Worker>) {
    PRIMARY.with(|p| *p.borrow_mut() = worker);
    let orphans: Vec<u32> = PENDING.with(|p| p.borrow().keys().copied().collect());
    for request in orphans {
        answered(request, Err("the worker restarted".into()));
    }
}

pub fn primary() -> Option<Worker> {
    PRIMARY.with(|p| p.borrow().clone())
}

/// Posts a command to `worker` as JSON text.
pub fn post_to(worker: &Worker, msg: &ToWorker) -> Result<(), String> {
    let text = serde_json::to_string(msg).map_err(|e| e.to_string())?;
    worker
        .post_message(&JsValue::from_str(&text))
        .map_err(|_| "the import worker is gone".to_string())
}

/// Posts a command to the primary worker.
pub fn post(msg: &ToWorker) -> Result<(), String> {
    let worker = primary().ok_or_else(|| "the import worker is gone".to_string())?;
    post_to(&worker, msg)
}

/// Posts a message with JavaScript objects in it to the primary worker.
pub fn post_transfer(msg: &Transfer) -> Result<(), String> {
    let worker = primary().ok_or_else(|| "the import worker is gone".to_string())?;
    msg.post(&worker)
}

/// An answer on its way.
pub struct Answered(Rc<RefCell<Slot>>);

impl Future for Answered {
    type Output = Result<Answer, String>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.0.borrow_mut();
        match slot.answer.take() {
            Some(a) => Poll::Ready(a),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Asks the primary worker a question; the future resolves with its answer.
pub fn ask(ask: Ask) -> Answered {
    ask_with_progress(ask, None)
}

/// [`ask`], with `on_progress(stage, done)` called as the worker says how
/// far it has come (a long question: an alignment).
pub fn ask_with_progress(ask: Ask, on_progress: Option<OnProgress>) -> Answered {
    let request = NEXT_REQUEST.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    if let Some(f) = on_progress {
        PROGRESS.with(|p| p.borrow_mut().insert(request, f));
    }
    let slot = Rc::new(RefCell::new(Slot::default()));
    PENDING.with(|p| p.borrow_mut().insert(request, slot.clone()));
    if let Err(e) = post(&ToWorker::Ask { request, ask }) {
        answered(request, Err(e));
    }
    Answered(slot)
}

/// Delivers the worker's answer to question `request` (from the page's
/// message handler).
pub fn answered(request: u32, answer: Result<Answer, String>) {
    PROGRESS.with(|p| p.borrow_mut().remove(&request));
    let Some(slot) = PENDING.with(|p| p.borrow_mut().remove(&request)) else {
        return;
    };
    let mut slot = slot.borrow_mut();
    slot.answer = Some(answer);
    if let Some(w) = slot.waker.take() {
        w.wake();
    }
}

/// Tells whoever waits on question `request` how far it has come (from
/// the page's message handler).
pub fn progressed(request: u32, stage: String, done: f64) {
    if let Some(f) = PROGRESS.with(|p| p.borrow().get(&request).cloned()) {
        f(stage, done);
    }
}

/// Delivers only the answer to the last question asked through it. A
/// `Copy` handle owned by the component that makes it.
#[derive(Clone, Copy)]
pub struct Latest(StoredValue<u64>);

impl Latest {
    pub fn new() -> Latest {
        Latest(StoredValue::new(0))
    }

    /// Asks, and calls `then` with the answer unless another question was
    /// asked through this `Latest` meanwhile.
    pub fn ask(self, question: Ask, then: impl FnOnce(Result<Answer, String>) + 'static) {
        self.ask_with_progress(question, |_, _| {}, then)
    }

    /// [`Latest::ask`], with `progress(stage, done)` called as the worker
    /// says how far it has come (unless another question was asked since).
    pub fn ask_with_progress(
        self,
        question: Ask,
        progress: impl Fn(String, f64) + 'static,
        then: impl FnOnce(Result<Answer, String>) + 'static,
    ) {
        let generation = self.0.get_value() + 1;
        self.0.set_value(generation);
        let on_progress: OnProgress = Rc::new(move |stage, done| {
            if self.0.try_get_value() == Some(generation) {
                progress(stage, done)
            }
        });
        let pending = ask_with_progress(question, Some(on_progress));
        leptos::task::spawn_local(async move {
            let answer = pending.await;
            if self.0.try_get_value() == Some(generation) {
                then(answer);
            }
        });
    }

    /// Forgets the question in flight: its answer will not be delivered.
    pub fn forget(self) {
        self.0.update_value(|g| *g += 1);
    }
}

impl Default for Latest {
    fn default() -> Latest {
        Latest::new()
    }
}

/// Adds the analyses' counters (queue length, copy bandwidth, memory) to
/// trace `id`'s timeline lanes, unless it has them.
pub fn ask_counter_lanes(ui: crate::page::state::Ui, id: u32) {
    if ui.lanes.with_untracked(|l| l.iter().any(|(t, _)| *t == id)) {
        return;
    }
    let pending = ask(Ask::CounterLanes { id });
    leptos::task::spawn_local(async move {
        if let Ok(Answer::Lanes { lanes: Some(lanes) }) = pending.await {
            ui.lanes.update(|l| {
                l.retain(|(t, _)| *t != id);
                l.push((id, lanes));
            });
        }
    });
}
