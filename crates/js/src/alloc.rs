//! The global allocator of the JS build: the system allocator, plus a note
//! to the JS host when an allocation fails, made before Rust aborts, so the
//! trap that follows is reported as `OUT_OF_MEMORY` with the size asked for
//! instead of a bare "unreachable" (see [`crate::fatal`]).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};

use crate::fatal::report_out_of_memory;

/// [`System`], reporting failed allocations.
struct ReportingAllocator;

// SAFETY: every method forwards its arguments to `System` unchanged and
// returns what it returned; the report on failure reads a thread-local and
// calls a JS import with a number, and allocates nothing.
unsafe impl GlobalAlloc for ReportingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            report_out_of_memory(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            report_out_of_memory(layout.size());
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
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: ReportingAllocator = ReportingAllocator;
