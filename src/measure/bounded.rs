//! A series that keeps at most a fixed number of entries however long a cell runs: past
//! the bound, neighbours are merged in pairs and later entries stand for twice as many
//! measured intervals, so that the client's memory stays flat through a run of hours.
//! Owns only the merging schedule; how two entries merge is the entry type's (`Merge`),
//! and it must not know what an entry measures.
//!
//! The schedule depends on nothing but the number of entries pushed, so two series fed
//! the same number of entries (the driver's intervals and the sampler's counters) stay
//! aligned entry for entry.

/// An entry that can absorb the one measured right after it.
pub trait Merge {
    fn merge(&mut self, later: Self);
}

/// The most entries a cell keeps while it runs (even, so that pairs merge evenly): over
/// 16 minutes at the default 1-s interval before any merging.
pub const MAX_ENTRIES_KEPT: usize = 1000;

/// At most `most` entries, each standing for `factor` pushes (the last one for fewer).
#[derive(Debug, Clone)]
pub struct Bounded<T> {
    kept: Vec<T>,
    /// The entry being filled, and how many pushes it holds.
    pending: Option<(T, usize)>,
    factor: usize,
    most: usize,
}

impl<T: Merge> Bounded<T> {
    pub fn new(most: usize) -> Self {
        Bounded {
            kept: Vec::new(),
            pending: None,
            factor: 1,
            most: most.max(2),
        }
    }

    pub fn push(&mut self, item: T) {
        let (entry, count) = match self.pending.take() {
            None => (item, 1),
            Some((mut entry, count)) => {
                entry.merge(item);
                (entry, count + 1)
            }
        };
        if count < self.factor {
            self.pending = Some((entry, count));
            return;
        }
        self.kept.push(entry);
        if self.kept.len() >= self.most {
            self.halve();
        }
    }

    fn halve(&mut self) {
        let mut merged = Vec::with_capacity(self.most / 2 + 1);
        let mut entries = std::mem::take(&mut self.kept).into_iter();
        while let Some(mut first) = entries.next() {
            if let Some(second) = entries.next() {
                first.merge(second);
            }
            merged.push(first);
        }
        self.kept = merged;
        self.factor *= 2;
    }

    /// The latest entry (the one being filled, if any).
    pub fn last(&self) -> Option<&T> {
        self.pending
            .as_ref()
            .map(|(entry, _)| entry)
            .or(self.kept.last())
    }

    /// How many pushes each kept entry stands for.
    pub fn factor(&self) -> usize {
        self.factor
    }

    pub fn into_vec(self) -> Vec<T> {
        let mut entries = self.kept;
        entries.extend(self.pending.map(|(entry, _)| entry));
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes first..=last as a range.
    #[derive(Debug, Clone, PartialEq)]
    struct Span(u32, u32);

    impl Merge for Span {
        fn merge(&mut self, later: Self) {
            assert_eq!(self.1 + 1, later.0, "only neighbours merge");
            self.1 = later.1;
        }
    }

    #[test]
    fn under_the_bound_nothing_merges() {
        let mut series = Bounded::new(4);
        for i in 0..3 {
            series.push(Span(i, i));
        }
        assert_eq!(series.factor(), 1);
        assert_eq!(series.into_vec(), [Span(0, 0), Span(1, 1), Span(2, 2)]);
    }

    #[test]
    fn past_the_bound_neighbours_merge_in_pairs_and_stay_in_order() {
        let mut series = Bounded::new(4);
        for i in 0..11 {
            series.push(Span(i, i));
            assert!(series.kept.len() < 4);
        }
        // 4 pushed: merged to 2 of 2; then 2 more of 2 make 4: merged to 2 of 4; then
        // pushes 8..10 fill one of 4 partly.
        assert_eq!(series.factor(), 4);
        assert_eq!(series.last(), Some(&Span(8, 10)));
        assert_eq!(series.into_vec(), [Span(0, 3), Span(4, 7), Span(8, 10)]);
    }

    #[test]
    fn two_series_fed_alike_stay_aligned() {
        let (mut a, mut b) = (
            Bounded::new(MAX_ENTRIES_KEPT),
            Bounded::new(MAX_ENTRIES_KEPT),
        );
        for i in 0..7_321 {
            a.push(Span(i, i));
            b.push(Span(i, i));
        }
        let (a, b) = (a.into_vec(), b.into_vec());
        assert!(a.len() <= MAX_ENTRIES_KEPT);
        assert_eq!(a, b);
        assert_eq!(a.last().map(|s| s.1), Some(7_320));
    }
}
