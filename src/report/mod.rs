//! The report stage: everything people read. Reports take a `RunRecord` and nothing else.

pub mod progress;
pub mod sysbench;
pub mod text;

/// Statistics over a handful of repeats (the order-statistic median: the middle value, or
/// the mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    })
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
