//! Load shapes: k6's `stages` as enginebench reads them, steps and linear ramps of a
//! target (connections, or the offered rate of a group with a rate) laid end to end from
//! the start of a cell's measured phase. Owns parsing a shape and the target at each
//! moment; must not know how a driver follows it.

use std::time::Duration;

/// One stage of a load shape: from `from` to `to` over `duration`, linearly (a step when
/// they are equal). The target is connections, or events/s for a group with a rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub from: f64,
    pub to: f64,
}

/// A group's stages, laid end to end from the start of the measured phase; after the last,
/// its target holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stages(pub Vec<Stage>);

impl Stages {
    /// Parses `DURATION:TARGET` (held) or `DURATION:FROM..TO` (a ramp), comma-separated:
    /// "10s:2,10s:8,10s:16" or "30s:0..2000,1m:2000".
    pub fn parse(text: &str) -> Result<Stages, String> {
        let mut stages = Vec::new();
        for part in text
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
        {
            let (duration, target) = part.split_once(':').ok_or_else(|| {
                format!("stage '{part}' is not DURATION:TARGET or DURATION:FROM..TO (e.g. 10s:8 or 30s:0..2000)")
            })?;
            let duration = crate::units::parse_duration(duration.trim())
                .map_err(|err| format!("stage '{part}': {err}"))?;
            let number = |text: &str| {
                let text = text.trim().trim_end_matches("/s");
                text.parse::<f64>()
                    .ok()
                    .filter(|value| value.is_finite() && *value >= 0.0)
                    .ok_or_else(|| {
                        format!("stage '{part}': '{text}' is not a target (connections, or events per second with a rate)")
                    })
            };
            let (from, to) = match target.split_once("..") {
                Some((from, to)) => (number(from)?, number(to)?),
                None => {
                    let value = number(target)?;
                    (value, value)
                }
            };
            stages.push(Stage { duration, from, to });
        }
        if stages.is_empty() {
            return Err("no stages given: e.g. --stages 10s:2,10s:8,10s:16".into());
        }
        Ok(Stages(stages))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// All stages' length.
    pub fn total(&self) -> Duration {
        self.0.iter().map(|stage| stage.duration).sum()
    }

    /// The highest target any stage reaches: the connections a staged group opens.
    pub fn peak(&self) -> f64 {
        self.0
            .iter()
            .flat_map(|stage| [stage.from, stage.to])
            .fold(0.0, f64::max)
    }

    /// The target `elapsed_s` into the measured phase.
    pub fn target_at(&self, elapsed_s: f64) -> f64 {
        let mut start_s = 0.0;
        for stage in &self.0 {
            let length_s = stage.duration.as_secs_f64();
            if elapsed_s < start_s + length_s {
                let share = ((elapsed_s - start_s) / length_s.max(1e-9)).clamp(0.0, 1.0);
                return stage.from + (stage.to - stage.from) * share;
            }
            start_s += length_s;
        }
        self.0.last().map_or(0.0, |stage| stage.to)
    }

    /// Each stage's bounds, in seconds from the start of the measured phase.
    pub fn bounds_s(&self) -> Vec<(f64, f64)> {
        let mut start_s = 0.0;
        self.0
            .iter()
            .map(|stage| {
                let end_s = start_s + stage.duration.as_secs_f64();
                let bounds = (start_s, end_s);
                start_s = end_s;
                bounds
            })
            .collect()
    }

    /// Whether connection `index` (0-based, within its group) takes part `elapsed_s` in:
    /// while the target is above it (a target of 2.5 runs connections 0 and 1).
    pub fn connection_active(&self, index: usize, elapsed_s: f64) -> bool {
        (index + 1) as f64 <= self.target_at(elapsed_s) + 1e-9
    }
}

/// A stage's target in words: "8 conn." held, "0 → 2000/s" ramped (`of_rate`: the target
/// is an offered rate).
pub fn target_words(from: f64, to: f64, of_rate: bool) -> String {
    let unit = if of_rate { "/s" } else { " conn." };
    if (from - to).abs() < 1e-9 {
        format!("{to:.0}{unit}")
    } else {
        format!("{from:.0} → {to:.0}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_ramps_give_the_target_at_each_moment() {
        let stages = Stages::parse("2s:2, 2s:8, 2s:0..16").unwrap();
        assert_eq!(stages.total(), Duration::from_secs(6));
        assert_eq!(stages.peak(), 16.0);
        assert_eq!(stages.target_at(0.5), 2.0);
        assert_eq!(stages.target_at(3.9), 8.0);
        assert!((stages.target_at(5.0) - 8.0).abs() < 1e-9);
        assert_eq!(stages.target_at(60.0), 16.0);
        assert!(stages.connection_active(1, 0.1));
        assert!(!stages.connection_active(2, 0.1));
        assert!(stages.connection_active(7, 2.1));
        assert!(!stages.connection_active(8, 2.1));
        assert_eq!(stages.bounds_s(), vec![(0.0, 2.0), (2.0, 4.0), (4.0, 6.0)]);
    }

    #[test]
    fn a_stage_that_is_not_one_says_what_is_expected() {
        for bad in ["", "10s", "ten:2", "10s:x", "10s:1..", "10s:-3"] {
            let err = Stages::parse(bad).unwrap_err();
            assert!(
                err.contains("stage") || err.contains("stages"),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            Stages::parse("1m:500/s..2000/s").unwrap().0[0],
            Stage {
                duration: Duration::from_secs(60),
                from: 500.0,
                to: 2000.0
            }
        );
    }
}
