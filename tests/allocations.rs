//! The sysbench workloads' hot path allocates nothing per statement: every worker reuses
//! its parameter buffers, texts and SQL, as sysbench does. Counted with a global allocator
//! around two runs of different lengths, so that what every run allocates once (connections,
//! prepared statements, the record) cancels out and only the per-event cost is left.
//!
//! One test in this binary on purpose: the allocator counts every thread of the process.

// The shared helpers of the main test binary (tests/it): this file is a binary of its own,
// because its global allocator counts every allocation of the process.
#[path = "it/common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::run_oltp;
use enginebench::results::OutcomeRecord;
use enginebench::runner::RunOutput;
use enginebench::server::{ServerArgsResolved, ServerOptions, ThrowawayServer};
use enginebench::studies::sysbench::oltp::OltpKind;

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counted.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Allocations and statements of one run of `events` events on one thread.
fn allocations_and_statements(
    workload: OltpKind,
    events: u64,
    target: &ServerArgsResolved,
) -> (u64, u64) {
    let params = common::oltp_params(workload, events, 1);
    // One interval per run, whatever its length: intervals allocate by design.
    let output = RunOutput::quiet(Duration::from_secs(3600));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let record = run_oltp(&params, target, &output)
        .map_err(|(err, _)| err)
        .unwrap();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let cell = &record.cells[0];
    assert_eq!(cell.outcome, OutcomeRecord::Completed, "{:?}", cell.error);
    assert_eq!(cell.events, events);
    (allocations, cell.queries.iter().map(|q| q.count).sum())
}

#[test]
fn sysbench_workloads_allocate_nothing_per_statement() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let target = common::as_external(&server);
    for (workload, short, long) in [
        (OltpKind::PointSelect, 500, 4_500),
        (OltpKind::ReadOnly, 100, 400),
        (OltpKind::ReadWrite, 100, 350),
        (OltpKind::UpdateNonIndex, 300, 3_300),
        (OltpKind::Insert, 300, 3_300),
        (OltpKind::SelectRandomPoints, 300, 3_300),
        (OltpKind::SelectRandomRanges, 300, 3_300),
    ] {
        // The first run prepares the tables; the two measured runs then differ only in length.
        allocations_and_statements(workload, 50, &target);
        let (short_allocations, short_statements) =
            allocations_and_statements(workload, short, &target);
        let (long_allocations, long_statements) =
            allocations_and_statements(workload, long, &target);
        let statements = long_statements - short_statements;
        let per_statement =
            long_allocations.saturating_sub(short_allocations) as f64 / statements as f64;
        eprintln!(
            "{workload:?}: {short_allocations} allocations for {short_statements} statements, \
             {long_allocations} for {long_statements}: {per_statement:.4} per statement"
        );
        // One allocation per statement would be 1.0 (oltp_read_write's three texts per
        // event 0.17); what is left is a run's fixed cost varying a little (a histogram
        // growing to a new maximum latency allocates).
        assert!(
            per_statement < 0.02,
            "{workload:?} allocates {per_statement:.3} times per statement"
        );
    }
}
