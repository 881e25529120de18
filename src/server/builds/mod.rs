//! Server builds: which `mariadbd` or `mysqld` a throwaway server runs, and the tree it
//! belongs to (basedir, plugin and share directories, its own datadir installer). A build
//! is `system` (the installed MariaDB), a name fetched into the cache by `enginebench server
//! get` (`mariadb-11.8` from Debian trixie, `mysql` from Debian sid), a directory unpacked
//! from an official tarball, or a binary. Fetching uses the machine's own apt mirror with
//! private state directories: the system's apt lists, configuration and installed packages
//! are never touched. This module must not know studies or runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ServerError;

mod fetch;
use fetch::{fetch_into, run_output};

/// Which server family a build is: they differ in how a datadir is made and in options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    MariaDb,
    MySql,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::MariaDb => "mariadb",
            Flavour::MySql => "mysql",
        }
    }
}

/// A server binary and the tree it came from.
#[derive(Debug, Clone)]
pub struct ServerTree {
    pub flavour: Flavour,
    pub binary: PathBuf,
    /// `--basedir` (share/, plugins) for a tree other than the system's.
    pub basedir: Option<PathBuf>,
    /// `--plugin-dir` for a tree other than the system's.
    pub plugin_dir: Option<PathBuf>,
    /// MariaDB's `mariadb-install-db` from the same tree (MySQL initialises itself).
    pub installer: Option<PathBuf>,
    /// The tree's RocksDB plugin, loaded when present.
    pub rocksdb: bool,
}

/// Builds `server get` knows: name, Debian suite, packages (their dependencies follow).
const KNOWN: &[(&str, &str, &[&str])] = &[
    (
        "mariadb-11.8",
        "trixie",
        &[
            "mariadb-server-core",
            "mariadb-client-core",
            "mariadb-plugin-rocksdb",
        ],
    ),
    ("mysql", "sid", &["mysql-server-core"]),
];

/// The names `server get` takes.
pub fn known_names() -> Vec<&'static str> {
    KNOWN.iter().map(|(name, _, _)| *name).collect()
}

/// Whether `spec` can name a build before anything is fetched or started: `system`, a name
/// `server get` knows, or a path that exists. Whether it runs is found when it starts.
pub fn could_be_build(spec: &str) -> bool {
    spec == "system" || known_names().contains(&spec) || Path::new(spec).exists()
}

const SYSTEM_ROCKSDB_PLUGIN: &str = "/usr/lib/mysql/plugin/ha_rocksdb.so";

/// Where fetched builds live: `$XDG_CACHE_HOME/enginebench/servers`, or
/// `~/.cache/enginebench/servers`.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("enginebench").join("servers")
}

/// The build `spec` names (`--server-bin`, a profile's `server_bin`): none or `system` for
/// the installed MariaDB, a fetched name, a directory, or a binary.
pub fn resolve(spec: Option<&Path>) -> Result<ServerTree, ServerError> {
    let Some(spec) = spec.filter(|s| *s != Path::new("system")) else {
        return system_tree();
    };
    let text = spec.to_string_lossy();
    if !text.contains('/') {
        let dir = cache_dir().join(spec);
        if dir.is_dir() {
            return tree_of_dir(&dir);
        }
        if known_names().contains(&text.as_ref()) {
            return Err(ServerError::NotFetched {
                name: text.into_owned(),
            });
        }
    }
    if spec.is_dir() {
        return tree_of_dir(spec);
    }
    if spec.is_file() {
        let basedir = spec.parent().and_then(Path::parent);
        return match basedir {
            Some(basedir) if basedir != Path::new("/usr") => {
                let mut tree = tree_of_dir(basedir)?;
                tree.binary = spec.to_path_buf();
                tree.flavour = flavour_of(spec)?;
                Ok(tree)
            }
            _ => Ok(ServerTree {
                flavour: flavour_of(spec)?,
                binary: spec.to_path_buf(),
                basedir: None,
                plugin_dir: None,
                installer: system_installer(),
                rocksdb: false,
            }),
        };
    }
    if text.contains('/') {
        return Err(ServerError::BinaryNotFound {
            binary: text.into_owned(),
        });
    }
    Err(ServerError::UnknownBuild {
        spec: text.into_owned(),
        known: known_names().join(", "),
    })
}

fn system_tree() -> Result<ServerTree, ServerError> {
    let binary = find_program(
        "mariadbd",
        &["/usr/sbin", "/usr/libexec", "/usr/local/sbin"],
    )
    .or_else(|| find_program("mysqld", &["/usr/sbin"]))
    .ok_or_else(|| ServerError::BinaryNotFound {
        binary: "mariadbd".into(),
    })?;
    Ok(ServerTree {
        flavour: flavour_of(&binary)?,
        binary,
        basedir: None,
        plugin_dir: None,
        installer: system_installer(),
        rocksdb: Path::new(SYSTEM_ROCKSDB_PLUGIN).exists(),
    })
}

