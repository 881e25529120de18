//! Random text for generated rows, cheap enough that the client is never what limits a
//! load: one 64-bit draw yields 18 decimal digits or 10 alphanumeric characters, instead
//! of one RNG call per character (which made the client cost ~6 µs a sysbench row).

use rand::rngs::SmallRng;
use rand::RngCore;

const ALPHANUMERIC: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Appends `count` uniformly random decimal digits. The low 18 decimal digits of a
/// uniform u64 are uniform to within 1e-18.
pub fn push_digits(rng: &mut SmallRng, count: usize, out: &mut String) {
    let mut pool = 0u64;
    let mut left = 0;
    for _ in 0..count {
        if left == 0 {
            pool = rng.next_u64();
            left = 18;
        }
        out.push(char::from(b'0' + (pool % 10) as u8));
        pool /= 10;
        left -= 1;
    }
}

/// Appends `count` uniformly random characters of [a-zA-Z0-9]: 6 bits at a time, the two
/// values past 61 rejected so every character is equally likely.
pub fn push_alphanumeric(rng: &mut SmallRng, count: usize, out: &mut String) {
    let mut pool = 0u64;
    let mut bits = 0;
    let mut written = 0;
    while written < count {
        if bits < 6 {
            pool = rng.next_u64();
            bits = 64;
        }
        let index = (pool & 63) as usize;
        pool >>= 6;
        bits -= 6;
        if index < ALPHANUMERIC.len() {
            out.push(char::from(ALPHANUMERIC[index]));
            written += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn digits_and_characters_are_roughly_uniform() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut text = String::new();
        push_digits(&mut rng, 100_000, &mut text);
        assert_eq!(text.len(), 100_000);
        for digit in b'0'..=b'9' {
            let count = text.bytes().filter(|b| *b == digit).count();
            assert!(
                (9_000..11_000).contains(&count),
                "digit {} seen {count} times",
                digit as char
            );
        }
        text.clear();
        push_alphanumeric(&mut rng, 62_000, &mut text);
        assert_eq!(text.len(), 62_000);
        for &ch in ALPHANUMERIC.iter() {
            let count = text.bytes().filter(|b| *b == ch).count();
            assert!(
                (800..1200).contains(&count),
                "{} seen {count} times",
                ch as char
            );
        }
    }
}
