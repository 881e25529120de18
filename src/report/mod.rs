//! The report stage: everything people read. Reports take a `RunRecord` and nothing else.

pub mod compare;
pub mod export;
pub mod groups;
pub mod html;
pub mod stats;
pub mod sysbench;
pub mod text;

/// The median of a handful of repeats (the middle value, or the mean of the two middle
/// values for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    stats::median(values)
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(super::median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(super::median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(super::median(&[]), None);
    }
}
