//! The CLI's heap: the system allocator, asking the kernel to back its large
//! blocks with transparent huge pages.
//!
//! Why: a big trace's model is columns of hundreds of MB (a 300 MB XPlane
//! becomes a 1.2 GB model), and faulting those in one 4 KiB page at a time
//! was over a third of the import's time (`perf record` on `tracelane ops`:
//! `exc_page_fault` 35 %). One `madvise(MADV_HUGEPAGE)` per large block lets
//! the kernel fault 2 MiB at a time where it offers huge pages on request
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise` or `always`,
//! most distributions' default); where it does not, the advice is ignored.
//! The allocator itself stays the system's: glibc's own switch for this
//! (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`) must be set before the process
//! starts, so a user would never get it.

use std::alloc::{GlobalAlloc, Layout, System};

/// Huge page size on x86-64 and (by default) aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

pub(crate) struct HugePageHeap;

// SAFETY: every call is the system allocator's with the same arguments; the
// advice only changes how the kernel backs pages of a block just returned.
unsafe impl GlobalAlloc for HugePageHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        advise(q, new_size);
        q
    }
}

/// Advises the whole huge pages inside `[p, p + size)`; blocks under two
/// huge pages are left alone (small blocks gain nothing, and the advice is a
/// system call).
fn advise(p: *mut u8, size: usize) {
    if p.is_null() || size < 2 * HUGE_PAGE {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        huge_pages(start, end - start);
    }
}

#[cfg(target_os = "linux")]
fn huge_pages(start: usize, len: usize) {
    // SAFETY: the range lies inside a block this allocator just returned;
    // MADV_HUGEPAGE changes no contents. Its result is advice, so an error
    // (an old kernel, THP compiled out) changes nothing either.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn huge_pages(_start: usize, _len: usize) {}
