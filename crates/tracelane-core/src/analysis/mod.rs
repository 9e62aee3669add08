//! Analyses: each a function of a [`Trace`](crate::Trace) (and, where it
//! has one, a [`Scope`]) that returns a report — plain data, serialisable,
//! which the CLI prints and the page renders as it is.
//!
//! | module | what it answers |
//! |---|---|
//! | [`ops`] | PyTorch's `key_averages()` table: CPU and device time per op |
//! | [`chain`] | what a slice launched or was launched by, with launch delays |
//! | [`compare`] | variants (traces × scopes) side by side against a baseline |
//! | [`critical_path`] | the longest chain of dependent work, each edge labelled by what bounds it (HTA's model) |
//! | [`device_time`] | where device time goes: idle, kernel types, launch delays, queues (HTA's numbers under `Mode::Hta`) |
//! | [`frame`] | the event table the time analyses read, under tracelane's or HTA's rules |
//! | [`info`] | what was imported: counts, lanes, links, warnings |
//! | [`scope`] | which part of a trace an analysis looks at |
//! | [`intervals`] | union, gaps, intersection and overlap of time intervals |
//!
//! A new analysis is a module here with one public function
//! `fn name(t: &Trace, scope: &Scope, …) -> Result<Report, ScopeError>`
//! (or without the scope when it always looks at the whole trace), its
//! rules documented at the top of the module and where a reference tool
//! defines a number, which one.

pub mod chain;
pub mod compare;
pub mod critical_path;
pub mod device_time;
pub mod frame;
pub mod info;
pub mod intervals;
pub mod ops;
pub mod scope;

pub use scope::{Occurrence, Scope, ScopeError};

/// Why is it slow: the device-time report and the critical path of one
/// scope under one set of rules, from one frame (built once for both).
pub fn why_slow(
    t: &crate::Trace,
    scope: &Scope,
    mode: frame::Mode,
    args: &dyn Fn(usize) -> String,
) -> Result<
    (
        device_time::DeviceTimeReport,
        Result<critical_path::CriticalPathReport, String>,
    ),
    ScopeError,
> {
    let whole = frame::Frame::build(t, &Scope::Whole, mode)?;
    let cp = critical_path::critical_path_of(t, &whole, scope, args);
    let scoped = whole.scoped(t, scope)?;
    Ok((device_time::device_time_of(t, &scoped, scope), cp))
}
