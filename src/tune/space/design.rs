//! The first race's candidates as a Latin hypercube over the space (M. D. McKay, R. J.
//! Beckman, W. J. Conover, Technometrics 21(2), 1979; the initial design SMAC3 uses,
//! `LatinHypercubeInitialDesign`): each variable's domain cut into as many equal strata
//! as there are candidates (on its own scale: by ratio for a log scale), each stratum
//! drawn once, the strata shuffled per variable. Independent uniform draws, with the few
//! candidates a small budget allows, often leave a whole region of a variable unseen (of
//! three values of a buffer pool, three random draws miss one with chance 7/9); the
//! hypercube shows every region once before the races narrow around the elite. Also which
//! drawn configuration is the default itself (the server's own values), so that it is not
//! raced as a candidate. Owns those draws. Must not know how candidates are raced.

use rand::seq::SliceRandom;
use rand::Rng;

use super::{uniform, Domain, Space};

impl Space {
    /// `count` configurations, a Latin hypercube over the space under `memory_bytes`.
    pub fn latin_hypercube(
        &self,
        rng: &mut impl Rng,
        memory_bytes: u64,
        count: usize,
    ) -> Vec<Vec<(String, String)>> {
        let columns: Vec<Vec<String>> = self
            .variables
            .iter()
            .map(|variable| {
                let mut column: Vec<String> = match &variable.domain {
                    Domain::Values(values) => {
                        // Each word as often as the count allows (one more for some), in
                        // an order of its own.
                        let mut order = values.clone();
                        order.shuffle(rng);
                        (0..count).map(|i| order[i % order.len()].clone()).collect()
                    }
                    numeric => (0..count)
                        .map(|stratum| numeric.in_stratum(rng, memory_bytes, stratum, count))
                        .collect(),
                };
                column.shuffle(rng);
                column
            })
            .collect();
        (0..count)
            .map(|row| {
                self.variables
                    .iter()
                    .zip(&columns)
                    .map(|(variable, column)| (variable.name.clone(), column[row].clone()))
                    .collect()
            })
            .collect()
    }
}

impl Domain {
    /// A value drawn within stratum `stratum` of `of` equal strata of a numeric domain
    /// (on its scale); a word domain's value at random.
    fn in_stratum(
        &self,
        rng: &mut impl Rng,
        memory_bytes: u64,
        stratum: usize,
        of: usize,
    ) -> String {
        let Some((low_t, high_t, _)) = self.scale(memory_bytes) else {
            let Domain::Values(values) = self else {
                unreachable!("a domain without a scale holds words")
            };
            return values[rng.gen_range(0..values.len())].clone();
        };
        let share = |index: usize| index as f64 / of.max(1) as f64;
        let width = high_t - low_t;
        self.value_at(uniform(
            rng,
            low_t + width * share(stratum),
            low_t + width * share(stratum + 1),
        ))
    }
}

/// Whether a configuration sets each of its variables to the value the server runs with
/// by default (`server_values`, as the server reported them): it is the default itself.
/// Values are compared as the server reads them: numbers by value, words without case,
/// and ON/OFF as 1/0.
pub fn is_the_default(config: &[(String, String)], server_values: &[(String, String)]) -> bool {
    config.iter().all(|(name, value)| {
        server_values
            .iter()
            .find(|(known, _)| known == name)
            .is_some_and(|(_, server)| same_value(value, server))
    })
}

/// Whether two spellings of a variable's value are the same value to the server.
pub fn same_value(a: &str, b: &str) -> bool {
    let canonical = |text: &str| -> String {
        let text = text.trim();
        match text.to_ascii_uppercase().as_str() {
            "ON" | "TRUE" => "1".into(),
            "OFF" | "FALSE" => "0".into(),
            upper => match text.parse::<f64>() {
                Ok(number) => format!("{number}"),
                Err(_) => upper.to_string(),
            },
        }
    };
    canonical(a) == canonical(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_hypercube_draws_every_stratum_and_every_word_once_per_round_of_them() {
        let space = super::super::parse(
            "[[variable]]\nname = \"innodb_io_capacity\"\nrange = [100, 10000]\nscale = \"log\"\n\n[[variable]]\nname = \"innodb_adaptive_hash_index\"\nvalues = [\"ON\", \"OFF\"]\n\n[[variable]]\nname = \"innodb_change_buffering\"\nvalues = [\"none\", \"inserts\", \"all\"]\n",
            "three.toml",
        )
        .unwrap();
        for seed in 0..20 {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let configs = space.latin_hypercube(&mut rng, 1 << 30, 4);
            assert_eq!(configs.len(), 4);
            let column = |name: &str| -> Vec<String> {
                configs
                    .iter()
                    .map(|c| c.iter().find(|(n, _)| n == name).unwrap().1.clone())
                    .collect()
            };
            // One value in each quarter of the log scale from 100 to 10,000 (a quarter is
            // a factor of √10), rounded to whole numbers.
            let mut strata: Vec<usize> = column("innodb_io_capacity")
                .iter()
                .map(|v| ((v.parse::<f64>().unwrap() / 100.0).log10() * 2.0).floor() as usize)
                .map(|s| s.min(3))
                .collect();
            strata.sort();
            assert_eq!(strata, vec![0, 1, 2, 3], "seed {seed}: {configs:?}");
            // Two words over four: each twice. Three over four: each at least once.
            let mut hash = column("innodb_adaptive_hash_index");
            hash.sort();
            assert_eq!(hash, vec!["OFF", "OFF", "ON", "ON"], "seed {seed}");
            let buffering = column("innodb_change_buffering");
            for value in ["none", "inserts", "all"] {
                assert!(
                    buffering.iter().any(|v| v == value),
                    "seed {seed}: {buffering:?}"
                );
            }
        }
    }

    #[test]
    fn the_default_is_known_whatever_the_spelling() {
        let server = vec![
            (
                "innodb_buffer_pool_size".to_string(),
                "134217728".to_string(),
            ),
            ("innodb_adaptive_hash_index".to_string(), "OFF".to_string()),
        ];
        let config = |pool: &str, hash: &str| {
            vec![
                ("innodb_buffer_pool_size".to_string(), pool.to_string()),
                ("innodb_adaptive_hash_index".to_string(), hash.to_string()),
            ]
        };
        assert!(is_the_default(&config("134217728", "off"), &server));
        assert!(is_the_default(&config("134217728", "0"), &server));
        assert!(!is_the_default(&config("134217728", "ON"), &server));
        assert!(!is_the_default(&config("536870912", "OFF"), &server));
        // A variable whose server value is unknown: never taken for the default.
        assert!(!is_the_default(
            &[("innodb_io_capacity".to_string(), "200".to_string())],
            &server
        ));
    }
}
