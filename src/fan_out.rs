//! Work side by side on scoped threads, one per item, the results in the items' order: how
//! a topology's nodes start and a load's tables and key ranges fill at once. It knows
//! nothing of the work: what a panicking thread's result says is the caller's to word.

/// `work` on each of `items`, each on a scoped thread of its own; the results in order, a
/// panicking thread's made by `panicked` from its item's index.
pub fn on_threads<I: Send, R: Send>(
    items: impl IntoIterator<Item = I>,
    work: impl Fn(I) -> R + Sync,
    panicked: impl Fn(usize) -> R,
) -> Vec<R> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| {
                let work = &work;
                scope.spawn(move || work(item))
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(index, handle)| handle.join().unwrap_or_else(|_| panicked(index)))
            .collect()
    })
}
