//! The process's open-file limit, raised so that thousands of connections (a socket each)
//! fit in one client. Owns the rlimit calls; must not know connections or loops.

/// Raises this process's open-file limit to its hard limit, so that thousands of
/// connections fit; returns the limit now in force.
pub fn raise_open_files() -> u64 {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur;
            }
        }
        limit.rlim_cur
    }
}
