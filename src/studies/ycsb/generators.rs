//! YCSB's number generators, ported from its `site.ycsb.generator` package (and
//! `Utils.fnvhash64`) so that a run here draws keys with the distributions YCSB's core
//! workload draws them with: zipfian (Gray et al.'s algorithm, with YCSB's constant 0.99
//! and its incremental zeta when the item count grows), scrambled zipfian (YCSB's fixed
//! 10^10-item zipfian hashed onto the key range), skewed latest, hotspot, exponential,
//! uniform, sequential, counters (plain and acknowledged) and discrete choice.
//!
//! Owns: the arithmetic of each distribution and the thread safety of shared generators.
//! Must not know properties, key names, operations or databases: `properties` builds
//! these from a workload's settings. The random source is always the caller's
//! (`&mut impl Rng`), so a worker thread keeps its own and tests are seeded.
//!
//! Values are `u64` where YCSB's are non-negative `long`s; where YCSB's arithmetic can go
//! negative only through `Math.abs(Long.MIN_VALUE)` (a 2^-64 event) we keep the result in
//! range instead, and say so where it happens.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};

use rand::Rng;
use thiserror::Error;

/// YCSB's `ZipfianGenerator.ZIPFIAN_CONSTANT`: the skew (theta) of every zipfian it makes.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`: the scrambled zipfian draws from this
/// many items whatever the key range, so that popularity does not depend on it.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;

/// YCSB's `ScrambledZipfianGenerator.ZETAN`: zeta(10^10, 0.99), precomputed because
/// summing 10^10 terms takes minutes.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// `Utils.FNV_OFFSET_BASIS_64` (0xCBF29CE484222325 as a Java `long`).
pub const FNV_OFFSET_BASIS_64: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;

/// `Utils.FNV_PRIME_64`.
pub const FNV_PRIME_64: i64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the value's 8 bytes, least significant first,
/// then `Math.abs`. Java's `long` arithmetic wraps, `>>` is arithmetic (sign-extending) and
/// `Math.abs(Long.MIN_VALUE)` is `Long.MIN_VALUE`; the wrapping operations below do the
/// same, so every input gives Java's value (negative only for a hash of exactly `i64::MIN`).
pub fn fnvhash64(value: i64) -> i64 {
    let mut rest = value;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = rest & 0xff;
        rest >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.wrapping_abs()
}

/// `fnvhash64` of a key number, as YCSB's key names and scrambled zipfian use it.
pub(crate) fn hash_key_number(key_number: u64) -> i64 {
    // Key numbers come from `long`s in YCSB; the cast is Java's own reading of the bits.
    fnvhash64(key_number as i64)
}

