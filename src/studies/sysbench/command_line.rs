//! sysbench's own command line, read as sysbench reads it (`--db-driver=mysql
//! --mysql-host=… --threads=4 --time=60 oltp_read_write run`): `--name=value` options,
//! sysbench's taken out and checked (threads, time, events, rate, report interval,
//! percentile, histogram, seed, the server and its TLS), the rest left for the script,
//! then the script and its command. `enginebench sysbench` (`command.rs`) does what it
//! says.
//!
//! Owns: reading and checking sysbench's command line. Must not run anything nor know
//! how scripts run (studies::lua).

use anyhow::bail;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::studies::Said;
use crate::server::Dsn;
use crate::studies::lua::script::{GlobalOptions, OptionValue, Settings};

/// `enginebench sysbench`'s arguments, read: sysbench's options, the script's, the script
/// and its command.
pub struct Invocation {
    pub globals: Globals,
    /// The script's own options, `--name=value` by name (`-` read as `_`), and each as
    /// it was given (for sysbench's "invalid option: --name=value").
    pub options: BTreeMap<String, String>,
    pub given: BTreeMap<String, String>,
    /// A path or a name on sysbench's path; None (or "-"): the script on standard input.
    pub script: Option<String>,
    /// None: the script is only loaded (its main chunk run), as sysbench does.
    pub command: Option<String>,
}

/// What the command line asks for.
pub enum Asked {
    /// `--help`: sysbench's usage.
    Help,
    /// `--version`.
    Version,
    Script(Box<Invocation>),
}

/// `args` read as sysbench reads its command line, refused in sysbench's words
/// ([`Said`]) where sysbench has some.
pub fn read(args: &[String]) -> anyhow::Result<Asked> {
    let mut line = read_line(args)?;
    // sysbench answers --help and --version before it checks any value.
    let flag = |name: &str| {
        line.options
            .get(name)
            .is_some_and(|value| !matches!(value.as_str(), "off" | "false" | "0"))
    };
    if flag("help") {
        return Ok(Asked::Help);
    }
    if flag("version") {
        return Ok(Asked::Version);
    }
    let mut globals = take_globals(&mut line.options)?;
    globals.global.argv = args.to_vec();
    let mut positional = line.positional.into_iter();
    let script = positional.next().filter(|name| name != "-");
    let given = line
        .given
        .into_iter()
        .filter(|(name, _)| line.options.contains_key(name))
        .collect();
    Ok(Asked::Script(Box::new(Invocation {
        globals,
        options: line.options,
        given,
        script,
        command: positional.next(),
    })))
}

/// sysbench's command line, read.
#[derive(Debug, Default)]
struct SysbenchLine {
    /// `--name=value` by name (`-` read as `_`), sysbench's and the script's alike.
    options: BTreeMap<String, String>,
    /// Each option as it was written, by name.
    given: BTreeMap<String, String>,
    /// The script (a path or a name on sysbench's path), then the command.
    positional: Vec<String>,
}

fn read_line(args: &[String]) -> anyhow::Result<SysbenchLine> {
    let mut line = SysbenchLine::default();
    for arg in args {
        if let Some(flag) = arg.strip_prefix("--") {
            let (name, value) = flag.split_once('=').unwrap_or((flag, "on"));
            let name = Settings::option_name(name);
            line.options.insert(name.clone(), value.to_string());
            line.given.insert(name, arg.clone());
        } else if line.positional.len() < 2 {
            line.positional.push(arg.clone());
        } else {
            return Err(Said::stderr(format!("Unrecognized command line argument: {arg}")).into());
        }
    }
    Ok(line)
}

/// sysbench's own options, taken out of `options` (what remains is the script's).
pub struct Globals {
    pub global: GlobalOptions,
    pub warmup: Option<Duration>,
    pub percentile: f64,
    /// `--histogram`: sysbench's latency histogram before the report.
    pub histogram: bool,
    /// `--verbose` (enginebench's own): its lines on stderr; without it, none.
    pub verbose: bool,
    /// sysbench's warnings of deprecated options, printed before its header.
    pub warnings: Vec<String>,
    password: Option<String>,
    port: u16,
    db_driver: String,
    tls: crate::server::TlsOptions,
}

/// sysbench's words for an option's value its parser cannot read as the option's type
/// (the option named as it stores it, with underscores), on stderr, exit 1.
fn not_a_number(name: &str, value: &str) -> anyhow::Error {
    Said {
        stdout: String::new(),
        stderr: format!("Invalid value for the '{name}' option: '{value}'\n"),
        exit_code: 1,
    }
    .into()
}

