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
        let database = crate::studies::lua::database_driver_created();
        outln!("{}", interval_line(interval, threads, database));
    })
}

/// An interval as sysbench's `--report-interval` prints it; statements are read, write or
/// other by their verb, latency is the events' 95th percentile. `database`: whether the
/// script has created a database driver, which is what chooses sysbench's line (its
/// `db_report_intermediate` falls back to events per second only before `db_init`).
pub fn interval_line(interval: &IntervalMeasurement, threads: u32, database: bool) -> String {
    let seconds = (interval.end_s - interval.start_s).max(1e-9);
    let [reads, writes, other] = tally(
        interval
            .kinds
            .iter()
            .map(|(name, latency, failed)| (name.as_str(), latency.count + failed)),
    );
    let errors: u64 = interval.kinds.iter().map(|(_, _, failed)| failed).sum();
    let per_s = |n: u64| n as f64 / seconds;
    if reads + writes + other == 0 && !database {
        // sysbench's line for a script without a database: events per second, whatever
        // the interval held. Chosen by the driver and not by this interval's counts: one
        // in which no event completed (a machine too loaded to schedule the workers)
        // printed the statements' line in one fresh run of the suite.
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
    fn the_line_is_chosen_by_the_driver_not_by_what_the_interval_held() {
        let point = "SELECT c FROM sbtest1 WHERE id=?".to_string();
        // A script with a database whose interval completed nothing (a stalled server):
        // tps at zero, as sysbench.
        let stalled = interval_line(&interval(vec![], 0), 2, true);
        assert!(
            stalled.starts_with("[ 2s ] thds: 2 tps: 0.00 qps: 0.00"),
            "{stalled}"
        );
        let named = interval_line(
            &interval(vec![(point, LatencySummary::default(), 0)], 0),
            2,
            true,
        );
        assert!(named.contains("tps: 0.00 qps: 0.00"), "{named}");
        // A script without a database: events per second, also when none completed.
        let no_database = interval_line(&interval(vec![], 40), 2, false);
        assert!(
            no_database.starts_with("[ 2s ] thds: 2 eps: 20.00"),
            "{no_database}"
        );
        let starved = interval_line(&interval(vec![], 0), 2, false);
        assert!(
            starved.starts_with("[ 2s ] thds: 2 eps: 0.00 lat"),
            "{starved}"
        );
    }
}
