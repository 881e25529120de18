//! The generators against YCSB's definitions: fnvhash64's values, the shapes of the
//! distributions over seeded samples (never timings), and sharing between threads.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::*;

fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// How often each of `0..items` came up in `draws` draws of `draw`.
fn frequencies(items: usize, draws: usize, mut draw: impl FnMut() -> u64) -> Vec<f64> {
    let mut counts = vec![0_u64; items];
    for _ in 0..draws {
        counts[draw() as usize] += 1;
    }
    counts.iter().map(|&c| c as f64 / draws as f64).collect()
}

/// Expected values from a line-by-line port of `Utils.fnvhash64` to Python's unbounded
/// integers, wrapping to 64-bit two's complement after every step (`s(x)`):
///
/// ```text
/// h = s(0xCBF29CE484222325)
/// for i in range(8): o = val & 0xff; val >>= 8; h = s(h ^ o); h = s(h * 1099511628211)
/// return s(abs(h))
/// ```
///
/// For 0 every octet is 0, so the hash is offset * prime^8 mod 2^64. 6284781860667377211
/// and 8517097267634966620 are also the well-known first keys of a hashed YCSB load
/// (`user6284781860667377211` for key 0, `user8517097267634966620` for key 1).
#[test]
fn fnvhash64_equals_ycsb() {
    let expected: [(i64, i64); 9] = [
        (0, 6_284_781_860_667_377_211),
        (1, 8_517_097_267_634_966_620),
        (2, 1_820_151_046_732_198_393),
        (3, 4_052_466_453_699_787_802),
        (42, 55_488_592_825_689_361),
        (1000, 5_952_875_239_596_136_740),
        // Negative inputs: Java's `>>` sign-extends, so the high octets are 0xff.
        (-1, 8_289_690_350_564_177_859),
        (i64::MAX, 8_289_549_613_075_766_851),
        (i64::MIN, 6_284_922_598_155_788_219),
    ];
    for (value, hash) in expected {
        assert_eq!(fnvhash64(value), hash, "fnvhash64({value})");
    }
}

#[test]
fn zeta_sums_and_grows_incrementally() {
    assert_eq!(zeta(0, 1, ZIPFIAN_CONSTANT, 0.0), 1.0);
    let two = 1.0 + 0.5_f64.powf(ZIPFIAN_CONSTANT);
    assert!((zeta(0, 2, ZIPFIAN_CONSTANT, 0.0) - two).abs() < 1e-15);
    let whole = zeta(0, 5000, ZIPFIAN_CONSTANT, 0.0);
    let grown = zeta(
        1000,
        5000,
        ZIPFIAN_CONSTANT,
        zeta(0, 1000, ZIPFIAN_CONSTANT, 0.0),
    );
    assert!((whole - grown).abs() < 1e-9);
}

/// YCSB's precomputed zeta(10^10, 0.99), checked without summing 10^10 terms: the first
/// 10^6 exactly, the rest as the integral of x^-0.99 over (10^6 + 1/2, 10^10 + 1/2), whose
/// midpoint-rule error for this smooth, slowly varying term is far below the tolerance.
#[test]
fn scrambled_zetan_is_zeta_of_its_item_count() {
    let head_items = 1_000_000_u64;
    let head = zeta(0, head_items, ZIPFIAN_CONSTANT, 0.0);
    let power = 1.0 - ZIPFIAN_CONSTANT;
    let antiderivative = |x: f64| x.powf(power) / power;
    let tail =
        antiderivative(SCRAMBLED_ITEM_COUNT as f64 + 0.5) - antiderivative(head_items as f64 + 0.5);
    assert!(
        (head + tail - SCRAMBLED_ZETAN).abs() < 1e-6,
        "{} vs {SCRAMBLED_ZETAN}",
        head + tail
    );
}

/// P(item < k) for Gray's algorithm as YCSB runs it, k >= 2: the draws below
/// (1 + 0.5^theta) / zetan are items 0 and 1, and above it item = n (eta u - eta + 1)^alpha.
fn gray_share_below(items: u64, k: u64) -> f64 {
    let zetan = zeta(0, items, ZIPFIAN_CONSTANT, 0.0);
    let eta = eta_of(
        items,
        ZIPFIAN_CONSTANT,
        zeta(0, 2, ZIPFIAN_CONSTANT, 0.0),
        zetan,
    );
    1.0 - (1.0 - (k as f64 / items as f64).powf(1.0 - ZIPFIAN_CONSTANT)) / eta
}

