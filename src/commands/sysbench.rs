//! `enginebench sysbench …`: sysbench's own command line (`--db-driver=mysql
//! --mysql-host=… --threads=4 --time=60 oltp_read_write run`), so a shell script or CI job
//! that runs sysbench changes one word. `prepare`, `cleanup`, `help` and a script's own
//! commands run the script as sysbench would, its output on stdout; `run` runs the cells
//! on the named server (nothing created or dropped), stores the run like any other, and
//! prints sysbench's report.
//!
//! Owns: reading sysbench's command line. Must not know how scripts run (studies::lua).

use anyhow::{bail, Context as _};
use std::collections::BTreeMap;
use std::time::Duration;

use super::Finished;
use crate::engine::Engine;
use crate::report::formats::Format as _;
use crate::runner::RunOutput;
use crate::server::{ConnectionSpec, Dsn, ServerArgsResolved};
use crate::studies::lua::script::{GlobalOptions, OptionValue, Script, Settings};
use crate::studies::lua::{self, LuaParams};
use crate::studies::sysbench::intervals;

/// sysbench's command line, read.
#[derive(Debug, Default)]
struct SysbenchLine {
    /// `--name=value` by name (`-` read as `_`), sysbench's and the script's alike.
    options: BTreeMap<String, String>,
    /// The script (a path or a name on sysbench's path), then the command.
    positional: Vec<String>,
}

fn read_line(args: &[String]) -> anyhow::Result<SysbenchLine> {
    let mut line = SysbenchLine::default();
    for arg in args {
        if let Some(flag) = arg.strip_prefix("--") {
            let (name, value) = flag.split_once('=').unwrap_or((flag, "on"));
            line.options
                .insert(Settings::option_name(name), value.to_string());
        } else {
            line.positional.push(arg.clone());
        }
    }
    if line.positional.len() > 2 {
        bail!(
            "unexpected '{}': sysbench takes [options] SCRIPT COMMAND, with options as --name=value",
            line.positional[2]
        );
    }
    Ok(line)
}

/// sysbench's own options, taken out of `options` (what remains is the script's).
struct Globals {
    global: GlobalOptions,
    warmup: Option<Duration>,
    percentile: f64,
    /// `--histogram`: sysbench's latency histogram before the report.
    histogram: bool,
    password: Option<String>,
    port: u16,
    db_driver: String,
    tls: crate::server::TlsOptions,
}

