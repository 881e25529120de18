//! Records the commit enginebench is built from, for the environment of every run, and
//! compiles the C beside libmariadb: the probe of its MYSQL_BIND layout (checked by a unit
//! test) and the event driver's socket hook (build/pvio_hook.c).
use std::process::Command;

fn main() {
    let hash = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string());
    if let Some(hash) = hash {
        println!("cargo:rustc-env=ENGINEBENCH_GIT_HASH={hash}");
    }
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");

    let mut build = cc::Build::new();
    build.file("build/bind_layout.c").file("build/pvio_hook.c");
    for dir in libmariadb_include_dirs() {
        build.include(dir);
    }
    build.compile("libmariadb_side");
    println!("cargo:rerun-if-changed=build/bind_layout.c");
    println!("cargo:rerun-if-changed=build/pvio_hook.c");

    // Lua scripts call these through LuaJIT's ffi (`ffi.C.NAME`), which finds only the
    // binary's exported symbols: sysbench's sb_counter_inc, and the prelude's fast calls
    // (src/studies/lua/fast.rs).
    for symbol in ["sb_counter_inc", "eb_lua_*"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
}

/// Where libmariadb's headers are: as its pkg-config file says (Debian's libmariadb-dev
/// ships libmariadb.pc), else Debian's place. Missing: the build stops naming the package,
/// instead of a bare "mysql.h: No such file".
fn libmariadb_include_dirs() -> Vec<std::path::PathBuf> {
    let probed = pkg_config::Config::new()
        .cargo_metadata(false)
        .probe("libmariadb");
    let dirs = match probed {
        Ok(library) => library.include_paths,
        Err(_) => vec![std::path::PathBuf::from("/usr/include/mariadb")],
    };
    if !dirs.iter().any(|dir| dir.join("mysql.h").is_file()) {
        panic!(
            "enginebench needs libmariadb's headers and library (mysql.h, libmariadb.so), found neither by pkg-config (libmariadb) nor in /usr/include/mariadb: install them with `apt-get install libmariadb-dev pkg-config` (Debian, Ubuntu), `dnf install mariadb-connector-c-devel` (Fedora, RHEL), or run `make setup`"
        );
    }
    dirs
}
