//! The event loop: runs a loop thread's workers as coroutines until all have returned,
//! resuming each with what it waited for (its socket ready, its time come, the measured
//! phase begun, a turn to connect). Owns the slots, the ready queue, the timers and the
//! socket owners; must not know what a worker does, nor how epoll is called.

use std::collections::{BinaryHeap, VecDeque};
use std::ffi::c_int;
use std::time::{Duration, Instant};

use corosensei::CoroutineResult;

use super::coroutine::{self, Co, Wait, WAIT_EXCEPT, WAIT_READ, WAIT_TIMEOUT, WAIT_WRITE};
use super::epoll::Epoll;
use super::stats::{self, LoopStats};

enum Waiting {
    Nothing,
    Io {
        want: c_int,
        deadline: Option<Instant>,
    },
    Timer,
    Parked,
}

struct Slot<R> {
    coroutine: Option<Co<R>>,
    waiting: Waiting,
    /// Bumped with every wait, so a timer set for an earlier wait is recognised as stale.
    seq: u64,
}

/// How long a loop ran its coroutines without looking at its sockets and timers, since its
/// parked workers were released (the warm-up or measured phase): what every connection of
/// the loop waited for, whatever it was waiting for (an answer, its intended start).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LoopHeld {
    /// The longest such stretch, µs.
    pub(crate) longest_us: u64,
    /// All stretches of at least [`HELD_LONG`], added up, µs.
    pub(crate) long_total_us: u64,
}

/// A stretch without a look at sockets and timers this long is counted in
/// [`LoopHeld::long_total_us`] (well above a loop's usual round of a few hundred µs).
const HELD_LONG: Duration = Duration::from_millis(10);