// Long by design: sysbench's global options, one short take per option, in its --help order.
#[allow(clippy::too_many_lines)]
fn take_globals(options: &mut BTreeMap<String, String>) -> anyhow::Result<Globals> {
    let mut global = GlobalOptions::default();
    let mut take = |name: &str| options.remove(name);
    fn number<T: std::str::FromStr>(name: &str, value: &str) -> anyhow::Result<T> {
        value
            .parse()
            .map_err(|_| anyhow::anyhow!("--{}={value}: a number", name.replace('_', "-")))
    }
    /// A number that must lie in `range` (f64 reads NaN, inf and 1e300 too, which made
    /// Durations panic and counts saturate), `what` saying what it may be.
    fn within(
        name: &str,
        value: &str,
        range: std::ops::RangeInclusive<f64>,
        what: &str,
    ) -> anyhow::Result<f64> {
        let number: f64 = number(name, value)?;
        if !range.contains(&number) {
            bail!("--{}={value}: {what}", name.replace('_', "-"));
        }
        Ok(number)
    }
    /// Seconds a Duration can hold (up to about 584 billion years).
    const SECONDS: std::ops::RangeInclusive<f64> = 0.0..=1.8e19;
    let seconds = "seconds, 0 or more (e.g. 60)";
    if let Some(value) = take("threads") {
        global.threads = number("threads", &value)?;
        if global.threads == 0 {
            bail!("--threads=0: at least 1 thread");
        }
    }
    if let Some(value) = take("time") {
        global.time = within("time", &value, SECONDS, seconds)?;
    }
    if let Some(value) = take("events") {
        global.events = within(
            "events",
            &value,
            0.0..=1.8e19,
            "a count of events, 0 or more",
        )?;
    }
    if let Some(value) = take("rate") {
        global.rate = within(
            "rate",
            &value,
            0.0..=f64::MAX,
            "events per second, 0 or more (0: as fast as it goes)",
        )?;
    }
    if let Some(value) = take("report_interval") {
        global.report_interval = within("report_interval", &value, SECONDS, seconds)?;
    }
    let percentile = match take("percentile") {
        Some(value) => within(
            "percentile",
            &value,
            0.0..=100.0,
            "a percentile, 1 to 100 (0: none)",
        )?,
        None => 95.0,
    };
    global.percentile = percentile;
    let histogram = match take("histogram") {
        Some(value) => matches!(
            OptionValue::parse_like(&OptionValue::Bool(false), "histogram", &value)?,
            OptionValue::Bool(true)
        ),
        None => false,
    };
    if histogram && percentile == 0.0 {
        bail!("--histogram cannot be used with --percentile=0");
    }
    if let Some(value) = take("rand_seed") {
        global.rand_seed = number("rand_seed", &value)?;
    }
    if let Some(value) = take("mysql_host") {
        global.mysql_host = value;
    }
    let port = match take("mysql_port") {
        Some(value) => number("mysql_port", &value)?,
        None => 3306,
    };
    global.mysql_port = f64::from(port);
    if let Some(value) = take("mysql_socket") {
        global.mysql_socket = value;
    }
    if let Some(value) = take("mysql_user") {
        global.mysql_user = value;
    }
    if let Some(value) = take("mysql_db") {
        global.mysql_db = value;
    }
    // A password on the command line was moved out of the process title into the
    // environment (`cli::hide_dsn_password`).
    let password = take("mysql_password")
        .filter(|password| !password.is_empty())
        .or_else(|| std::env::var(crate::server::PASSWORD_ENV).ok());
    let warmup = match take("warmup_time") {
        Some(value) => Some(Duration::from_secs_f64(within(
            "warmup_time",
            &value,
            SECONDS,
            seconds,
        )?)),
        None => None,
    };
    // sysbench 1.0's --mysql-ssl=on, or 1.1's modes and its --mysql-ssl-ca/-cert/-key
    // (1.0 read cacert.pem, client-cert.pem and client-key.pem from the working directory).
    let mut tls = crate::server::TlsOptions {
        words: crate::server::tls::OptionWords::Sysbench,
        ..Default::default()
    };
    for (option, name) in [
        ("mysql_ssl", "ssl-mode"),
        ("mysql_ssl_ca", "ssl-ca"),
        ("mysql_ssl_cert", "ssl-cert"),
        ("mysql_ssl_key", "ssl-key"),
    ] {
        if let Some(value) = take(option) {
            tls.set(name, &value)
                .map_err(|err| anyhow::anyhow!("--{}: {err}", option.replace('_', "-")))?;
        }
    }
    tls.check().map_err(|err| anyhow::anyhow!(err))?;
    let db_driver = take("db_driver").unwrap_or_else(|| "mysql".into());
    // Accepted as sysbench accepts them; enginebench's own behaviour covers them.
    for ignored in ["verbosity", "forced_shutdown", "luajit_cmd"] {
        take(ignored);
    }
    Ok(Globals {
        global,
        warmup,
        percentile,
        histogram,
        password,
        port,
        db_driver,
        tls,
    })
}

impl Globals {
    /// `--time`: how long the run lasts (0: no limit, as sysbench takes it).
    fn time_limit(&self) -> Option<Duration> {
        (self.global.time > 0.0).then(|| Duration::from_secs_f64(self.global.time))
    }

    /// How often the run's progress is stored: `--report-interval`, at least a second.
    fn store_interval(&self) -> Duration {
        Duration::from_secs_f64(self.global.report_interval.max(1.0))
    }
}

