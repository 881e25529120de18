//! TPC-C's random values (specification clause 2.1.6 and 4.3.2): NURand with its C
//! constants, customer last names from syllables, alphanumeric and numeric strings of
//! random length, zip codes, and the "ORIGINAL" mark in 10% of item and stock data.

use rand::rngs::SmallRng;
use rand::{Rng, RngCore};

/// The run-time constants C of NURand(A, x, y) for A = 255 (C_LAST), 1023 (C_ID) and 8191
/// (OL_I_ID). The loader's C_LAST constant must differ from the run's by the rule of
/// clause 2.1.6.1; 157 and 223 differ by 66, within 65..=119 and not 96 or 112.
#[derive(Debug, Clone, Copy)]
pub struct NurandConstants {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

/// The constants the loader uses for C_LAST.
pub const LOAD: NurandConstants = NurandConstants {
    c_last: 157,
    c_id: 259,
    ol_i_id: 7911,
};

/// The constants transactions use.
pub const RUN: NurandConstants = NurandConstants {
    c_last: 223,
    c_id: 259,
    ol_i_id: 7911,
};

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
pub fn nurand(rng: &mut SmallRng, a: u32, c: u32, x: u32, y: u32) -> u32 {
    (((rng.gen_range(0..=a) | rng.gen_range(x..=y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): its three digits' syllables.
pub fn last_name(n: u32) -> String {
    let mut name = String::with_capacity(15);
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        name.push_str(SYLLABLES[digit as usize]);
    }
    name
}

/// A customer's last name as the run picks it: NURand(255, 0, 999).
pub fn run_last_name(rng: &mut SmallRng) -> String {
    last_name(nurand(rng, 255, RUN.c_last, 0, 999))
}

/// An a-string: random letters and digits, `min..=max` of them, each equally likely.
pub fn alnum(rng: &mut SmallRng, min: usize, max: usize) -> String {
    const CHARS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let length = rng.gen_range(min..=max);
    picks(rng, length, 6, |pick| CHARS.get(pick).copied())
}

/// An n-string: random digits, `length` of them.
pub fn digits(rng: &mut SmallRng, length: usize) -> String {
    picks(rng, length, 4, |pick| (pick < 10).then(|| b'0' + pick as u8))
}

/// `length` characters, each from `bits` random bits mapped by `pick` (None: drawn again,
/// so that every character stays equally likely). The loader draws a few million of them,
/// so one 64-bit draw serves several characters: a `gen_range` per character was most of
/// a TPC-C load's client time in the test suite's unoptimised build.
fn picks(
    rng: &mut SmallRng,
    length: usize,
    bits: u32,
    pick: impl Fn(usize) -> Option<u8>,
) -> String {
    let mask = (1u64 << bits) - 1;
    let per_draw = 64 / bits;
    let mut text = Vec::with_capacity(length);
    let (mut drawn, mut left) = (0u64, 0);
    while text.len() < length {
        if left == 0 {
            drawn = rng.next_u64();
            left = per_draw;
        }
        if let Some(byte) = pick((drawn & mask) as usize) {
            text.push(byte);
        }
        drawn >>= bits;
        left -= 1;
    }
    String::from_utf8(text).expect("the picks are ASCII")
}

/// A zip code: four random digits and "11111".
pub fn zip(rng: &mut SmallRng) -> String {
    digits(rng, 4) + "11111"
}

/// Item and stock data: 26..=50 characters, 10% holding "ORIGINAL" somewhere.
pub fn data_with_original(rng: &mut SmallRng) -> String {
    let mut data = alnum(rng, 26, 50);
    if rng.gen_range(0..10) == 0 {
        let at = rng.gen_range(0..=data.len() - 8);
        data.replace_range(at..at + 8, "ORIGINAL");
    }
    data
}

/// A fixed-point amount in hundredths as SQL text ("1234.56").
pub fn cents(amount: i64) -> String {
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", amount.abs() / 100, amount.abs() % 100)
}

/// A rate in ten-thousandths as SQL text ("0.1234").
pub fn rate(ten_thousandths: u32) -> String {
    format!("0.{ten_thousandths:04}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn last_names_are_the_specifications_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_prefers_some_values() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut seen = vec![0u32; 1000];
        for _ in 0..100_000 {
            let n = nurand(&mut rng, 255, RUN.c_last, 0, 999);
            seen[n as usize] += 1;
        }
        let most = *seen.iter().max().unwrap();
        let least = *seen.iter().min().unwrap();
        // Non-uniform: the most drawn value comes several times as often as the least.
        assert!(most > 3 * least.max(1), "{most} vs {least}");
    }

    #[test]
    fn amounts_and_data_have_their_shapes() {
        assert_eq!(cents(123456), "1234.56");
        assert_eq!(cents(-1000), "-10.00");
        assert_eq!(rate(5), "0.0005");
        let mut rng = SmallRng::seed_from_u64(1);
        let originals = (0..2000)
            .filter(|_| {
                let data = data_with_original(&mut rng);
                assert!((26..=50).contains(&data.len()));
                data.contains("ORIGINAL")
            })
            .count();
        assert!((100..300).contains(&originals), "{originals}");
    }

    #[test]
    fn a_strings_use_every_letter_and_digit_and_n_strings_only_digits() {
        let mut rng = SmallRng::seed_from_u64(2);
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..2000 {
            let text = alnum(&mut rng, 10, 20);
            assert!((10..=20).contains(&text.len()), "{text}");
            for c in text.chars() {
                assert!(c.is_ascii_alphanumeric(), "{text}");
                *seen.entry(c).or_insert(0u32) += 1;
            }
            let number = digits(&mut rng, 16);
            assert_eq!(number.len(), 16);
            assert!(number.chars().all(|c| c.is_ascii_digit()), "{number}");
        }
        // 30,000 characters over 62: each about 480 times; none missing or far off.
        assert_eq!(seen.len(), 62, "{seen:?}");
        assert!(seen.values().all(|n| (300..700).contains(n)), "{seen:?}");
    }
}