fn system_installer() -> Option<PathBuf> {
    find_program("mariadb-install-db", &["/usr/bin", "/usr/local/bin"])
        .or_else(|| find_program("mysql_install_db", &["/usr/bin"]))
}

/// A tree: Debian's layout (`usr/sbin/mariadbd`) or a tarball's (`bin/mysqld`).
fn tree_of_dir(dir: &Path) -> Result<ServerTree, ServerError> {
    let basedirs = [dir.join("usr"), dir.to_path_buf()];
    for basedir in basedirs {
        for sub in ["sbin", "bin", "libexec"] {
            for name in ["mariadbd", "mysqld"] {
                let binary = basedir.join(sub).join(name);
                if !binary.is_file() {
                    continue;
                }
                let plugin_dir = [basedir.join("lib/mysql/plugin"), basedir.join("lib/plugin")]
                    .into_iter()
                    .find(|p| p.is_dir());
                let installer = [
                    "bin/mariadb-install-db",
                    "scripts/mariadb-install-db",
                    "bin/mysql_install_db",
                    "scripts/mysql_install_db",
                ]
                .iter()
                .map(|p| basedir.join(p))
                .find(|p| p.is_file());
                let rocksdb = plugin_dir
                    .as_ref()
                    .is_some_and(|p| p.join("ha_rocksdb.so").is_file());
                return Ok(ServerTree {
                    flavour: flavour_of(&binary)?,
                    binary,
                    basedir: Some(basedir),
                    plugin_dir,
                    installer,
                    rocksdb,
                });
            }
        }
    }
    Err(ServerError::NoServerInTree {
        dir: dir.display().to_string(),
    })
}

