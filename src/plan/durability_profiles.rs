//! The server profiles every study can run on by name, whether or not it has profiles of
//! its own: `--profile durable --profile relaxed` runs any study twice, at matched
//! durability, so engines are compared with what their speed costs in safety stated (the
//! durable twins of issue 44).
//!
//! Owns: the built-in profiles' names and server options, and which of the command line's
//! names a study's plan takes from them. Must not know a study by name nor start a server.

use crate::scenario::file::Profile;

/// The built-in profiles' names, in the order messages list them.
pub const BUILT_IN: [&str; 3] = ["durable", "relaxed", "unsafe"];

/// The built-in profile `name`, or None for a name that is none of them.
///
/// MyRocks' option is given with MariaDB's `loose-` prefix: a server without the RocksDB
/// plugin (or one that has not loaded it) then warns about it and starts anyway, where an
/// unknown option would stop it.
pub fn built_in(name: &str) -> Option<Profile> {
    // innodb_flush_log_at_trx_commit: 1 syncs the log at every commit; 2 writes it at
    // commit and syncs it about once a second; 0 does both about once a second. MariaDB's
    // MyRocks syncs at 1 too, but at 2 as at 0 keeps its WAL in the server until that
    // once-a-second write (manual_wal_flush; view::durability says what each loses).
    // sync_binlog=1 syncs the binlog at every commit (only while it is on).
    let options: &[(&str, &str)] = match name {
        "durable" => &[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("sync_binlog", "1"),
            ("loose-rocksdb_flush_log_at_trx_commit", "1"),
        ],
        "relaxed" => &[
            ("innodb_flush_log_at_trx_commit", "2"),
            ("innodb_doublewrite", "OFF"),
            ("sync_binlog", "0"),
            ("loose-rocksdb_flush_log_at_trx_commit", "2"),
        ],
        "unsafe" => &[
            ("innodb_flush_log_at_trx_commit", "0"),
            ("innodb_doublewrite", "OFF"),
            ("sync_binlog", "0"),
            ("loose-rocksdb_flush_log_at_trx_commit", "0"),
        ],
        _ => return None,
    };
    Some(Profile::with_options(
        name,
        options
            .iter()
            .map(|(option, value)| (option.to_string(), value.to_string()))
            .collect(),
    ))
}

/// The profiles a plan runs on: the study's own (already narrowed to the `--profile`
/// names it has), then, in the command line's order, the built-in profile of each name the
/// study has no profile of.
pub fn chosen(own: Vec<Profile>, wanted: &[String]) -> Vec<Profile> {
    let extra: Vec<Profile> = wanted
        .iter()
        .filter(|name| !own.iter().any(|profile| &profile.name == *name))
        .filter_map(|name| built_in(name))
        .collect();
    own.into_iter().chain(extra).collect()
}

/// Refuses a `--profile` name that is neither one of `own` (the study's profiles) nor
/// built in, naming both lists.
pub fn check_names(study: &str, own: &[String], wanted: &[String]) -> Result<(), String> {
    for name in wanted {
        if !own.contains(name) && built_in(name).is_none() {
            return Err(format!(
                "--profile '{name}': {study} has no such profile (its profiles: {}; built in: {})",
                if own.is_empty() {
                    "none".to_string()
                } else {
                    quoted(own.iter().map(String::as_str))
                },
                quoted(BUILT_IN)
            ));
        }
    }
    Ok(())
}

fn quoted<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|name| format!("'{name}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_set_the_flush_settings_and_own_ones_win() {
        let durable = built_in("durable").unwrap();
        assert!(durable
            .server_opts
            .contains(&("innodb_flush_log_at_trx_commit".into(), "1".into())));
        assert!(durable
            .server_opts
            .contains(&("sync_binlog".into(), "1".into())));
        let relaxed = built_in("relaxed").unwrap();
        assert!(relaxed
            .server_opts
            .contains(&("loose-rocksdb_flush_log_at_trx_commit".into(), "2".into())));
        assert!(built_in("fast").is_none());

        let mut own = built_in("unsafe").unwrap();
        own.name = "durable".into();
        own.server_opts.clear();
        let wanted = ["durable".to_string(), "relaxed".to_string()];
        let chosen = chosen(vec![own.clone()], &wanted);
        assert_eq!(chosen.len(), 2);
        assert_eq!(chosen[0], own, "the study's own 'durable' wins");
        assert_eq!(chosen[1], relaxed);
        assert!(super::chosen(Vec::new(), &[]).is_empty());
    }

    #[test]
    fn an_unknown_name_is_refused_with_every_name_there_is() {
        assert!(check_names("s0", &[], &["durable".into()]).is_ok());
        assert_eq!(
            check_names("s0", &[], &["fast".into()]).unwrap_err(),
            "--profile 'fast': s0 has no such profile (its profiles: none; built in: 'durable', 'relaxed', 'unsafe')"
        );
        assert_eq!(
            check_names("s2", &["ample memory".into()], &["x".into()]).unwrap_err(),
            "--profile 'x': s2 has no such profile (its profiles: 'ample memory'; built in: 'durable', 'relaxed', 'unsafe')"
        );
    }
}