/// YCSB's `ZipfianGenerator.zetastatic(st, n, theta, initialsum)`: `initial_sum` plus
/// 1/(i+1)^theta for i in `from_items..to_items`. zeta(n) is `zeta(0, n, theta, 0.0)`;
/// growing from m to n items continues from zeta(m).
pub fn zeta(from_items: u64, to_items: u64, theta: f64, initial_sum: f64) -> f64 {
    let mut sum = initial_sum;
    for i in from_items..to_items {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// The part of a zipfian's parameters that depends on the item count: YCSB recomputes it
/// when a draw asks for more items than the last.
#[derive(Debug, Clone, Copy)]
struct ZetaState {
    /// The item count `zetan` was summed over (YCSB's `countforzeta`).
    count_for_zeta: u64,
    zetan: f64,
    eta: f64,
}

/// YCSB's `ZipfianGenerator`: item `base` is the most popular, `base + 1` the next, and
/// so on (Gray et al., "Quickly Generating Billion-Record Synthetic Databases", 1994).
#[derive(Debug)]
pub struct Zipfian {
    base: u64,
    /// The item count the generator was made for (YCSB's `items`). YCSB's eta keeps using
    /// it even after a draw grows the count (see `next_for`); so do we.
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    /// Shared by every thread drawing from this generator. A draw reads zetan and eta as
    /// one pair, and a draw for a grown item count replaces both: a lock keeps a draw from
    /// pairing a new zetan with an old eta (YCSB's unsynchronized reads can), and lets only
    /// one thread extend the sum. Draws for the current count only take the read side, so
    /// workers do not wait on each other.
    state: RwLock<ZetaState>,
}

impl Zipfian {
    /// Items `0..items` with YCSB's constant (`new ZipfianGenerator(items)`).
    pub fn new(items: u64) -> Self {
        Self::with_constant(0, items, ZIPFIAN_CONSTANT)
    }

    /// Items `min..=max` with YCSB's constant (`new ZipfianGenerator(min, max)`); the
    /// caller makes sure `min <= max`.
    pub fn range(min: u64, max: u64) -> Self {
        Self::with_constant(
            min,
            max.saturating_sub(min).saturating_add(1),
            ZIPFIAN_CONSTANT,
        )
    }

    /// `items` items from `base` with skew `theta`, zeta summed from scratch.
    pub fn with_constant(base: u64, items: u64, theta: f64) -> Self {
        Self::with_zetan(base, items, theta, zeta(0, items, theta, 0.0))
    }

    /// `items` items from `base` with skew `theta` and a precomputed zeta(items, theta)
    /// (YCSB's four-argument constructor, which the scrambled zipfian uses).
    pub fn with_zetan(base: u64, items: u64, theta: f64, zetan: f64) -> Self {
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let eta = eta_of(items, theta, zeta2theta, zetan);
        Self {
            base,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            state: RwLock::new(ZetaState {
                count_for_zeta: items,
                zetan,
                eta,
            }),
        }
    }

    /// The next item among the generator's own item count (`nextValue()`).
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        self.next_for(rng, self.items)
    }

    /// The next item among `item_count` items (`nextLong(itemcount)`). A count above the
    /// last one extends zeta incrementally; a smaller one keeps the current zeta, as YCSB
    /// does with `allowitemcountdecrease` false (its default, and nothing sets it).
    pub fn next_for(&self, rng: &mut impl Rng, item_count: u64) -> u64 {
        let state = self.state_for(item_count);
        let u: f64 = rng.gen();
        let uz = u * state.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5_f64.powf(self.theta) {
            return self.base + 1;
        }
        // Java's `(long)` of a double truncates toward zero and saturates, as `as` does.
        let offset =
            (item_count as f64 * (state.eta * u - state.eta + 1.0).powf(self.alpha)) as u64;
        self.base.saturating_add(offset)
    }

    /// zeta over the item count the generator last summed for (for tests and reports).
    pub fn zetan(&self) -> f64 {
        self.read_state().zetan
    }

    fn read_state(&self) -> ZetaState {
        // The write section below is arithmetic that cannot panic, so a poisoned lock
        // still holds a consistent pair.
        *self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn state_for(&self, item_count: u64) -> ZetaState {
        let state = self.read_state();
        if item_count <= state.count_for_zeta {
            return state;
        }
        let mut shared = self.state.write().unwrap_or_else(PoisonError::into_inner);
        // Another thread may have grown it while this one waited for the lock.
        if item_count > shared.count_for_zeta {
            let zetan = zeta(shared.count_for_zeta, item_count, self.theta, shared.zetan);
            *shared = ZetaState {
                count_for_zeta: item_count,
                zetan,
                // YCSB computes the new eta from `items`, the constructor's count, not
                // `itemcount`; kept so the distribution is YCSB's.
                eta: eta_of(self.items, self.theta, self.zeta2theta, zetan),
            };
        }
        *shared
    }
}

/// Gray et al.'s eta for `items` items.
fn eta_of(items: u64, theta: f64, zeta2theta: f64, zetan: f64) -> f64 {
    (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan)
}

/// YCSB's `ScrambledZipfianGenerator`: a zipfian over 10^10 items (YCSB passes
/// `(0, ITEM_COUNT)`, so 10^10 + 1 items, with zeta of 10^10; kept) whose draw is hashed
/// with fnvhash64 onto `min..=max`. Popular keys are spread over the range instead of
/// being its lowest numbers, and which keys are popular does not change with the range.
/// Only YCSB's constant 0.99 is offered: another would need zeta over 10^10 terms.
#[derive(Debug)]
pub struct ScrambledZipfian {
    zipfian: Zipfian,
    min: u64,
    item_count: u64,
}

impl ScrambledZipfian {
    /// Keys `min..=max`; the caller makes sure `min <= max`.
    pub fn new(min: u64, max: u64) -> Self {
        Self {
            zipfian: Zipfian::with_zetan(
                0,
                SCRAMBLED_ITEM_COUNT + 1,
                ZIPFIAN_CONSTANT,
                SCRAMBLED_ZETAN,
            ),
            min,
            item_count: max.saturating_sub(min).saturating_add(1),
        }
    }

    /// The next key number.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        let drawn = self.zipfian.next(rng);
        // YCSB: `min + fnvhash64(drawn) % itemcount`. The hash is non-negative except for
        // the one value whose hash is `Long.MIN_VALUE`, where Java's `%` would give a
        // negative key; `unsigned_abs` keeps that key in range instead.
        self.min + hash_key_number(drawn).unsigned_abs() % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: `latest - zipfian(latest)`, so the most recently
/// inserted key is the most popular and older keys fade with zipfian skew.
#[derive(Debug)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// `latest` is the basis counter's last value when the generator is made (YCSB builds
    /// its zipfian over that many items).
    pub fn new(latest: u64) -> Self {
        Self {
            zipfian: Zipfian::new(latest),
        }
    }

    /// The next key number for the basis counter's current last value `latest`; never
    /// more than `latest`.
    pub fn next(&self, rng: &mut impl Rng, latest: u64) -> u64 {
        // The zipfian over `latest` items returns at most `latest`, so this stays at or
        // above 0 for every `latest` above 0; for 0 YCSB could return -1, we return 0.
        latest.saturating_sub(self.zipfian.next_for(rng, latest))
    }
}

/// YCSB's `UniformLongGenerator`: every number in `lower..=upper` equally likely. YCSB
/// reduces `Math.abs(nextLong())` modulo the interval (a bias below 2^-40 for key ranges);
/// `gen_range` has none.
#[derive(Debug, Clone, Copy)]
pub struct UniformLong {
    lower: u64,
    upper: u64,
}

impl UniformLong {
    /// Numbers `lower..=upper`; bounds given the wrong way round are swapped.
    pub fn new(lower: u64, upper: u64) -> Self {
        Self {
            lower: lower.min(upper),
            upper: lower.max(upper),
        }
    }

    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        rng.gen_range(self.lower..=self.upper)
    }
}

/// YCSB's `HotspotIntegerGenerator`: a `hot_data_fraction` of `lower..=upper` (its lowest
/// numbers) gets a `hot_operation_fraction` of the draws, uniformly; the rest of the range
/// gets the rest.
#[derive(Debug, Clone, Copy)]
pub struct Hotspot {
    lower: u64,
    hot_items: u64,
    cold_items: u64,
    hot_operation_fraction: f64,
}

impl Hotspot {
    /// As YCSB's constructor: a fraction outside 0..=1 becomes 0 and swapped bounds are
    /// put right (YCSB warns on stderr; `properties` rejects such values before this).
    pub fn new(
        lower: u64,
        upper: u64,
        hot_data_fraction: f64,
        hot_operation_fraction: f64,
    ) -> Self {
        let in_range = |fraction: f64| {
            if (0.0..=1.0).contains(&fraction) {
                fraction
            } else {
                0.0
            }
        };
        let (lower, upper) = (lower.min(upper), lower.max(upper));
        let items = (upper - lower).saturating_add(1);
        // YCSB truncates with an `(int)` cast, which caps the hot set at 2^31 - 1 items;
        // we truncate to u64 and keep larger hot sets whole.
        let hot_items = (items as f64 * in_range(hot_data_fraction)) as u64;
        Self {
            lower,
            hot_items,
            cold_items: items - hot_items,
            hot_operation_fraction: in_range(hot_operation_fraction),
        }
    }

    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        // YCSB divides by an empty set here (an ArithmeticException); an empty side's
        // draws go to the other side instead.
        let hot = rng.gen::<f64>() < self.hot_operation_fraction;
        if (hot && self.hot_items > 0) || self.cold_items == 0 {
            self.lower + rng.gen_range(0..self.hot_items)
        } else {
            self.lower + self.hot_items + rng.gen_range(0..self.cold_items)
        }
    }
}