/// A number, or sysbench's words for one that is not.
fn number<T: std::str::FromStr>(name: &str, value: &str) -> anyhow::Result<T> {
    value.parse().map_err(|_| not_a_number(name, value))
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
/// What a number of seconds may be, in words.
const SECONDS_WORDS: &str = "seconds, 0 or more (e.g. 60)";

/// sysbench's own options taken out of `options` in its --help order, each read as
/// sysbench reads it (its words for a value it refuses); what remains is the script's.
fn take_globals(options: &mut BTreeMap<String, String>) -> anyhow::Result<Globals> {
    let mut global = GlobalOptions::default();
    let warnings = take_renamed(options);
    take_limits(options, &mut global)?;
    let percentile = match options.remove("percentile") {
        Some(value) => within(
            "percentile",
            &value,
            0.0..=100.0,
            "a percentile, 1 to 100 (0: none)",
        )?,
        None => 95.0,
    };
    global.percentile = percentile;
    let histogram = match options.remove("histogram") {
        Some(value) => matches!(
            OptionValue::parse_like(&OptionValue::Bool(false), "histogram", &value)?,
            OptionValue::Bool(true)
        ),
        None => false,
    };
    if histogram && percentile == 0.0 {
        bail!("--histogram cannot be used with --percentile=0");
    }
    if let Some(value) = options.remove("rand_seed") {
        global.rand_seed = number("rand_seed", &value)?;
    }
    let (port, password) = take_mysql(options, &mut global)?;
    let warmup = match options.remove("warmup_time") {
        Some(value) => Some(Duration::from_secs_f64(within(
            "warmup_time",
            &value,
            SECONDS,
            SECONDS_WORDS,
        )?)),
        None => None,
    };
    let tls = take_tls(options)?;
    let db_driver = options
        .remove("db_driver")
        .unwrap_or_else(|| "mysql".into());
    // sysbench takes `--test=NAME` (deprecated) for the script.
    options.remove("test");
    let verbose = options
        .remove("verbose")
        .is_some_and(|value| !matches!(value.as_str(), "off" | "0"));
    global.verbosity = verbosity(options.remove("verbosity"))?;
    // --debug sets the log to debug, as sysbench's does.
    if options
        .remove("debug")
        .is_some_and(|value| matches!(value.as_str(), "on" | "true" | "1"))
    {
        global.verbosity = level::DEBUG;
    }
    global.db_driver = db_driver.clone();
    // Accepted as sysbench accepts them; enginebench's own behaviour covers them.
    for ignored in ["forced_shutdown", "luajit_cmd"] {
        options.remove(ignored);
    }
    Ok(Globals {
        global,
        warmup,
        percentile,
        histogram,
        verbose,
        warnings,
        password,
        port,
        db_driver,
        tls,
    })
}

/// sysbench 0.5's names, which 1.0.20 still reads when they are above 0 (--num-threads
/// above 1), moved to their new names in `options`; a warning each.
fn take_renamed(options: &mut BTreeMap<String, String>) -> Vec<String> {
    let mut warnings = Vec::new();
    for (old, new) in [
        ("num_threads", "threads"),
        ("max_requests", "events"),
        ("max_time", "time"),
        ("tx_rate", "rate"),
    ] {
        if let Some(value) = options.remove(old) {
            let floor = if old == "num_threads" { 1.0 } else { 0.0 };
            if value.parse::<f64>().is_ok_and(|n| n > floor) {
                warnings.push(format!(
                    "WARNING: --{} is deprecated, use --{new} instead",
                    old.replace('_', "-")
                ));
                options.insert(new.to_string(), value);
            }
        }
    }
    warnings
}

/// The run's shape and bounds: --threads, --time, --events, --rate, --report-interval.
fn take_limits(
    options: &mut BTreeMap<String, String>,
    global: &mut GlobalOptions,
) -> anyhow::Result<()> {
    if let Some(value) = options.remove("threads") {
        // sysbench reads an int, then keeps the count unsigned: 0 is refused in its words,
        // and -N is 2^32-N threads, whose contexts it cannot allocate (its own line).
        let refused = |line: String| -> anyhow::Error {
            Said {
                stdout: format!("FATAL: {line}\n\n"),
                stderr: String::new(),
                exit_code: 1,
            }
            .into()
        };
        global.threads = match value.parse::<i32>() {
            Ok(threads) if threads > 0 => threads as u32,
            // Not an int at all: sysbench's option parser refuses it.
            Err(_) => return Err(not_a_number("threads", &value)),
            Ok(0) => return Err(refused("Invalid value for --threads: 0.".into())),
            Ok(_) => return Err(refused("Memory allocation failure.".into())),
        };
    }
    if let Some(value) = options.remove("time") {
        global.time = within("time", &value, SECONDS, SECONDS_WORDS)?;
    }
    if let Some(value) = options.remove("events") {
        global.events = within(
            "events",
            &value,
            0.0..=1.8e19,
            "a count of events, 0 or more",
        )?;
    }
    if let Some(value) = options.remove("rate") {
        global.rate = within(
            "rate",
            &value,
            0.0..=f64::MAX,
            "events per second, 0 or more (0: as fast as it goes)",
        )?;
    }
    if let Some(value) = options.remove("report_interval") {
        global.report_interval = within("report_interval", &value, SECONDS, SECONDS_WORDS)?;
    }
    Ok(())
}

/// Where and as whom the scripts connect: --mysql-host, -port, -socket, -user, -db and
/// -password; the port and the password back.
fn take_mysql(
    options: &mut BTreeMap<String, String>,
    global: &mut GlobalOptions,
) -> anyhow::Result<(u16, Option<String>)> {
    if let Some(value) = options.remove("mysql_host") {
        global.mysql_host = value;
    }
    let port = match options.remove("mysql_port") {
        Some(value) => number("mysql_port", &value)?,
        None => 3306,
    };
    global.mysql_port = f64::from(port);
    if let Some(value) = options.remove("mysql_socket") {
        global.mysql_socket = value;
    }
    if let Some(value) = options.remove("mysql_user") {
        global.mysql_user = value;
    }
    if let Some(value) = options.remove("mysql_db") {
        global.mysql_db = value;
    }
    // A password on the command line was moved out of the process title into the
    // environment (`cli::hide_dsn_password`).
    let password = options
        .remove("mysql_password")
        .filter(|password| !password.is_empty())
        .or_else(|| std::env::var(crate::server::PASSWORD_ENV).ok());
    Ok((port, password))
}

/// sysbench 1.0's --mysql-ssl=on, or 1.1's modes and its --mysql-ssl-ca/-cert/-key
/// (1.0 read cacert.pem, client-cert.pem and client-key.pem from the working directory).
fn take_tls(options: &mut BTreeMap<String, String>) -> anyhow::Result<crate::server::TlsOptions> {
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
        if let Some(value) = options.remove(option) {
            tls.set(name, &value)
                .map_err(|err| anyhow::anyhow!("--{}: {err}", option.replace('_', "-")))?;
        }
    }
    tls.check().map_err(|err| anyhow::anyhow!(err))?;
    Ok(tls)
}

