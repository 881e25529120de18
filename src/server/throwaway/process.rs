//! A throwaway server's processes: `mariadbd` spawned in its own process group tied to our
//! life, and the datadir its build's installer (or template) makes, a Galera joiner's empty.
//! It must not know studies, crashes or why a server is started.

use super::*;

/// Starts `binary` with `args` in its own process group, tied to our life, its output
/// appended to console.log in `root_dir`.
pub(super) fn spawn_server(
    binary: &Path,
    args: &[String],
    root_dir: &Path,
    caps: &ChildCaps,
) -> Result<Child, ServerError> {
    let mut command = Command::new(binary);
    command.args(args).stdin(Stdio::null());
    let console_log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(root_dir.join("console.log"))
        .map_err(|err| ServerError::Io(format!("cannot write in {}: {err}", root_dir.display())))?;
    command
        .stdout(
            console_log
                .try_clone()
                .map_err(|err| ServerError::Io(err.to_string()))?,
        )
        .stderr(console_log);
    let caps = caps.clone();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // Its memory cgroup and CPUs before it allocates anything.
            caps.apply_in_child()?;
            // Own process group: the terminal's Ctrl-C reaches us, not the server, so
            // we decide the order of teardown.
            libc::setpgid(0, 0);
            // Die with the thread that started us, even if it is killed with SIGKILL.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    command
        .spawn()
        .map_err(|err| ServerError::Io(format!("cannot start {}: {err}", binary.display())))
}

pub(super) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A datadir as the build's own installer makes it: a copy of the one it made before
/// (`datadir_template`), else made now.
pub(super) fn initialise_datadir(
    tree: &ServerTree,
    datadir: &Path,
    tmpdir: &Path,
    root_dir: &Path,
    caps: &ChildCaps,
) -> Result<(), ServerError> {
    super::super::datadir_template::install_or_copy(tree, datadir, || {
        run_installer(tree, datadir, tmpdir, root_dir, caps)
    })
}

/// A datadir made by the build's own installer: MariaDB's `mariadb-install-db` from the
/// same tree (another version's would write its own system tables), MySQL's
/// `mysqld --initialize-insecure`.
pub(super) fn run_installer(
    tree: &ServerTree,
    datadir: &Path,
    tmpdir: &Path,
    root_dir: &Path,
    caps: &ChildCaps,
) -> Result<(), ServerError> {
    let log_path = root_dir.join("install.log");
    let log = fs::File::create(&log_path).map_err(|err| ServerError::Io(err.to_string()))?;
    let mut command;
    match tree.flavour {
        Flavour::MariaDb => {
            let installer = tree
                .installer
                .clone()
                .ok_or_else(|| ServerError::BinaryNotFound {
                    binary: "mariadb-install-db".into(),
                })?;
            command = Command::new(installer);
            command.args([
                "--no-defaults".to_string(),
                format!("--datadir={}", datadir.display()),
                format!("--tmpdir={}", tmpdir.display()),
                "--auth-root-authentication-method=normal".into(),
                "--skip-test-db".into(),
            ]);
            if let Some(basedir) = &tree.basedir {
                command.arg(format!("--basedir={}", basedir.display()));
            }
        }
        Flavour::MySql => {
            command = Command::new(&tree.binary);
            command.args([
                "--no-defaults".to_string(),
                "--initialize-insecure".into(),
                format!("--datadir={}", datadir.display()),
                format!("--tmpdir={}", tmpdir.display()),
            ]);
            if let Some(basedir) = &tree.basedir {
                command.arg(format!("--basedir={}", basedir.display()));
            }
        }
    }
    if is_root() {
        command.arg("--user=root");
    }
    // The installer runs on the server's CPUs (not on the client's, which the caller may
    // carry), outside the memory cap: the cap is for the server under load.
    let caps = caps.without_cgroup();
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || caps.apply_in_child());
    }
    let status = command
        .stdin(Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|err| ServerError::Io(err.to_string()))?,
        )
        .stderr(log)
        .status()
        .map_err(|err| ServerError::Io(format!("cannot run the datadir installer: {err}")))?;
    if !status.success() {
        return Err(ServerError::InstallFailed {
            datadir: datadir.to_path_buf(),
            status: status.to_string(),
            log_tail: error_lines_or_tail(&log_path),
        });
    }
    Ok(())
}

/// An empty datadir for a Galera joiner. Under root, wsrep_sst_rsync's rsync daemon
/// drops to `nobody`: the directory is given to it, and the server's directory opened to
/// traversal, or the transfer fails with "Permission denied".
pub(super) fn prepare_joiner_datadir(root_dir: &Path, datadir: &Path) -> Result<(), ServerError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |err: std::io::Error| {
        ServerError::Io(format!(
            "cannot prepare {} for a state transfer: {err}",
            datadir.display()
        ))
    };
    fs::create_dir_all(datadir).map_err(io)?;
    if is_root() {
        fs::set_permissions(root_dir, fs::Permissions::from_mode(0o755)).map_err(io)?;
        // SAFETY: getpwnam with a NUL-terminated name; the entry is read at once.
        let nobody = unsafe { libc::getpwnam(c"nobody".as_ptr()) };
        if !nobody.is_null() {
            // SAFETY: a valid passwd entry returned just above.
            let (uid, gid) = unsafe { ((*nobody).pw_uid, (*nobody).pw_gid) };
            std::os::unix::fs::chown(datadir, Some(uid), Some(gid)).map_err(io)?;
        }
    }
    Ok(())
}
