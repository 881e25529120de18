//! One pipeline for every command that measures (`run`, `replay`, `prepare`, `sysbench`):
//! the plan's notes said, the server fitted to the plan's largest cell and its caps
//! checked, then `--dry-run`'s plan or the runner's walk, its record finished by the
//! command's own way of printing. What differs between commands (how the plan is made,
//! where output goes, what is printed) comes in as arguments; the order of the stages does
//! not. It must not know any kind of study.

use super::{check_caps, Finished};
use crate::plan::Plan;
use crate::runner::{self, RunOutput, RunResult};
use crate::server::ServerArgsResolved;

/// Carries `plan` out on `server`: `--dry-run` prints it; otherwise `output` is opened (only
/// now, so that a refused plan leaves no store behind), the runner walks the plan, and
/// `finish` prints and turns the outcome into an exit.
pub fn measure(
    plan: &Plan,
    mut server: ServerArgsResolved,
    dry_run: bool,
    output: impl FnOnce() -> anyhow::Result<RunOutput>,
    finish: impl FnOnce(RunResult, &RunOutput) -> anyhow::Result<Finished>,
) -> anyhow::Result<Finished> {
    for line in plan
        .study
        .about()
        .description
        .notes
        .iter()
        .chain(&plan.notes)
    {
        crate::console::note(line);
    }
    fit_server_to_connections(plan, &mut server)?;
    check_caps(plan, &server)?;
    if dry_run {
        out!("{}", plan.describe());
        return Ok(Finished::Success);
    }
    let mut output = output()?;
    if plan.matrix.until_decided.is_some() {
        // Between rounds the runner asks the verdict, which it must not know.
        output.judge = Some(Box::new(crate::view::verdict::still_undecided));
    }
    // A finished group's line says what the verdict found, which the runner must not know.
    output.answer = Some(Box::new(crate::view::verdict::group_answer));
    let outcome = runner::run(plan, &server, &output);
    finish(outcome, &output)
}

/// Server connections the throwaway server accepts unless more are needed (its config).
const THROWAWAY_MAX_CONNECTIONS: u32 = 1200;

/// Makes room for the plan's largest cell: this process's open-file limit raised (one
/// socket per connection), and on a throwaway server `max_connections` and `back_log`
/// raised past the default 1,200 when a cell needs more (unless `--server-opt` set them).
/// An external server's limits are its own: the error a refused connection gets names them.
fn fit_server_to_connections(
    plan: &crate::plan::Plan,
    server: &mut crate::server::ServerArgsResolved,
) -> anyhow::Result<()> {
    let most = plan
        .steps
        .iter()
        .filter_map(|step| match step {
            crate::plan::Step::Cell(cell) => Some(cell.threads),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    // Connections plus the probes' and the prepare's, and the files a process keeps open.
    let files_needed = u64::from(most) + 200;
    let files = crate::driver::events::raise_open_files();
    if files < files_needed {
        anyhow::bail!(
            "{most} connections need about {files_needed} open files, but this process may open only {files}: raise the limit (`ulimit -n {files_needed}`; the hard limit in /etc/security/limits.conf, or LimitNOFILE= for a service) or use fewer --threads"
        );
    }
    let wanted = most + 200;
    if server.dsn.is_none() && wanted > THROWAWAY_MAX_CONNECTIONS {
        let opts = &mut server.options.server_opts;
        for name in ["max_connections", "back_log"] {
            if !opts.iter().any(|(key, _)| key == name) {
                // back_log holds the connections that arrive at once; the server caps it
                // at 65,535.
                let value = if name == "back_log" {
                    wanted.min(65_535)
                } else {
                    wanted
                };
                opts.push((name.to_string(), value.to_string()));
            }
        }
    }
    Ok(())
}