/// sysbench's log levels: what it prints at each `--verbosity` (a message is printed when
/// its level is at most the verbosity). FATAL lines and what scripts print come always.
pub mod level {
    /// Warnings (a deprecated option's comes before the log starts: always).
    pub const WARNING: u8 = 2;
    /// The header, the run's opening lines, interval lines and the report.
    pub const NOTICE: u8 = 3;
    /// "Event limit exceeded, exiting...", "Done.".
    pub const INFO: u8 = 4;
    /// "DEBUG: Worker thread (#0) started" and the like.
    pub const DEBUG: u8 = 5;
}

/// `--verbosity=N` read as sysbench reads it: an integer (else its complaint on stderr),
/// kept as its `unsigned char` (so -1 is 255), at most 5 (else its complaint on stdout).
fn verbosity(value: Option<String>) -> anyhow::Result<u8> {
    let Some(value) = value else {
        return Ok(level::NOTICE);
    };
    let number: i32 = value.parse().map_err(|_| {
        Said::stderr(format!(
            "Invalid value for the 'verbosity' option: '{value}'"
        ))
    })?;
    let kept = number as u8;
    if kept > level::DEBUG {
        return Err(Said {
            stdout: format!("Invalid value for verbosity: {kept}\n"),
            stderr: String::new(),
            exit_code: 1,
        }
        .into());
    }
    Ok(kept)
}

impl Globals {
    /// Whether sysbench prints a message of `level` at this `--verbosity`.
    pub fn logs(&self, level: u8) -> bool {
        level <= self.global.verbosity
    }

    /// `--time`: how long the run lasts (0: no limit, as sysbench takes it).
    pub fn time_limit(&self) -> Option<Duration> {
        (self.global.time > 0.0).then(|| Duration::from_secs_f64(self.global.time))
    }

    /// How often the run's progress is stored: `--report-interval`, at least a second.
    pub fn store_interval(&self) -> Duration {
        Duration::from_secs_f64(self.global.report_interval.max(1.0))
    }

    /// The server the `--mysql-*` options name: a DSN of its own at each call, so the
    /// command calls it once and hands clones on (they share what PREFERRED TLS learns).
    pub fn dsn(&self) -> Dsn {
        Dsn {
            user: self.global.mysql_user.clone(),
            password: self.password.clone(),
            host: self.global.mysql_host.clone(),
            port: self.port,
            socket: (!self.global.mysql_socket.is_empty())
                .then(|| self.global.mysql_socket.clone()),
            database: Some(self.global.mysql_db.clone()),
            tls: self.tls.clone(),
            preferred_tls: Default::default(),
        }
    }

    /// `--db-driver`: sysbench's name of the driver (enginebench has `mysql` only).
    pub fn db_driver(&self) -> &str {
        &self.db_driver
    }

    /// The run's seed: `--rand-seed`, or the clock's for its 0 (sysbench's default).
    pub fn seed(&self) -> u64 {
        seed_of(self.global.rand_seed)
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
            ("--threads=0", "FATAL: Invalid value for --threads: 0."),
            ("--threads=-1", "FATAL: Memory allocation failure."),
            (
                "--threads=-99999999999",
                "Invalid value for the 'threads' option: '-99999999999'",
            ),
            (
                "--threads=many",
                "Invalid value for the 'threads' option: 'many'",
            ),
            (
                "--report-interval=x",
                "Invalid value for the 'report_interval' option: 'x'",
            ),
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