/// YCSB's `ExponentialGenerator`: exponentially distributed reals, set up so that a
/// `percentile` percent of draws fall below `range` (CoreWorkload uses 95 and
/// `recordcount * 0.8571428571`), and subtracted from the latest key to favour recent ones.
#[derive(Debug, Clone, Copy)]
pub struct Exponential {
    /// The rate: 1 / mean.
    gamma: f64,
}

impl Exponential {
    /// YCSB's `ExponentialGenerator(percentile, range)`.
    pub fn new(percentile: f64, range: f64) -> Self {
        Self {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    /// YCSB's `ExponentialGenerator(mean)`.
    pub fn with_mean(mean: f64) -> Self {
        Self { gamma: 1.0 / mean }
    }

    pub fn mean(&self) -> f64 {
        1.0 / self.gamma
    }

    /// The next value; infinite when the uniform draw is exactly 0, as in YCSB.
    pub fn next(&self, rng: &mut impl Rng) -> f64 {
        -rng.gen::<f64>().ln() / self.gamma
    }
}

/// YCSB's `SequentialGenerator`: `first..=last` in order, starting over after `last`,
/// one shared position for all threads.
#[derive(Debug)]
pub struct Sequential {
    first: u64,
    items: u64,
    position: AtomicU64,
}

impl Sequential {
    /// Numbers `first..=last`; the caller makes sure `first <= last`.
    pub fn new(first: u64, last: u64) -> Self {
        Self {
            first,
            items: last.saturating_sub(first).saturating_add(1),
            position: AtomicU64::new(0),
        }
    }

    pub fn next(&self) -> u64 {
        self.first + self.position.fetch_add(1, Ordering::Relaxed) % self.items
    }
}

/// YCSB's `CounterGenerator`: `start`, `start + 1`, … shared by all threads (the load
/// phase's key sequence).
#[derive(Debug)]
pub struct Counter {
    next: AtomicU64,
}

impl Counter {
    pub fn new(start: u64) -> Self {
        Self {
            next: AtomicU64::new(start),
        }
    }

    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The last value handed out (YCSB's `lastValue()`, `counter - 1`); None before any
    /// when the counter started at 0, where YCSB says -1.
    pub fn last(&self) -> Option<u64> {
        self.next.load(Ordering::Relaxed).checked_sub(1)
    }
}

/// YCSB's `AcknowledgedCounterGenerator.WINDOW_SIZE`: how many values may be handed out
/// and not yet acknowledged at once.
pub const ACKNOWLEDGE_WINDOW: u64 = 1 << 20;

/// More values are outstanding than the window holds: a value came back after the counter
/// handed out its window's worth of later ones (YCSB throws the same).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("too many unacknowledged insertion keys: {value} came back while its slot in the {window}-key window was still taken")]
pub struct AcknowledgeError {
    pub value: u64,
    pub window: u64,
}

/// YCSB's `AcknowledgedCounterGenerator`: the run phase's insert-key sequence. Values are
/// handed out as a counter does, but `last()` is the end of the contiguous run of
/// acknowledged ones (inserts that completed), so reads never choose a key whose insert is
/// still in flight. As in YCSB, each acknowledgement marks its slot in a ring of
/// `ACKNOWLEDGE_WINDOW` flags, and whichever thread gets the lock (without waiting) moves
/// the limit over the marked run; a thread that finds the lock taken leaves its mark for
/// the holder or the next acknowledgement to collect.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    counter: Counter,
    /// One past the last value of the contiguous acknowledged run (YCSB's `limit + 1`,
    /// which keeps -1 out of an unsigned number).
    acknowledged_below: AtomicU64,
    window: Box<[AtomicBool]>,
    /// Taken with `try_lock` only: the limit has one mover at a time and nobody waits.
    mover: Mutex<()>,
}

impl AcknowledgedCounter {
    /// Hands out `start`, `start + 1`, …; `last()` starts at `start - 1`.
    pub fn new(start: u64) -> Self {
        Self {
            counter: Counter::new(start),
            acknowledged_below: AtomicU64::new(start),
            window: (0..ACKNOWLEDGE_WINDOW)
                .map(|_| AtomicBool::new(false))
                .collect(),
            mover: Mutex::new(()),
        }
    }

    pub fn next(&self) -> u64 {
        self.counter.next()
    }

    /// The last value of the contiguous acknowledged run (YCSB's `lastValue()`, its
    /// `limit`); None when the counter started at 0 and 0 is not acknowledged yet.
    pub fn last(&self) -> Option<u64> {
        self.acknowledged_below
            .load(Ordering::Acquire)
            .checked_sub(1)
    }

    /// Marks `value` (one `next()` returned) as done.
    pub fn acknowledge(&self, value: u64) -> Result<(), AcknowledgeError> {
        let slot = &self.window[(value % ACKNOWLEDGE_WINDOW) as usize];
        if slot.swap(true, Ordering::AcqRel) {
            return Err(AcknowledgeError {
                value,
                window: ACKNOWLEDGE_WINDOW,
            });
        }
        if let Ok(_mover) = self.mover.try_lock() {
            let mut below = self.acknowledged_below.load(Ordering::Acquire);
            // At most once round the window (YCSB's loop means the same).
            for _ in 0..ACKNOWLEDGE_WINDOW {
                let slot = &self.window[(below % ACKNOWLEDGE_WINDOW) as usize];
                if !slot.load(Ordering::Acquire) {
                    break;
                }
                slot.store(false, Ordering::Release);
                below += 1;
            }
            self.acknowledged_below.store(below, Ordering::Release);
        }
        Ok(())
    }
}

/// YCSB's `DiscreteGenerator`: one of several values, each with probability proportional
/// to its weight, tried in the order they were given.
#[derive(Debug, Clone)]
pub struct Discrete<T> {
    /// Values with their share of the total weight; weights of 0 are left out (as
    /// CoreWorkload leaves out operations whose proportion is not above 0).
    choices: Vec<(f64, T)>,
}

impl<T: Copy> Discrete<T> {
    /// None when no weight is above 0 (YCSB would fail on the first draw).
    pub fn new(weighted: impl IntoIterator<Item = (f64, T)>) -> Option<Self> {
        let kept: Vec<(f64, T)> = weighted
            .into_iter()
            .filter(|(weight, _)| weight.is_finite() && *weight > 0.0)
            .collect();
        let total: f64 = kept.iter().map(|(weight, _)| weight).sum();
        if kept.is_empty() || total <= 0.0 {
            return None;
        }
        let choices = kept
            .into_iter()
            .map(|(weight, value)| (weight / total, value))
            .collect();
        Some(Self { choices })
    }

    pub fn next(&self, rng: &mut impl Rng) -> T {
        let mut remaining: f64 = rng.gen();
        for (share, value) in &self.choices {
            if remaining < *share {
                return *value;
            }
            remaining -= share;
        }
        // Shares summing to a hair under 1 can leave a draw past the end, where YCSB
        // throws "should not get here"; the last value is the one it fell short of.
        self.choices[self.choices.len() - 1].1
    }
}

#[cfg(test)]
mod tests;
