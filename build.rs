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

    // libmariadb-dev puts its headers here (scripts/setup installs it).
    cc::Build::new()
        .file("build/bind_layout.c")
        .file("build/pvio_hook.c")
        .include("/usr/include/mariadb")
        .compile("libmariadb_side");
    println!("cargo:rerun-if-changed=build/bind_layout.c");
    println!("cargo:rerun-if-changed=build/pvio_hook.c");
}
