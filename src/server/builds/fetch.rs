//! A build fetched from the Debian archive: its packages downloaded with private apt options,
//! unpacked into one tree and patched to run from there. It must not know servers, datadirs
//! or which build a run asked for.

use super::*;

/// The build's `packages` from Debian `suite`, with their dependencies, unpacked under
/// `staging` (in `tree/`) and patched to run once moved to `final_dir`.
pub(super) fn fetch_into(
    staging: &Path,
    final_dir: &Path,
    suite: &str,
    packages: &[&str],
    progress: &dyn Fn(&str),
) -> Result<(), ServerError> {
    let apt = PrivateApt::new(staging, suite)?;
    progress(&format!(
        "reading Debian {suite}'s package lists from {}...",
        apt.mirror
    ));
    apt.update()?;
    let all = apt.resolve(packages)?;
    progress(&format!(
        "downloading {} packages ({} and their dependencies)...",
        all.len(),
        packages.join(", ")
    ));
    apt.download(&all)?;
    let tree = staging.join("tree");
    unpack(&apt.dir.join("debs"), &tree, progress)?;
    patch_binaries(&tree, final_dir)
}

fn io_error(what: &str, err: std::io::Error) -> ServerError {
    ServerError::Io(format!("{what}: {err}"))
}

/// apt run on a private state of its own (lists, cache, a sources list naming only the
/// suite), as if nothing were installed, so the host's apt is left as it was.
struct PrivateApt {
    dir: PathBuf,
    suite: String,
    mirror: String,
    options: Vec<String>,
}

impl PrivateApt {
    fn new(staging: &Path, suite: &str) -> Result<PrivateApt, ServerError> {
        let apt = staging.join("apt");
        for dir in ["lists/partial", "cache/archives/partial", "debs"] {
            fs::create_dir_all(apt.join(dir))
                .map_err(|e| io_error("creating the download directory", e))?;
        }
        let mirror = mirror()?;
        let sources = apt.join("sources.list");
        fs::write(
            &sources,
            format!(
                "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} {suite} main\n"
            ),
        )
        .map_err(|e| io_error("writing the private sources list", e))?;
        let options: Vec<String> = vec![
            format!("-o=Dir::Etc::sourcelist={}", sources.display()),
            "-o=Dir::Etc::sourceparts=-".into(),
            format!("-o=Dir::State::Lists={}", apt.join("lists").display()),
            format!("-o=Dir::Cache={}", apt.join("cache").display()),
            // As if nothing were installed: the suite's own libc and libraries come along.
            "-o=Dir::State::status=/dev/null".into(),
            "-o=APT::Sandbox::User=root".into(),
            "-o=Debug::NoLocking=1".into(),
        ];
        Ok(PrivateApt {
            dir: apt,
            suite: suite.to_string(),
            mirror,
            options,
        })
    }

    /// The suite's package lists read from the mirror.
    fn update(&self) -> Result<(), ServerError> {
        let (suite, mirror) = (&self.suite, &self.mirror);
        // apt-get update succeeds with a warning when a mirror does not answer: the lists it
        // wrote are the proof.
        let update = Command::new("apt-get")
            .args(&self.options)
            .arg("update")
            .output()
            .map_err(|e| io_error("cannot run apt-get", e))?;
        let got_lists = fs::read_dir(self.dir.join("lists")).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
        });
        if !update.status.success() || !got_lists {
            let stderr = String::from_utf8_lossy(&update.stderr);
            let cause: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            return Err(ServerError::Io(format!(
                "cannot read Debian {suite}'s package lists from {mirror}: {}",
                cause[cause.len().saturating_sub(2)..].join("; ")
            )));
        }
        Ok(())
    }

    /// `packages` and everything they depend on, by name, sorted, once each.
    fn resolve(&self, packages: &[&str]) -> Result<Vec<String>, ServerError> {
        let depends = run_output(
            Command::new("apt-cache")
                .args(&self.options)
                .args([
                    "depends",
                    "--recurse",
                    "--no-recommends",
                    "--no-suggests",
                    "--no-conflicts",
                    "--no-breaks",
                    "--no-replaces",
                    "--no-enhances",
                    "--no-pre-depends",
                ])
                .args(packages),
        )
        .map_err(|err| {
            ServerError::Io(format!(
                "cannot resolve the dependencies of {} in Debian {}: {err}",
                packages.join(", "),
                self.suite
            ))
        })?;
        let mut all: Vec<String> = depends
            .lines()
            .filter(|line| !line.starts_with(' ') && !line.starts_with('<'))
            .map(str::to_string)
            .collect();
        all.sort();
        all.dedup();
        Ok(all)
    }

    /// `all` downloaded into `debs/`.
    fn download(&self, all: &[String]) -> Result<(), ServerError> {
        run_output(
            Command::new("apt-get")
                .args(&self.options)
                .arg("download")
                .args(all)
                .current_dir(self.dir.join("debs")),
        )
        .map_err(|err| {
            ServerError::Io(format!("cannot download from Debian {}: {err}", self.suite))
        })?;
        Ok(())
    }
}