pub fn run(args: Vec<String>) -> anyhow::Result<Finished> {
    let mut line = read_line(&args)?;
    let globals = take_globals(&mut line.options)?;
    if globals.db_driver != "mysql" {
        bail!(
            "--db-driver={}: enginebench speaks to MySQL and MariaDB only (--db-driver=mysql)",
            globals.db_driver
        );
    }
    let Some(script_name) = line.positional.first().cloned() else {
        bail!(
            "no script: enginebench sysbench [options] SCRIPT COMMAND (e.g. oltp_read_write run)"
        );
    };
    let command = line
        .positional
        .get(1)
        .cloned()
        .unwrap_or_else(|| "run".into());
    let script = Script::find(&script_name)?;
    let settings = Settings {
        script,
        command: command.clone(),
        given: line.options.clone(),
        global: globals.global.clone(),
        print_to_stderr: false,
    };
    let declared = lua::declarations(&settings)?;
    outln!(
        "sysbench 1.0.20 compatible (enginebench {}, LuaJIT 2.1)\n",
        env!("CARGO_PKG_VERSION")
    );
    let dsn = Dsn {
        user: globals.global.mysql_user.clone(),
        password: globals.password.clone(),
        host: globals.global.mysql_host.clone(),
        port: globals.port,
        socket: (!globals.global.mysql_socket.is_empty())
            .then(|| globals.global.mysql_socket.clone()),
        database: Some(globals.global.mysql_db.clone()),
        tls: globals.tls.clone(),
    };
    match command.as_str() {
        "help" => {
            out!("{}", settings.help(&declared));
            Ok(Finished::Success)
        }
        "run" => run_cells(settings, declared, dsn, &globals),
        other => {
            settings.options(&declared)?;
            let spec = ConnectionSpec::tcp(&dsn, Some(&globals.global.mysql_db));
            lua::run_command(
                &settings,
                &declared,
                other,
                &spec,
                globals.global.threads,
                seed_of(globals.global.rand_seed),
            )?;
            Ok(Finished::Success)
        }
    }
}

/// sysbench's `--rand-seed`: 0 (its default) seeds from the clock.
fn seed_of(rand_seed: u64) -> u64 {
    if rand_seed != 0 {
        return rand_seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |elapsed| elapsed.as_nanos() as u64)
}

