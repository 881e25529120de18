//! sysbench's progress as `enginebench sysbench … run --report-interval=N` prints it: one
//! line per interval on stdout, the runner's [`IntervalHook`](crate::runner::IntervalHook)
//! plug-in; and sysbench's read/write/other counts of statements by their verb, which that
//! line and a script's report hooks are given. Must not know how intervals are measured.

use crate::measure::IntervalMeasurement;
use crate::scenario::StatementClass;

/// sysbench's read, write and other counts of `statements` (SQL or digest, and how
/// many), each classed by its verb.
pub fn tally<'a>(statements: impl IntoIterator<Item = (&'a str, u64)>) -> [u64; 3] {
    let mut counts = [0u64; 3];
    for (sql, count) in statements {
        let index = match StatementClass::of_sql(sql) {
            StatementClass::Read => 0,
            StatementClass::Write => 1,
            _ => 2,
        };
        counts[index] += count;
    }
    counts
}

/// The hook that prints each interval as sysbench's `--report-interval` line on stdout,
/// whatever stderr is.
pub fn report_interval_lines() -> crate::runner::IntervalHook {
    std::rc::Rc::new(|interval: &IntervalMeasurement, threads: u32| {
        outln!("{}", interval_line(interval, threads));
    })
}

/// An interval as sysbench's `--report-interval` prints it; statements are read, write or
/// other by their verb, latency is the events' 95th percentile.
pub fn interval_line(interval: &IntervalMeasurement, threads: u32) -> String {
    let seconds = (interval.end_s - interval.start_s).max(1e-9);
    let [reads, writes, other] = tally(
        interval
            .kinds
            .iter()
            .map(|(name, latency, failed)| (name.as_str(), latency.count + failed)),
    );
    let errors: u64 = interval.kinds.iter().map(|(_, _, failed)| failed).sum();
    let per_s = |n: u64| n as f64 / seconds;
    if reads + writes + other == 0 && interval.events.count > 0 {
        // sysbench's line for a script without a database: events per second. An interval
        // in which nothing completed at all (a server or machine that stalled) is not one:
        // it keeps the statements' line, at zero.
        return format!(
            "[ {:.0}s ] thds: {threads} eps: {:.2} lat (ms,95%): {:.2}",
            interval.end_s,
            per_s(interval.events.count),
            interval.events.p95_us as f64 / 1000.0,
        );
    }
    format!(
        "[ {:.0}s ] thds: {threads} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,95%): {:.2} err/s: {:.2} reconn/s: 0.00",
        interval.end_s,
        per_s(interval.events.count),
        per_s(reads + writes + other),
        per_s(reads),
        per_s(writes),
        per_s(other),
        interval.events.p95_us as f64 / 1000.0,
        per_s(errors),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LatencySummary;

    fn interval(kinds: Vec<(String, LatencySummary, u64)>, events: u64) -> IntervalMeasurement {
        IntervalMeasurement {
            start_s: 0.0,
            end_s: 2.0,
            kinds,
            events: LatencySummary {
                count: events,
                ..LatencySummary::default()
            },
            groups: Vec::new(),
        }
    }

    #[test]
    fn an_interval_in_which_nothing_completed_keeps_the_statements_line() {
        let point = "SELECT c FROM sbtest1 WHERE id=?".to_string();
        // Nothing completed (a stalled server, a starved machine): tps at zero, as sysbench.
        let stalled = interval_line(&interval(vec![], 0), 2);
        assert!(
            stalled.starts_with("[ 2s ] thds: 2 tps: 0.00 qps: 0.00"),
            "{stalled}"
        );
        let named = interval_line(&interval(vec![(point, LatencySummary::default(), 0)], 0), 2);
        assert!(named.contains("tps: 0.00 qps: 0.00"), "{named}");
        // Events and no statement: a script without a database.
        let no_database = interval_line(&interval(vec![], 40), 2);
        assert!(
            no_database.starts_with("[ 2s ] thds: 2 eps: 20.00"),
            "{no_database}"
        );
    }
}