/// Every .deb in `debs` unpacked into `tree`, in name order.
fn unpack(debs: &Path, tree: &Path, progress: &dyn Fn(&str)) -> Result<(), ServerError> {
    fs::create_dir_all(tree).map_err(|e| io_error("creating the tree", e))?;
    let mut debs: Vec<PathBuf> = fs::read_dir(debs)
        .map_err(|e| io_error("reading the downloads", e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    debs.sort();
    progress(&format!("unpacking {} packages...", debs.len()));
    for deb in &debs {
        run_output(Command::new("dpkg").arg("-x").arg(deb).arg(tree))
            .map_err(|err| ServerError::Io(format!("cannot unpack {}: {err}", deb.display())))?;
    }
    Ok(())
}

/// The suite's binaries need its own glibc: each ELF in `tree`'s usr/sbin and usr/bin
/// pointed at the loader and libraries it will find under `final_dir`.
fn patch_binaries(tree: &Path, final_dir: &Path) -> Result<(), ServerError> {
    let loader = final_dir.join("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
    let libs = final_dir.join("usr/lib/x86_64-linux-gnu");
    for dir in ["usr/sbin", "usr/bin"] {
        let Ok(entries) = fs::read_dir(tree.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !is_elf(&path) {
                continue;
            }
            run_output(
                Command::new("patchelf")
                    .arg("--set-interpreter")
                    .arg(&loader)
                    .args(["--force-rpath", "--set-rpath"])
                    .arg(&libs)
                    .arg(&path),
            )
            .map_err(|err| ServerError::Io(format!("patchelf {}: {err}", path.display())))?;
        }
    }
    Ok(())
}

pub(super) fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
        && magic == *b"\x7fELF"
}

/// The machine's own Debian mirror (from its apt sources), or `ENGINEBENCH_APT_MIRROR`.
pub(super) fn mirror() -> Result<String, ServerError> {
    if let Some(mirror) = std::env::var_os("ENGINEBENCH_APT_MIRROR") {
        return Ok(mirror.to_string_lossy().into_owned());
    }
    let mut texts = Vec::new();
    if let Ok(text) = fs::read_to_string("/etc/apt/sources.list") {
        texts.push(text);
    }
    if let Ok(dir) = fs::read_dir("/etc/apt/sources.list.d") {
        for entry in dir.flatten() {
            let path = entry.path();
            if path
                .extension()
                .is_some_and(|e| e == "sources" || e == "list")
            {
                texts.extend(fs::read_to_string(&path).ok());
            }
        }
    }
    for text in &texts {
        for line in text.lines() {
            let line = line.trim();
            let uri = if let Some(rest) = line.strip_prefix("URIs:") {
                rest.split_whitespace().next()
            } else if let Some(rest) = line.strip_prefix("deb ") {
                rest.split_whitespace().find(|w| w.contains("://"))
            } else {
                None
            };
            if let Some(uri) = uri {
                if uri.trim_end_matches('/').ends_with("/debian") {
                    return Ok(uri.trim_end_matches('/').to_string());
                }
            }
        }
    }
    Err(ServerError::Io(
        "found no Debian mirror in /etc/apt/sources.list or sources.list.d: set ENGINEBENCH_APT_MIRROR=http://.../debian".into(),
    ))
}

/// Runs a command; its stdout, or its stderr's last lines as the error.
pub(super) fn run_output(command: &mut Command) -> Result<String, String> {
    let output = command
        .output()
        .map_err(|err| format!("cannot run {:?}: {err}", command.get_program()))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    Err(format!(
        "{} ({})",
        lines[lines.len().saturating_sub(3)..].join("; "),
        output.status
    ))
}