#[test]
fn zipfian_has_zipf_shape() {
    const ITEMS: u64 = 1000;
    const DRAWS: usize = 400_000;
    let zipfian = Zipfian::new(ITEMS);
    let mut rng = rng(1);
    let freq = frequencies(ITEMS as usize, DRAWS, || zipfian.next(&mut rng));
    let zetan = zeta(0, ITEMS, ZIPFIAN_CONSTANT, 0.0);
    assert!((zipfian.zetan() - zetan).abs() < 1e-12);

    // Items 0 and 1 are drawn exactly with Zipf's probabilities 1/zetan and 2^-θ/zetan
    // (one standard deviation here is about 0.0005).
    assert!(
        (freq[0] - 1.0 / zetan).abs() < 0.003,
        "{} vs {}",
        freq[0],
        1.0 / zetan
    );
    let second = 0.5_f64.powf(ZIPFIAN_CONSTANT) / zetan;
    assert!((freq[1] - second).abs() < 0.003, "{} vs {second}", freq[1]);

    // Popularity falls with rank: item by item at the head, block by block after.
    for i in 0..4 {
        assert!(freq[i] > freq[i + 1], "item {i} vs {}", i + 1);
    }
    let block = |from: usize, to: usize| freq[from..to].iter().sum::<f64>() / (to - from) as f64;
    assert!(block(5, 10) > block(10, 50));
    assert!(block(10, 50) > block(50, 200));
    assert!(block(200, 500) > block(500, 1000));

    // The top 1% of items: Gray's algorithm's own share, and close to exact Zipf's
    // zeta(10)/zeta(1000) (the algorithm approximates ranks past 1, by 0.016 here).
    let top: f64 = freq[..10].iter().sum();
    let gray = gray_share_below(ITEMS, 10);
    assert!((top - gray).abs() < 0.005, "top 1% {top} vs Gray {gray}");
    let zipf = zeta(0, 10, ZIPFIAN_CONSTANT, 0.0) / zetan;
    assert!((top - zipf).abs() < 0.025, "top 1% {top} vs Zipf {zipf}");
}

