//! The machine a run measured: what someone needs to judge whether its figures transfer to
//! theirs (CPU, memory, kernel, the datadir's filesystem) and which enginebench made them.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EnvironmentRecord {
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: usize,
    pub memory_bytes: u64,
    /// `uname -sr`: "Linux 6.1.0-…".
    pub kernel: String,
    /// PRETTY_NAME from /etc/os-release.
    pub os: String,
    pub hostname: String,
    /// The filesystem type of the server's datadir ("ext4", "tmpfs"); none for an external
    /// server.
    pub datadir_filesystem: Option<String>,
    pub enginebench_version: String,
    /// The commit enginebench was built from ("unknown" outside a git checkout).
    pub git_hash: String,
}

impl EnvironmentRecord {
    pub fn probe(datadir: Option<&Path>) -> EnvironmentRecord {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, model)| model.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let memory_bytes = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("MemTotal:"))
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|kib| kib.parse::<u64>().ok())
            })
            .map_or(0, |kib| kib * 1024);
        let os = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                    .map(|name| name.trim_matches('"').to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let read_trimmed = |path: &str| {
            std::fs::read_to_string(path)
                .map(|text| text.trim().to_string())
                .unwrap_or_default()
        };
        EnvironmentRecord {
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
            kernel: format!(
                "{} {}",
                read_trimmed("/proc/sys/kernel/ostype"),
                read_trimmed("/proc/sys/kernel/osrelease")
            ),
            os,
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            datadir_filesystem: datadir.and_then(super::filesystem_of).map(|fs| fs.fs_type),
            enginebench_version: env!("CARGO_PKG_VERSION").into(),
            git_hash: option_env!("ENGINEBENCH_GIT_HASH")
                .unwrap_or("unknown")
                .to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_this_machine() {
        let environment = EnvironmentRecord::probe(Some(Path::new("/")));
        assert!(environment.cpus >= 1);
        assert!(environment.memory_bytes > 0);
        assert!(
            environment.kernel.starts_with("Linux "),
            "{}",
            environment.kernel
        );
        assert!(environment.datadir_filesystem.is_some());
        assert_ne!(environment.cpu_model, "");
    }
}
