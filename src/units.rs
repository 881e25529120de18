//! Typed command-line values: durations ("10s", "500ms", "60"), counts ("1M", "100k",
//! "1,000,000") and lists ("1,5,20,50"). Kept apart from clap so scenario files (later)
//! can share the same spellings.

use std::time::Duration;

/// 20000 → "20,000"; 10.4 → "10".
pub fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Parses a duration the way sysbench users write it: a bare number means seconds
/// (`--time=60`), otherwise humantime's units (`10s`, `1m30s`, `250ms`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if let Ok(seconds) = trimmed.parse::<f64>() {
        // try_from: `1e20` seconds (beyond Duration's 584 billion years) panicked in
        // from_secs_f64.
        return match Duration::try_from_secs_f64(seconds) {
            Ok(duration) => Ok(duration),
            Err(_) if seconds.is_finite() && seconds > 0.0 => Err(format!(
                "'{text}' seconds is longer than any run can last: use e.g. 10s, 500ms, 2m"
            )),
            Err(_) => Err(format!(
                "'{text}' is not a duration: use e.g. 10s, 500ms, 2m"
            )),
        };
    }
    humantime::parse_duration(trimmed)
        .map_err(|_| format!("'{text}' is not a duration: use e.g. 10s, 500ms, 2m"))
}

/// Parses a count with optional thousands separators (`,` or `_`) and an optional
/// decimal suffix k/M/G (powers of 1000, as row counts are usually spoken).
pub fn parse_count(text: &str) -> Result<u64, String> {
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_')
        .collect();
    let (digits, multiplier) = match cleaned.chars().last() {
        Some('k' | 'K') => (&cleaned[..cleaned.len() - 1], 1_000u64),
        Some('m' | 'M') => (&cleaned[..cleaned.len() - 1], 1_000_000),
        Some('g' | 'G') => (&cleaned[..cleaned.len() - 1], 1_000_000_000),
        _ => (cleaned.as_str(), 1),
    };
    let bad = || format!("'{text}' is not a count: use e.g. 1000, 100k, 1M, 1,000,000");
    if digits.contains('.') {
        let value: f64 = digits.parse().map_err(|_| bad())?;
        let scaled = value * multiplier as f64;
        // `as u64` would make 1e30 into u64::MAX without a word: 2^64 and beyond are refused.
        if !(scaled >= 0.0 && scaled < u64::MAX as f64 && scaled.fract() == 0.0) {
            return Err(bad());
        }
        return Ok(scaled as u64);
    }
    let value: u64 = digits.parse().map_err(|_| bad())?;
    value.checked_mul(multiplier).ok_or_else(bad)
}

/// Parses one thread count (clap splits "1,5,20,50" at the commas).
pub fn parse_thread_count(text: &str) -> Result<u32, String> {
    let count = parse_count(text)?;
    if count == 0 || count > 100_000 {
        return Err(format!(
            "thread count {} is out of range 1..=100000",
            text.trim()
        ));
    }
    Ok(count as u32)
}

/// Splits "key=value" (for --server-opt), normalising '-' to '_' in the key so that
/// `innodb-buffer-pool-size` and `innodb_buffer_pool_size` are one variable.
pub fn parse_key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().replace('-', "_"), value.trim().to_string()))
        }
        _ => Err(format!(
            "'{text}' is not NAME=VALUE: use e.g. --server-opt innodb_buffer_pool_size=1G"
        )),
    }
}

/// `on`/`off` (sysbench's spelling), `true`/`false`, `yes`/`no`, `1`/`0`.
pub fn parse_switch(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{text}' is not on or off")),
    }
}

/// Events per second, above 0.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a rate: give events per second, e.g. 5000"
        )),
    }
}

/// A tolerance in per cent, "5" or "5%": from 0 (any difference the interval shows is a
/// lead) to below 100.
pub fn parse_tolerance_pct(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(pct) if (0.0..100.0).contains(&pct) => Ok(pct),
        _ => Err(format!(
            "'{text}' is not a tolerance: give a per cent from 0 to below 100, e.g. 5"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tolerance_is_a_per_cent_below_100() {
        assert_eq!(parse_tolerance_pct("5"), Ok(5.0));
        assert_eq!(parse_tolerance_pct("2.5%"), Ok(2.5));
        assert_eq!(parse_tolerance_pct("0"), Ok(0.0));
        assert!(parse_tolerance_pct("100").is_err());
        assert!(parse_tolerance_pct("-1").is_err());
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(20000.0), "20,000");
        assert_eq!(thousands(10.4), "10");
        assert_eq!(thousands(1234567.0), "1,234,567");
    }

    #[test]
    fn durations_accept_bare_seconds_and_units() {
        assert_eq!(parse_duration("60").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-3").is_err());
        assert!(parse_duration("NaN").is_err() && parse_duration("inf").is_err());
        // It panicked: beyond what a Duration holds.
        assert!(parse_duration("1E20")
            .unwrap_err()
            .contains("longer than any run can last"));
    }

    #[test]
    fn counts_accept_suffixes_and_separators() {
        assert_eq!(parse_count("1M").unwrap(), 1_000_000);
        assert_eq!(parse_count("100k").unwrap(), 100_000);
        assert_eq!(parse_count("1,000,000").unwrap(), 1_000_000);
        assert_eq!(parse_count("2_500").unwrap(), 2_500);
        assert_eq!(parse_count("1.5k").unwrap(), 1_500);
        assert!(parse_count("1.2345k").is_err());
        assert!(parse_count("lots").is_err());
        assert!(parse_count("99999999999999999999").is_err());
        assert!(parse_count("99999999999999999999.0").is_err());
    }

    #[test]
    fn thread_counts_reject_zero_and_huge() {
        assert_eq!(parse_thread_count(" 4 ").unwrap(), 4);
        assert_eq!(parse_thread_count("1k").unwrap(), 1000);
        assert!(parse_thread_count("0").is_err());
        assert!(parse_thread_count("1M").is_err());
    }

    #[test]
    fn key_values_normalise_dashes() {
        assert_eq!(
            parse_key_value("innodb-buffer-pool-size=1G").unwrap(),
            ("innodb_buffer_pool_size".into(), "1G".into())
        );
        assert!(parse_key_value("=3").is_err());
        assert!(parse_key_value("novalue").is_err());
    }
}
