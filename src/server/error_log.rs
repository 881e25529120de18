//! A throwaway server's logs, read for messages: where each log stood when the server last
//! started, and what of its last start explains how it ended (its errors and warnings and
//! its last lines, never the start-up notes). It must not know how servers are started.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The length of each log file when the server last started.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LogStart {
    pub(super) error_log: u64,
    pub(super) console: u64,
}

impl LogStart {
    pub(super) fn now(root_dir: &Path) -> LogStart {
        let length = |name: &str| fs::metadata(root_dir.join(name)).map_or(0, |m| m.len());
        LogStart {
            error_log: length(ERROR_LOG),
            console: length(CONSOLE_LOG),
        }
    }
}

pub(super) const ERROR_LOG: &str = "error.log";
pub(super) const CONSOLE_LOG: &str = "console.log";

/// The lines of a log that say ERROR, or its tail when none do: mariadb-install-db ends
/// its log with boilerplate, far from the cause.
pub(super) fn error_lines_or_tail(path: &Path) -> String {
    let text = fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let errors: Vec<&str> = text.lines().filter(|line| line.contains("ERROR")).collect();
    if errors.is_empty() {
        tail_of_file(path, 10)
    } else {
        errors.join("\n")
    }
}

/// A log's text from byte `from` on (at most its last 256 KiB).
pub(super) fn text_since(path: &Path, from: u64) -> String {
    let Ok(mut file) = fs::File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let from = from.min(length).max(length.saturating_sub(256 * 1024));
    let _ = file.seek(SeekFrom::Start(from));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    // The cut may land inside a UTF-8 sequence; lossy decoding keeps the rest readable.
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The lines of one start's log that explain how it ended: every `[ERROR]` and
/// `[Warning]` line, and the last `lines` lines after "ready for connections" (a crash's
/// stack trace, a shutdown); a start that never got ready keeps its last `lines` lines.
/// The start-up notes before "ready" are left out: they explain nothing.
pub(super) fn log_excerpt(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let ready = all
        .iter()
        .rposition(|line| line.contains("ready for connections"));
    let tail_from = match ready {
        Some(ready) => (ready + 1).max(all.len().saturating_sub(lines)),
        None => all.len().saturating_sub(lines),
    };
    let telling = |line: &str| line.contains("[ERROR]") || line.contains("[Warning]");
    // Warnings can repeat by the thousand (an aborted connection each): the first ones
    // and the count say enough.
    let mut kept: Vec<String> = Vec::new();
    let mut left_out = 0usize;
    for (index, line) in all.iter().enumerate() {
        if index >= tail_from {
            kept.push(line.to_string());
        } else if telling(line) {
            if kept.len() < 2 * lines.max(10) {
                kept.push(line.to_string());
            } else {
                left_out += 1;
            }
        }
    }
    if left_out > 0 {
        kept.push(format!("… and {left_out} more errors and warnings"));
    }
    let mut excerpt = kept.join("\n");
    if !excerpt.is_empty() {
        excerpt.push('\n');
    }
    excerpt
}

fn tail_of_file(path: &Path, lines: usize) -> String {
    let Ok(mut file) = fs::File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(length.saturating_sub(16 * 1024)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    // The seek may land inside a UTF-8 sequence; lossy decoding keeps the rest readable.
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    let mut tail = all[all.len().saturating_sub(lines)..].join("\n");
    if !tail.is_empty() {
        tail.push('\n');
    }
    tail
}

#[cfg(test)]
mod log_tests {
    use super::log_excerpt;

    const LOG: &str = "\
2026-11-25 10:00:00 0 [Note] Starting MariaDB 10.11.19 as process 1
2026-11-25 10:00:00 0 [Note] InnoDB: Compressed tables use zlib
2026-11-25 10:00:00 0 [Warning] You need to use --log-bin to make --binlog-format work.
2026-11-25 10:00:00 0 [Note] InnoDB: Buffer pool(s) load completed
2026-11-25 10:00:01 0 [Note] /usr/sbin/mariadbd: ready for connections.
2026-11-25 10:00:05 3 [Warning] Aborted connection 3 to db: 'x' user: 'root'
2026-11-25 10:00:09 0 [Note] /usr/sbin/mariadbd (initiated by: unknown): Normal shutdown
2026-11-25 10:00:09 0 [Note] InnoDB: Shutdown completed
";

    #[test]
    fn quotes_errors_warnings_and_what_came_after_ready_never_the_start_up_notes() {
        let excerpt = log_excerpt(LOG, 2);
        assert!(!excerpt.contains("Compressed tables"), "{excerpt}");
        assert!(!excerpt.contains("Starting MariaDB"), "{excerpt}");
        assert!(excerpt.contains("--log-bin"), "{excerpt}");
        assert!(excerpt.contains("Aborted connection"), "{excerpt}");
        assert!(excerpt.contains("Shutdown completed"), "{excerpt}");
        assert!(excerpt.contains("Normal shutdown"), "{excerpt}");
    }

    #[test]
    fn a_start_that_never_got_ready_keeps_its_last_lines() {
        let failed = "a [Note] one\nb [Note] two\nc [ERROR] Can't open\nd [Note] Aborting\n";
        let excerpt = log_excerpt(failed, 2);
        assert_eq!(excerpt, "c [ERROR] Can't open\nd [Note] Aborting\n");
    }
}