/// `run`: the cells on the named server, stored, and sysbench's report printed.
// Long by design: sysbench's run sequence with its own output; moves into the sysbench kind's folder (issue 43).
#[allow(clippy::too_many_lines)]
fn run_cells(
    settings: Settings,
    declared: lua::script::Declared,
    dsn: Dsn,
    globals: &Globals,
) -> anyhow::Result<Finished> {
    settings.options(&declared)?;
    let engine = settings
        .given
        .get("mysql_storage_engine")
        .and_then(|name| name.parse::<Engine>().ok())
        .unwrap_or(Engine::InnoDb);
    let global = &globals.global;
    let study = LuaParams::as_sysbench_runs(settings.clone(), declared.clone());
    // sysbench's run: one cell of its threads on the tables as they are, `engine` only
    // labelling it.
    let matrix = crate::plan::Matrix {
        engines: vec![engine],
        threads: vec![global.threads],
        time: globals.time_limit(),
        events: (global.events > 0.0).then_some(global.events as u64),
        rate: (global.rate > 0.0).then_some(global.rate),
        warmup: globals.warmup,
        seed: seed_of(global.rand_seed),
        ..crate::plan::Matrix::default()
    };
    outln!("Running the test with following options:");
    outln!("Number of threads: {}", global.threads);
    if global.report_interval > 0.0 {
        outln!(
            "Report intermediate results every {} second(s)",
            global.report_interval
        );
    }
    // sysbench connects its workers before it says "Threads started!": a server that
    // cannot be reached is named before that line, as there.
    ConnectionSpec::tcp(&dsn, Some(&global.mysql_db)).connect()?;
    outln!("\nThreads started!\n");
    let plan = crate::plan::Plan::new(std::sync::Arc::new(study), &matrix);
    let server = ServerArgsResolved {
        dsn: Some(dsn),
        more_dsns: Vec::new(),
        routing: Default::default(),
        force: true,
        database: global.mysql_db.clone(),
        options: Default::default(),
    };
    let own_hook = declared
        .report_hooks
        .iter()
        .any(|hook| hook == "report_intermediate");
    // sysbench's interval lines as the run goes, unless the script's own hook prints them
    // (called once the run is over: `call_report_hooks`).
    let lines = global.report_interval > 0.0 && !own_hook;
    let hook_error: std::rc::Rc<std::cell::RefCell<Option<anyhow::Error>>> = Default::default();
    let hook_failed = std::rc::Rc::clone(&hook_error);
    super::pipeline::measure(
        &plan,
        server,
        false,
        || {
            let store =
                std::env::var_os("ENGINEBENCH_DB").unwrap_or_else(|| "enginebench.db".into());
            let interval = globals.store_interval();
            let mut output =
                RunOutput::open(None, false, std::path::Path::new(&store), interval, false)
                    .context("opening the result store (ENGINEBENCH_DB)")?;
            if lines {
                output.interval_hook = Some(intervals::report_interval_lines());
            }
            // A script's own report_intermediate, called as each interval closes, as sysbench
            // calls it (only with --report-interval); its first error stops the calls and fails
            // the command once the run is saved.
            if global.report_interval > 0.0 && own_hook {
                let state = lua::open_plain_state(&settings, &declared)?;
                let (report_interval, percentile) = (global.report_interval, globals.percentile);
                let failed = std::rc::Rc::clone(&hook_failed);
                output.interval_hook = Some(std::rc::Rc::new(
                    move |interval: &crate::measure::IntervalMeasurement, threads: u32| {
                        // As sysbench: whole intervals only, not the run's closing part of one.
                        let span = interval.end_s - interval.start_s;
                        if failed.borrow().is_some() || span < 0.5 * report_interval {
                            return;
                        }
                        let [reads, writes, other] = intervals::tally(
                            interval
                                .kinds
                                .iter()
                                .map(|(name, latency, _)| (name.as_str(), latency.count)),
                        );
                        let errors: u64 = interval.kinds.iter().map(|(_, _, failed)| failed).sum();
                        let called = state.call_hook(
                            "report_intermediate",
                            &[
                                ("time_interval", span),
                                ("time_total", interval.end_s),
                                ("threads_running", f64::from(threads)),
                                ("events", interval.events.count as f64),
                                ("reads", reads as f64),
                                ("writes", writes as f64),
                                ("other", other as f64),
                                ("errors", errors as f64),
                                ("reconnects", 0.0),
                                ("latency_pct", nearest(&interval.events, percentile)),
                            ],
                        );
                        if let Err(err) = called {
                            *failed.borrow_mut() = Some(err);
                        }
                    },
                ));
            }
            Ok(output)
        },
        |outcome, output| {
            if lines {
                outln!();
            }
            if let Some(err) = hook_error.borrow_mut().take() {
                return Err(err);
            }
            let record = match &outcome {
                Ok(record) => Some(record),
                Err((_, record)) => Some(record.as_ref()),
            };
            let cumulative_hook = declared
                .report_hooks
                .iter()
                .any(|hook| hook == "report_cumulative");
            if let Some(cell) = record.and_then(|record| record.cells.first()) {
                if cumulative_hook {
                    call_cumulative_hook(&settings, &declared, cell, globals.percentile)?;
                }
            }
            if globals.histogram {
                let events = record
                    .and_then(|record| record.cells.first())
                    .and_then(|cell| {
                        crate::measure::decode_histogram(&cell.event_histogram_v2).ok()
                    });
                if let Some(events) = events {
                    outln!(
                        "{}",
                        crate::studies::sysbench::format::latency_histogram(&events)
                    );
                }
            }
            // A cumulative hook replaces sysbench's report, as in sysbench.
            let format =
                (!cumulative_hook).then_some(crate::studies::sysbench::format::FORMAT.name());
            super::finish_run_printing(outcome, output, format, globals.percentile)
        },
    )
}