fn flavour_of(binary: &Path) -> Result<Flavour, ServerError> {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .map_err(|err| {
            ServerError::Io(format!("cannot run {} --version: {err}", binary.display()))
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    if text.contains("MariaDB") {
        Ok(Flavour::MariaDb)
    } else if text.contains("Ver ") {
        Ok(Flavour::MySql)
    } else {
        Err(ServerError::Io(format!(
            "{} --version says neither MariaDB nor MySQL ({}{})",
            binary.display(),
            text.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// The version a build's binary reports (`11.8.9-MariaDB-0+deb13u1`), empty when it does
/// not run.
pub fn version_line(tree: &ServerTree) -> String {
    binary_version(&tree.binary)
}

/// The version a server binary reports with `--version`, as the server's `@@version` reads
/// (`10.11.19-MariaDB-0+deb12u1`): for a server of ours, its version without asking it.
/// Empty when the binary does not run or says none.
pub fn binary_version(binary: &Path) -> String {
    Command::new(binary)
        .arg("--version")
        .output()
        .map(|out| version_in(&String::from_utf8_lossy(&out.stdout)).to_string())
        .unwrap_or_default()
}

/// The version in a server's `--version` line (`mariadbd  Ver 10.11.19-MariaDB-0+deb12u1
/// for debian-linux-gnu …`): the word after `Ver`.
fn version_in(version_output: &str) -> &str {
    version_output
        .split_once("Ver ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_default()
}

pub fn find_program(name: &str, extra_dirs: &[&str]) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    path_dirs
        .into_iter()
        .chain(extra_dirs.iter().map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A fetched build as `server list` shows it.
pub struct CachedBuild {
    pub name: String,
    pub flavour: Flavour,
    pub version: String,
    pub engines: Vec<&'static str>,
    pub size_bytes: u64,
}

/// The builds in the cache, and the system's.
pub fn list() -> Vec<CachedBuild> {
    let mut builds = Vec::new();
    let mut entries: Vec<(String, Result<ServerTree, ServerError>, u64)> = Vec::new();
    entries.push(("system".into(), system_tree(), 0));
    if let Ok(dir) = fs::read_dir(cache_dir()) {
        let mut names: Vec<String> = dir
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        for name in names {
            let path = cache_dir().join(&name);
            entries.push((name, tree_of_dir(&path), size_of(&path)));
        }
    }
    for (name, tree, size_bytes) in entries {
        let Ok(tree) = tree else { continue };
        let mut engines = vec!["InnoDB", "MyISAM", "MEMORY"];
        if tree.flavour == Flavour::MariaDb {
            engines.push("Aria");
        }
        if tree.rocksdb {
            engines.push("RocksDB");
        }
        builds.push(CachedBuild {
            name,
            flavour: tree.flavour,
            version: version_line(&tree),
            engines,
            size_bytes,
        });
    }
    builds
}

fn size_of(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        fs::read_dir(path)
            .map(|d| d.flatten().map(|e| size_of(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.len()
    }
}

/// Fetches a known build into the cache: packages and their dependencies downloaded from
/// the machine's own mirror with private apt state, unpacked into one tree, every binary
/// pointed at the tree's own loader and libraries. Nothing is left in the cache unless the
/// whole build works. Returns the tree.
///
/// `cancelled` is asked while waiting for another process's fetch of the same build (Ctrl-C).
pub fn get(
    name: &str,
    progress: &dyn Fn(&str),
    cancelled: &dyn Fn() -> bool,
) -> Result<ServerTree, ServerError> {
    let Some((_, suite, packages)) = KNOWN.iter().find(|(known, _, _)| *known == name) else {
        return Err(ServerError::Io(format!(
            "no server build named '{name}': `enginebench server get` knows {} (or unpack an official tarball and pass its directory)",
            known_names().join(", ")
        )));
    };
    let final_dir = cache_dir().join(name);
    if final_dir.is_dir() {
        progress(&format!("{name} is already in {}", final_dir.display()));
        return tree_of_dir(&final_dir);
    }
    fs::create_dir_all(cache_dir()).map_err(|err| {
        ServerError::Io(format!("cannot create {}: {err}", cache_dir().display()))
    })?;
    // Two processes (two runs, two tests, two agents on one host) may fetch the same build
    // at once: one fetches while the other waits on the build's lock, then finds it there.
    let _lock = BuildLock::take(name, progress, cancelled)?;
    if final_dir.is_dir() {
        progress(&format!("{name} is already in {}", final_dir.display()));
        return tree_of_dir(&final_dir);
    }
    for (tool, package) in [
        ("apt-get", "apt"),
        ("apt-cache", "apt"),
        ("dpkg", "dpkg"),
        ("patchelf", "patchelf"),
    ] {
        if find_program(tool, &["/usr/bin", "/usr/sbin", "/bin"]).is_none() {
            return Err(ServerError::Io(format!(
                "`enginebench server get` needs {tool}: install it with `apt-get install {package}`"
            )));
        }
    }
    let staging = cache_dir().join(format!(".{name}.partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    // The binaries are patched for the tree's final place, so it moves there before it
    // can run; a build that does not run is removed again.
    let result = fetch_into(&staging, &final_dir, suite, packages, progress)
        .and_then(|()| {
            fs::rename(staging.join("tree"), &final_dir).map_err(|err| {
                ServerError::Io(format!(
                    "cannot move the build into {}: {err}",
                    final_dir.display()
                ))
            })
        })
        .and_then(|()| {
            let tree = tree_of_dir(&final_dir)?;
            if version_line(&tree).is_empty() {
                return Err(ServerError::Io(format!(
                    "the unpacked {} does not run: {}",
                    tree.binary.display(),
                    run_output(Command::new(&tree.binary).arg("--version"))
                        .err()
                        .unwrap_or_default()
                )));
            }
            progress(&format!("{name}: {}", version_line(&tree)));
            Ok(tree)
        });
    let _ = fs::remove_dir_all(&staging);
    if result.is_err() {
        let _ = fs::remove_dir_all(&final_dir);
    }
    result
}

/// An exclusive `flock` on `.NAME.lock` in the cache, held while a build is fetched. The
/// kernel drops it when its holder exits, however it exits, so a killed fetch never leaves
/// the others waiting. The holder removes the file when it is done, so the cache holds
/// nothing but builds; a waiter that then wins the lock on a removed file takes it anew.
struct BuildLock {
    path: PathBuf,
    _file: fs::File,
}

impl BuildLock {
    fn take(
        name: &str,
        progress: &dyn Fn(&str),
        cancelled: &dyn Fn() -> bool,
    ) -> Result<BuildLock, ServerError> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let path = cache_dir().join(format!(".{name}.lock"));
        let failed = |what: &str, err: std::io::Error| {
            ServerError::Io(format!("cannot {what} {}: {err}", path.display()))
        };
        let mut said = false;
        loop {
            let file = fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(|err| failed("open", err))?;
            // SAFETY: flock(2) on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                    return Err(failed("lock", err));
                }
                if !said {
                    progress(&format!(
                        "another enginebench is fetching {name}: waiting for it to finish"
                    ));
                    said = true;
                }
                // Polled rather than blocking, so that Ctrl-C is seen while waiting.
                if cancelled() {
                    return Err(ServerError::Io(format!(
                        "interrupted while waiting for another fetch of {name}"
                    )));
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
                continue;
            }
            // Locked: but if the holder before us removed the file meanwhile, our lock is
            // on a name nobody else will open. Only the file still at `path` counts.
            let ours = file.metadata().map_err(|err| failed("read", err))?.ino();
            if fs::metadata(&path).is_ok_and(|now| now.ino() == ours) {
                return Ok(BuildLock { path, _file: file });
            }
        }
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        // Removed while still locked, then unlocked by closing the file.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_word_after_ver_as_the_server_says_it() {
        assert_eq!(
            version_in(
                "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"
            ),
            "10.11.19-MariaDB-0+deb12u1"
        );
        assert_eq!(
            version_in(
                "/usr/sbin/mysqld  Ver 9.7.4 for Linux on x86_64 (MySQL Community Server - GPL)"
            ),
            "9.7.4"
        );
        assert_eq!(version_in("no version here"), "");
    }
}
