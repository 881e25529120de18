//! ibench's rows as iibench.py's `generate_cols` draws them: a cash register of 1,000, a
//! product of 10,000, a customer of 100,000, a price under 500, and `data` of 10 to 20
//! characters (iq.sh's `data_length_min=10`, `data_length_max=20`) of which
//! `int(length × 0.75 × 50%)` are random base64 and the rest `a`s (`data_random_pct=50`);
//! `dateandtime` is the time of the INSERT, the same for all its rows.
//!
//! Owns: the values of an inserted row. Must not know SQL or how rows are sent.

use rand::Rng;

/// iibench.py's defaults.
pub const CASH_REGISTERS: i64 = 1_000;
pub const PRODUCTS: i64 = 10_000;
pub const CUSTOMERS: i64 = 100_000;
pub const MAX_PRICE: i64 = 500;
/// iq.sh's data lengths.
pub const DATA_LENGTH_MIN: usize = 10;
pub const DATA_LENGTH_MAX: usize = 20;
/// iibench.py's `data_random_pct`.
const DATA_RANDOM_PCT: f64 = 50.0;

const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// One row's values, reused from INSERT to INSERT.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub cashregisterid: i64,
    pub customerid: i64,
    pub productid: i64,
    pub price: i64,
    pub data: String,
}

impl Row {
    /// New values, as `generate_cols` draws them.
    pub fn draw(&mut self, rng: &mut impl Rng) {
        self.cashregisterid = rng.gen_range(0..CASH_REGISTERS);
        self.productid = rng.gen_range(0..PRODUCTS);
        self.customerid = rng.gen_range(0..CUSTOMERS);
        self.price = rng.gen_range(0..MAX_PRICE);
        let length = rng.gen_range(DATA_LENGTH_MIN..=DATA_LENGTH_MAX);
        let random = (length as f64 * 0.75 * (DATA_RANDOM_PCT / 100.0)) as usize;
        self.data.clear();
        self.data.extend(std::iter::repeat_n('a', length - random));
        self.data
            .extend((0..random).map(|_| char::from(BASE64[rng.gen_range(0..BASE64.len())])));
    }
}

/// Now as a DATETIME literal ('YYYY-MM-DD HH:MM:SS', UTC), as iibench.py stamps a batch.
pub fn now_datetime() -> String {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    stamp.trim_end_matches('Z').replacen('T', " ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rows_are_drawn_in_iibenchs_ranges() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut row = Row::default();
        for _ in 0..1000 {
            row.draw(&mut rng);
            assert!((0..CASH_REGISTERS).contains(&row.cashregisterid));
            assert!((0..PRODUCTS).contains(&row.productid));
            assert!((0..CUSTOMERS).contains(&row.customerid));
            assert!((0..MAX_PRICE).contains(&row.price));
            let length = row.data.len();
            assert!(
                (DATA_LENGTH_MIN..=DATA_LENGTH_MAX).contains(&length),
                "{row:?}"
            );
            // int(length × 0.375) random characters after the 'a's.
            let random = length * 3 / 8;
            assert!(
                row.data[..length - random].bytes().all(|b| b == b'a'),
                "{row:?}"
            );
        }
        let stamp = now_datetime();
        assert_eq!(stamp.len(), 19, "{stamp}");
        assert_eq!(&stamp[10..11], " ");
    }
}