/// Runs `tasks` as coroutines on this thread until all have returned; their results in
/// order, and how long the loop was held at most. `released` is polled (every few ms)
/// while a task is parked.
///
/// Panics propagate as from a function call (the tasks catch their own).
// Long by design: the event loop: resuming, waiting and waking stay in one loop so the hot path has no calls between them.
#[allow(clippy::too_many_lines)]
pub(crate) fn run_loop<'a, R>(
    tasks: Vec<Box<dyn FnOnce() -> R + 'a>>,
    released: &dyn Fn() -> bool,
) -> (Vec<R>, LoopHeld) {
    let epoll = Epoll::new();
    let mut slots: Vec<Slot<R>> = Vec::with_capacity(tasks.len());
    for task in tasks {
        // SAFETY: everything `task` borrows outlives this function, and every coroutine
        // is run to completion (or dropped, unwinding it) before it returns.
        let started = unsafe { coroutine::start(task) };
        slots.push(Slot {
            coroutine: Some(started),
            waiting: Waiting::Nothing,
            seq: 0,
        });
    }
    let mut results: Vec<Option<R>> = slots.iter().map(|_| None).collect();
    let mut live = slots.len();
    let mut ready: VecDeque<(usize, c_int)> = (0..slots.len()).map(|id| (id, 0)).collect();
    let mut timers: BinaryHeap<std::cmp::Reverse<(Instant, usize, u64)>> = BinaryHeap::new();
    let mut parked: Vec<usize> = Vec::new();
    // Coroutines that yielded: resumed after the timers and sockets due meanwhile.
    let mut yielded: Vec<usize> = Vec::new();
    let mut io_waiters_with_deadline = 0usize;
    let mut next_sweep = Instant::now() + Duration::from_millis(100);
    // Which slot owns each registered socket (index: fd; 0: none, else slot + 1), and
    // whether its writability is watched.
    let mut owner: Vec<(u32, bool)> = Vec::new();
    let mut events: Vec<libc::epoll_event> = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut stats = stats::wanted().then(|| LoopStats::new(slots.len()));
    // Workers woken by the last wait and not yet resumed (for `stats`).
    let mut woken_left = 0usize;
    let mut held = LoopHeld::default();
    // When the loop last looked at its sockets (a wait returned).
    let mut looked_at = Instant::now();

    loop {
        while let Some((id, answer)) = ready.pop_front() {
            if woken_left > 0 {
                woken_left -= 1;
                if let Some(stats) = &mut stats {
                    stats.resumed_woken();
                }
            }
            let slot = &mut slots[id];
            let running = slot.coroutine.as_mut().expect("a live coroutine");
            let result = coroutine::resume(running, answer);
            slot.seq += 1;
            match result {
                CoroutineResult::Yield(Wait::Io {
                    fd,
                    status,
                    timeout_ms,
                }) => {
                    let index = fd as usize;
                    if owner.len() <= index {
                        owner.resize(index + 1, (0, false));
                    }
                    // Writability is watched only while someone waits for it: a socket is
                    // writable again each time the server reads a request, and those edges
                    // would wake the loop once more per statement for nothing.
                    let writes = status & (WAIT_WRITE | WAIT_EXCEPT) != 0;
                    if owner[index].0 != id as u32 + 1 {
                        epoll.add(fd, id, writes);
                        owner[index] = (id as u32 + 1, writes);
                    } else if owner[index].1 != writes {
                        epoll.modify(fd, id, writes);
                        owner[index].1 = writes;
                    }
                    let deadline = (status & WAIT_TIMEOUT != 0)
                        .then(|| Instant::now() + Duration::from_millis(timeout_ms.into()));
                    if deadline.is_some() {
                        io_waiters_with_deadline += 1;
                    }
                    slot.waiting = Waiting::Io {
                        want: status & (WAIT_READ | WAIT_WRITE | WAIT_EXCEPT),
                        deadline,
                    };
                }
                CoroutineResult::Yield(Wait::Until(when)) => {
                    slot.waiting = Waiting::Timer;
                    timers.push(std::cmp::Reverse((when, id, slot.seq)));
                }
                CoroutineResult::Yield(Wait::Park) => {
                    slot.waiting = Waiting::Parked;
                    parked.push(id);
                }
                CoroutineResult::Yield(Wait::ConnectTurn) => {
                    slot.waiting = Waiting::Parked;
                    coroutine::wait_for_turn(id);
                }
                CoroutineResult::Yield(Wait::Yield) => {
                    slot.waiting = Waiting::Nothing;
                    yielded.push(id);
                }
                CoroutineResult::Yield(Wait::Forget(fd)) => {
                    if owner.get(fd as usize).map(|o| o.0) == Some(id as u32 + 1) {
                        epoll.delete(fd);
                        owner[fd as usize] = (0, false);
                    }
                    ready.push_front((id, 0));
                }
                CoroutineResult::Return(result) => {
                    results[id] = Some(result);
                    slot.coroutine = None;
                    slot.waiting = Waiting::Nothing;
                    live -= 1;
                }
            }
        }
        coroutine::wake_handed_turns(|id| {
            slots[id].waiting = Waiting::Nothing;
            ready.push_back((id, 0));
        });
        if !ready.is_empty() {
            continue;
        }
        if live == 0 {
            let stretch = looked_at.elapsed();
            held.longest_us = held.longest_us.max(stretch.as_micros() as u64);
            if stretch >= HELD_LONG {
                held.long_total_us += stretch.as_micros() as u64;
            }
            break;
        }
        if !parked.is_empty() && released() {
            // From here on the loop's stretches are measured: connecting and preparing
            // (set-up) are not the cell's.
            held = LoopHeld::default();
            looked_at = Instant::now();
            for id in parked.drain(..) {
                slots[id].waiting = Waiting::Nothing;
                ready.push_back((id, 0));
            }
            continue;
        }
        let now = Instant::now();
        while let Some(std::cmp::Reverse((when, id, seq))) = timers.peek().copied() {
            if when > now {
                break;
            }
            timers.pop();
            let slot = &mut slots[id];
            if slot.seq == seq && matches!(slot.waiting, Waiting::Timer) {
                slot.waiting = Waiting::Nothing;
                ready.push_back((id, 0));
            }
        }
        // libmariadb's timeouts (seconds: connect and read timeouts) are checked in sweeps.
        if io_waiters_with_deadline > 0 && now >= next_sweep {
            next_sweep = now + Duration::from_millis(100);
            io_waiters_with_deadline = 0;
            for (id, slot) in slots.iter_mut().enumerate() {
                if let Waiting::Io {
                    deadline: Some(deadline),
                    ..
                } = slot.waiting
                {
                    if deadline <= now {
                        slot.waiting = Waiting::Nothing;
                        ready.push_back((id, WAIT_TIMEOUT));
                    } else {
                        io_waiters_with_deadline += 1;
                    }
                }
            }
        }
        if !ready.is_empty() && yielded.is_empty() {
            continue;
        }
        let mut timeout: Option<Duration> = timers
            .peek()
            .map(|std::cmp::Reverse((when, _, _))| when.saturating_duration_since(now));
        let mut cap = |limit: Duration| {
            timeout = Some(timeout.map_or(limit, |t| t.min(limit)));
        };
        if !parked.is_empty() {
            cap(Duration::from_millis(2));
        }
        if io_waiters_with_deadline > 0 {
            cap(next_sweep.saturating_duration_since(now));
        }
        if !yielded.is_empty() || !ready.is_empty() {
            // Someone is ready to run: only a look at the sockets.
            cap(Duration::ZERO);
        }
        let since = stats.as_mut().map(|stats| {
            let in_flight = slots
                .iter()
                .filter(|slot| matches!(slot.waiting, Waiting::Io { want, .. } if want & WAIT_READ != 0))
                .count();
            stats.before_wait(in_flight)
        });
        let stretch = now.saturating_duration_since(looked_at);
        held.longest_us = held.longest_us.max(stretch.as_micros() as u64);
        if stretch >= HELD_LONG {
            held.long_total_us += stretch.as_micros() as u64;
        }
        let count = epoll.wait(&mut events, timeout);
        looked_at = Instant::now();
        let queued_before = ready.len();
        for event in &events[..count] {
            let id = event.u64 as usize;
            let slot = &mut slots[id];
            if let Waiting::Io { want, deadline } = slot.waiting {
                let flags = event.events as c_int;
                let mut got = 0;
                if flags & (libc::EPOLLIN | libc::EPOLLRDHUP) != 0 {
                    got |= WAIT_READ;
                }
                if flags & libc::EPOLLOUT != 0 {
                    got |= WAIT_WRITE;
                }
                if flags & libc::EPOLLPRI != 0 {
                    got |= WAIT_EXCEPT;
                }
                if flags & (libc::EPOLLERR | libc::EPOLLHUP) != 0 {
                    // Whatever it waits for will now fail, and libmariadb will say why.
                    got |= want;
                }
                if got & want != 0 {
                    if deadline.is_some() {
                        io_waiters_with_deadline = io_waiters_with_deadline.saturating_sub(1);
                    }
                    slot.waiting = Waiting::Nothing;
                    ready.push_back((id, got & want));
                }
            }
        }
        woken_left = ready.len() - queued_before;
        // After whatever became due while they ran.
        ready.extend(yielded.drain(..).map(|id| (id, 0)));
        if let (Some(stats), Some(since)) = (&mut stats, since) {
            stats.after_wait(since, count, woken_left);
        }
    }
    if let Some(stats) = &stats {
        stats.print();
    }
    (
        results
            .into_iter()
            .map(|result| result.expect("every task returned"))
            .collect(),
        held,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::driver::events::coroutine::{in_coroutine, sleep, suspend};

    #[test]
    fn coroutines_sleep_and_park_without_blocking_each_other() {
        let released = std::sync::atomic::AtomicBool::new(false);
        let order = std::sync::Mutex::new(Vec::new());
        let tasks: Vec<Box<dyn FnOnce() -> usize + '_>> = (0..50usize)
            .map(|index| {
                let order = &order;
                let released = &released;
                Box::new(move || {
                    assert!(in_coroutine());
                    // Later tasks sleep less: they finish first.
                    sleep(Duration::from_millis(100 - index as u64));
                    order.lock().unwrap().push(index);
                    if index == 0 {
                        released.store(true, Ordering::Release);
                    } else {
                        while !released.load(Ordering::Acquire) {
                            suspend(Wait::Park);
                        }
                    }
                    index * 2
                }) as Box<dyn FnOnce() -> usize>
            })
            .collect();
        // The point is the order below, not the pace: a loop that hung would never
        // return to be asserted on, so no time is.
        let (results, _) = run_loop(tasks, &|| released.load(Ordering::Acquire));
        assert_eq!(results, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        let order = order.into_inner().unwrap();
        assert_eq!(order.first(), Some(&49));
        assert_eq!(order.last(), Some(&0));
        assert!(!in_coroutine());
    }
}