/// YCSB's own test (TestZipfianGenerator): draws stay within min..=max.
#[test]
fn zipfian_range_stays_within_bounds() {
    let zipfian = Zipfian::range(5, 10);
    let mut rng = rng(2);
    let mut seen = [false; 6];
    for _ in 0..10_000 {
        let value = zipfian.next(&mut rng);
        assert!((5..=10).contains(&value), "{value}");
        seen[(value - 5) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "every item comes up: {seen:?}");
}

#[test]
fn zipfian_grows_zeta_for_a_larger_item_count_only() {
    let zipfian = Zipfian::new(1000);
    let mut rng = rng(3);
    let value = zipfian.next_for(&mut rng, 3000);
    assert!(value <= 3000);
    assert!((zipfian.zetan() - zeta(0, 3000, ZIPFIAN_CONSTANT, 0.0)).abs() < 1e-9);
    // A smaller count keeps the larger zeta (YCSB's allowitemcountdecrease = false).
    zipfian.next_for(&mut rng, 2000);
    assert!((zipfian.zetan() - zeta(0, 3000, ZIPFIAN_CONSTANT, 0.0)).abs() < 1e-9);
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn generators_are_shareable_between_threads() {
    assert_send_sync::<Zipfian>();
    assert_send_sync::<ScrambledZipfian>();
    assert_send_sync::<SkewedLatest>();
    assert_send_sync::<AcknowledgedCounter>();
    assert_send_sync::<Counter>();
    assert_send_sync::<Sequential>();
    assert_send_sync::<Discrete<u8>>();

    // Threads growing the item count at once leave zeta summed exactly once per term.
    let zipfian = Arc::new(Zipfian::new(100));
    let threads: Vec<_> = (0..4_u64)
        .map(|t| {
            let zipfian = Arc::clone(&zipfian);
            std::thread::spawn(move || {
                let mut rng = rng(10 + t);
                for count in (100..5000).filter(|c| c % 4 == t) {
                    assert!(zipfian.next_for(&mut rng, count) <= count);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("worker");
    }
    let expected = zeta(0, 4999, ZIPFIAN_CONSTANT, 0.0);
    assert!((zipfian.zetan() - expected).abs() < 1e-9);
}

#[test]
fn scrambled_zipfian_spreads_hot_keys_and_keeps_their_weight() {
    const ITEMS: u64 = 1000;
    const DRAWS: usize = 400_000;
    let scrambled = ScrambledZipfian::new(0, ITEMS - 1);
    let mut rng = rng(4);
    let freq = frequencies(ITEMS as usize, DRAWS, || scrambled.next(&mut rng));

    // The hottest key is where item 0 hashes to, with item 0's weight 1/zetan plus its
    // share of the long tail spread over all keys (about 1/ITEMS of what is left).
    let hottest = (0..ITEMS as usize)
        .max_by(|&a, &b| freq[a].total_cmp(&freq[b]))
        .expect("keys");
    assert_eq!(hottest as u64, fnvhash64(0) as u64 % ITEMS);
    let head = 1.0 / SCRAMBLED_ZETAN;
    assert!(
        freq[hottest] > head - 0.002 && freq[hottest] < head + 0.004,
        "hottest {} vs 1/zetan {head}",
        freq[hottest]
    );
    // The second hottest is item 1's key.
    let second = (0..ITEMS as usize)
        .filter(|&k| k != hottest)
        .max_by(|&a, &b| freq[a].total_cmp(&freq[b]))
        .expect("keys");
    assert_eq!(second as u64, fnvhash64(1) as u64 % ITEMS);

    // Hot keys are spread: the ten hottest are not the lowest numbers, nor bunched.
    let mut by_heat: Vec<usize> = (0..ITEMS as usize).collect();
    by_heat.sort_by(|&a, &b| freq[b].total_cmp(&freq[a]));
    let top_ten = &by_heat[..10];
    assert!(
        top_ten.iter().filter(|&&k| k < 10).count() <= 1,
        "{top_ten:?}"
    );
    let mean = top_ten.iter().sum::<usize>() as f64 / 10.0;
    assert!(
        (200.0..800.0).contains(&mean),
        "mean of the hottest ten {mean}"
    );
    assert!(freq.iter().all(|&f| f > 0.0), "every key comes up");
}

#[test]
fn scrambled_zipfian_honours_its_range() {
    let scrambled = ScrambledZipfian::new(500, 509);
    let mut rng = rng(5);
    for _ in 0..10_000 {
        assert!((500..=509).contains(&scrambled.next(&mut rng)));
    }
}

#[test]
fn skewed_latest_favours_the_latest_and_never_passes_it() {
    let inserts = AcknowledgedCounter::new(1001);
    let latest = inserts.last().expect("latest");
    assert_eq!(latest, 1000);
    let skewed = SkewedLatest::new(latest);
    let mut rng = rng(6);
    let freq = frequencies(1001, 200_000, || skewed.next(&mut rng, latest));
    let hottest = (0..=1000).max_by(|&a, &b| freq[a].total_cmp(&freq[b]));
    assert_eq!(hottest, Some(1000));
    assert!(freq[1000] > freq[999] && freq[999] > freq[998]);
    assert!((freq[1000] - 1.0 / zeta(0, 1000, ZIPFIAN_CONSTANT, 0.0)).abs() < 0.004);

    // Acknowledged inserts move the favourite with them.
    for _ in 0..10 {
        let key = inserts.next();
        inserts.acknowledge(key).expect("in the window");
    }
    let latest = inserts.last().expect("latest");
    assert_eq!(latest, 1010);
    let freq = frequencies(1011, 100_000, || {
        let key = skewed.next(&mut rng, latest);
        assert!(key <= latest);
        key
    });
    let hottest = (0..=1010).max_by(|&a, &b| freq[a].total_cmp(&freq[b]));
    assert_eq!(hottest, Some(1010));
}

#[test]
fn uniform_covers_its_range_evenly() {
    let uniform = UniformLong::new(10, 19);
    let mut rng = rng(7);
    let freq = frequencies(20, 100_000, || uniform.next(&mut rng));
    assert!(freq[..10].iter().all(|&f| f == 0.0));
    assert!(
        freq[10..].iter().all(|&f| (f - 0.1).abs() < 0.005),
        "{freq:?}"
    );
    assert_eq!(UniformLong::new(5, 5).next(&mut rng), 5);
}

#[test]
fn hotspot_sends_its_share_to_the_hot_set() {
    let hotspot = Hotspot::new(0, 999, 0.2, 0.8);
    let mut rng = rng(8);
    let freq = frequencies(1000, 200_000, || hotspot.next(&mut rng));
    let hot: f64 = freq[..200].iter().sum();
    assert!((hot - 0.8).abs() < 0.005, "hot share {hot}");
    // Uniform within each side: 0.8 / 200 per hot key, 0.2 / 800 per cold key.
    assert!(freq[..200].iter().all(|&f| (f - 0.004).abs() < 0.0012));
    assert!(freq[200..].iter().all(|&f| (f - 0.00025).abs() < 0.0002));
    // YCSB's fallbacks: an out-of-range fraction is 0, so everything is cold.
    let all_cold = Hotspot::new(0, 99, 1.5, 0.8);
    assert!((0..1000).all(|_| all_cold.next(&mut rng) < 100));
    // And an empty hot set sends the hot draws to the cold set instead of failing.
    let no_hot = Hotspot::new(0, 9, 0.0, 1.0);
    assert!((0..1000).all(|_| no_hot.next(&mut rng) < 10));
}

#[test]
fn exponential_puts_the_percentile_below_the_range() {
    // YCSB's own check in ExponentialGenerator.main: 90% of draws below 100.
    let exponential = Exponential::new(90.0, 100.0);
    let mut rng = rng(9);
    let draws = 100_000;
    let below = (0..draws)
        .filter(|_| exponential.next(&mut rng) < 100.0)
        .count();
    let share = below as f64 / draws as f64;
    assert!((share - 0.9).abs() < 0.005, "{share}");
    let mean = (0..draws).map(|_| exponential.next(&mut rng)).sum::<f64>() / draws as f64;
    assert!((mean / exponential.mean() - 1.0).abs() < 0.02, "{mean}");
    assert!((Exponential::with_mean(7.0).mean() - 7.0).abs() < 1e-12);
}

#[test]
fn sequential_and_counter_count() {
    let sequential = Sequential::new(3, 5);
    let values: Vec<u64> = (0..7).map(|_| sequential.next()).collect();
    assert_eq!(values, [3, 4, 5, 3, 4, 5, 3]);
    let counter = Counter::new(0);
    assert_eq!(counter.last(), None);
    assert_eq!((counter.next(), counter.next()), (0, 1));
    assert_eq!(counter.last(), Some(1));
}

#[test]
fn acknowledged_counter_advances_over_contiguous_acknowledgements() {
    let counter = AcknowledgedCounter::new(100);
    assert_eq!(counter.last(), Some(99));
    let keys: Vec<u64> = (0..4).map(|_| counter.next()).collect();
    assert_eq!(keys, [100, 101, 102, 103]);
    // Out of order: nothing moves until 100 is in.
    counter.acknowledge(102).expect("window");
    counter.acknowledge(101).expect("window");
    assert_eq!(counter.last(), Some(99));
    counter.acknowledge(100).expect("window");
    assert_eq!(counter.last(), Some(102));
    counter.acknowledge(103).expect("window");
    assert_eq!(counter.last(), Some(103));
    assert_eq!(AcknowledgedCounter::new(0).last(), None);
}

#[test]
fn acknowledged_counter_refuses_a_full_window() {
    let counter = AcknowledgedCounter::new(0);
    counter
        .acknowledge(ACKNOWLEDGE_WINDOW + 5)
        .expect("first in its slot");
    let error = counter.acknowledge(5).expect_err("slot taken");
    assert_eq!(
        error,
        AcknowledgeError {
            value: 5,
            window: ACKNOWLEDGE_WINDOW
        }
    );
    assert!(error.to_string().contains("too many unacknowledged"));
}

/// As YCSB's AcknowledgedCounterGeneratorTest, with threads: every value taken is
/// acknowledged, in whatever order the threads finish, and the limit ends at the last.
#[test]
fn acknowledged_counter_is_shared_by_threads() {
    let counter = Arc::new(AcknowledgedCounter::new(1000));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    let key = counter.next();
                    counter.acknowledge(key).expect("window");
                    assert!(counter.last().expect("latest") < 1000 + 80_000);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("worker");
    }
    // A mark left while another thread held the mover is collected by the next
    // acknowledgement; YCSB has the same lag. Taking and acknowledging one more collects
    // any that are left.
    let key = counter.next();
    counter.acknowledge(key).expect("window");
    assert_eq!(counter.last(), Some(1000 + 80_000));
}

#[test]
fn discrete_picks_by_weight_in_order() {
    let discrete = Discrete::new([(3.0, 'a'), (0.0, 'z'), (1.0, 'b')]).expect("weights");
    let mut rng = rng(11);
    let draws = 100_000;
    let a = (0..draws)
        .filter(|_| discrete.next(&mut rng) == 'a')
        .count();
    assert!((a as f64 / draws as f64 - 0.75).abs() < 0.005);
    assert!((0..1000).all(|_| discrete.next(&mut rng) != 'z'));
    assert!(Discrete::new([(0.0, 'a'), (-1.0, 'b'), (f64::NAN, 'c')]).is_none());
}
