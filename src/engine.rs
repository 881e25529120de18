//! The storage engines enginebench knows how to set up, and how each one is spelled in
//! SQL and in SHOW ENGINES.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    MyIsam,
    InnoDb,
    Aria,
    Memory,
    RocksDb,
}

impl Engine {
    pub const ALL: [Engine; 5] = [
        Engine::MyIsam,
        Engine::InnoDb,
        Engine::Aria,
        Engine::Memory,
        Engine::RocksDb,
    ];

    /// The lowercase name users type (`--engines myisam,innodb`).
    pub fn key(self) -> &'static str {
        match self {
            Engine::MyIsam => "myisam",
            Engine::InnoDb => "innodb",
            Engine::Aria => "aria",
            Engine::Memory => "memory",
            Engine::RocksDb => "rocksdb",
        }
    }

    /// The name as `ENGINE=` clauses and SHOW ENGINES spell it.
    pub fn sql_name(self) -> &'static str {
        match self {
            Engine::MyIsam => "MyISAM",
            Engine::InnoDb => "InnoDB",
            Engine::Aria => "Aria",
            Engine::Memory => "MEMORY",
            Engine::RocksDb => "ROCKSDB",
        }
    }

    /// The name shown in tables and reports.
    pub fn display_name(self) -> &'static str {
        match self {
            Engine::RocksDb => "RocksDB",
            other => other.sql_name(),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase();
        Engine::ALL
            .into_iter()
            .find(|engine| {
                engine.key() == wanted || (wanted == "heap" && *engine == Engine::Memory)
            })
            .ok_or_else(|| {
                let known: Vec<&str> = Engine::ALL.iter().map(|e| e.key()).collect();
                format!(
                    "unknown engine '{}' (known: {})",
                    text.trim(),
                    known.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_round_trip_and_unknown_names_list_the_known_ones() {
        for engine in Engine::ALL {
            assert_eq!(engine.key().parse::<Engine>().unwrap(), engine);
            assert_eq!(engine.sql_name().parse::<Engine>().unwrap(), engine);
        }
        assert_eq!(
            "falcon".parse::<Engine>().unwrap_err(),
            "unknown engine 'falcon' (known: myisam, innodb, aria, memory, rocksdb)"
        );
    }
}
