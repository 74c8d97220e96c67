//! The global allocator of the JS build: the system allocator, plus a note
//! to the JS host when an allocation fails, made before Rust aborts, so the
//! trap that follows is reported as `OUT_OF_MEMORY` with the size asked for
//! instead of a bare "unreachable" (see [`crate::fatal`]).
//!
//! It also grows the wasm memory ahead, by an eighth of its size at a time:
//! the system allocator grows it by what each allocation needs, and V8
//! collects garbage at each growth of a large memory, so a session of 10^5
//! events recorded ten times slower in its last tenth than in its first.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
#[cfg(target_arch = "wasm32")]
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::fatal::report_out_of_memory;

/// [`System`], reporting failed allocations.
struct ReportingAllocator;

/// The memory's size in pages when last seen grown.
#[cfg(target_arch = "wasm32")]
static SEEN_PAGES: AtomicUsize = AtomicUsize::new(0);

/// Grows no less than this many bytes ahead.
#[cfg(target_arch = "wasm32")]
const MIN_AHEAD_BYTES: usize = 1 << 20;

/// After an allocation: when the memory has grown since last seen, makes
/// the system allocator grow it by an eighth more (a block allocated and
/// freed at once, which it keeps for later allocations; wasm memory never
/// shrinks), so the memory grows geometrically and V8 collects at few
/// growths.
#[cfg(target_arch = "wasm32")]
fn grow_ahead() {
    let pages = core::arch::wasm32::memory_size::<0>();
    if pages <= SEEN_PAGES.load(Ordering::Relaxed) {
        return;
    }
    let ahead = (pages.saturating_mul(65_536) / 8).max(MIN_AHEAD_BYTES);
    if let Ok(layout) = Layout::from_size_align(ahead, 16) {
        // SAFETY: `layout` has a non-zero size; the block is freed with the
        // same layout, and only if it was allocated.
        unsafe {
            let block = System.alloc(layout);
            if !block.is_null() {
                System.dealloc(block, layout);
            }
        }
    }
    SEEN_PAGES.store(core::arch::wasm32::memory_size::<0>(), Ordering::Relaxed);
}

#[cfg(not(target_arch = "wasm32"))]
fn grow_ahead() {}

// SAFETY: every method forwards its arguments to `System` unchanged and
// returns what it returned; the report on failure reads a thread-local and
// calls a JS import with a number, and allocates nothing. After a success,
// `grow_ahead` allocates and frees one block of `System` once the call to
// `System` has returned (no call is nested in another).
unsafe impl GlobalAlloc for ReportingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            report_out_of_memory(layout.size());
        } else {
            grow_ahead();
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            report_out_of_memory(layout.size());
        } else {
            grow_ahead();
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract, and
        // `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, and
        // `ptr` came from `System` through this allocator.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if new.is_null() {
            report_out_of_memory(new_size);
        } else {
            grow_ahead();
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: ReportingAllocator = ReportingAllocator;