/// The script's `report_cumulative` hook, called with sysbench's statistics of the whole
/// run once it is over (`report_intermediate` is called as the run goes).
fn call_cumulative_hook(
    settings: &Settings,
    declared: &lua::script::Declared,
    cell: &crate::results::CellRecord,
    percentile: f64,
) -> anyhow::Result<()> {
    let state = lua::open_plain_state(settings, declared)?;
    let [reads, writes, other] = intervals::tally(
        cell.queries
            .iter()
            .map(|q| (q.name.as_str(), q.count + q.failed)),
    );
    let seconds = cell.wall_ms / 1000.0;
    let latency = &cell.event_latency_us;
    let latency_pct = crate::measure::decode_histogram(&cell.event_histogram_v2)
        .map(|h| h.value_at_quantile(percentile / 100.0) as f64 / 1e6)
        .unwrap_or_else(|_| nearest(latency, percentile));
    state.call_hook(
        "report_cumulative",
        &[
            ("time_interval", seconds),
            ("time_total", seconds),
            ("threads_running", 0.0),
            ("events", cell.events as f64),
            ("reads", reads as f64),
            ("writes", writes as f64),
            ("other", other as f64),
            ("errors", cell.failed_events as f64),
            ("reconnects", 0.0),
            ("latency_pct", latency_pct),
            ("latency_min", latency.min_us as f64 / 1e6),
            ("latency_max", latency.max_us as f64 / 1e6),
            ("latency_avg", latency.avg_us / 1e6),
            ("latency_sum", latency.avg_us * latency.count as f64 / 1e6),
        ],
    )
}

/// The interval's latency (s) nearest `percentile`: the summaries keep p50, p95 and p99.
fn nearest(latency: &crate::measure::LatencySummary, percentile: f64) -> f64 {
    let us = if percentile >= 99.0 {
        latency.p99_us
    } else if percentile >= 95.0 {
        latency.p95_us
    } else {
        latency.p50_us
    };
    us as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn globals_of(args: &[&str]) -> anyhow::Result<Globals> {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        take_globals(&mut read_line(&args)?.options)
    }

    #[test]
    fn numbers_out_of_range_are_refused_naming_the_option() {
        // Each panicked (a Duration from NaN, inf or 1e30 seconds) or hung on no threads.
        for (arg, says) in [
            ("--time=1e30", "--time=1e30: seconds, 0 or more"),
            ("--time=inf", "--time=inf: seconds"),
            ("--report-interval=NaN", "--report-interval=NaN: seconds"),
            ("--warmup-time=-1", "--warmup-time=-1: seconds"),
            (
                "--percentile=101",
                "--percentile=101: a percentile, 1 to 100",
            ),
            ("--events=-5", "--events=-5: a count of events"),
            ("--rate=inf", "--rate=inf: events per second"),
            ("--threads=0", "--threads=0: at least 1 thread"),
            ("--threads=many", "--threads=many: a number"),
        ] {
            let err = globals_of(&[arg, "oltp_read_write", "run"]).err().unwrap();
            assert!(err.to_string().starts_with(says), "{arg}: {err}");
        }
        let globals = globals_of(&["--time=0", "--report-interval=0.5", "x", "run"]).unwrap();
        assert_eq!(globals.time_limit(), None);
        assert_eq!(globals.store_interval(), Duration::from_secs(1));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// Any command line: refused or read, and what is read makes its Durations.
        #[test]
        fn any_sysbench_line_is_read_or_refused(
            args in prop::collection::vec(
                prop_oneof![
                    any::<String>(),
                    "--(threads|time|events|rate|report-interval|percentile|warmup-time|histogram|rand-seed|mysql-port|mysql-ssl|db-driver)=[-+0-9.eEinfaNx]{0,8}",
                    "[a-z_]{1,12}",
                ],
                0..6,
            )
        ) {
            if let Ok(globals) = read_line(&args).and_then(|mut line| take_globals(&mut line.options)) {
                let _ = globals.time_limit();
                let _ = globals.store_interval();
                prop_assert!(globals.global.threads > 0);
            }
        }
    }
}
