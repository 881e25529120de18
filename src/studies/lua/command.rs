//! A script's declarations and its commands run outside the cell loop (a custom command, or
//! sysbench's prepare, cleanup and help functions), in one state or in one per thread; what
//! a command sends is counted as enginebench's own set-up. It must not know plans, cells or
//! records.

use super::*;

/// What `settings`' script declares, read from a state of its own.
pub fn declarations(settings: &Settings) -> anyhow::Result<Declared> {
    let context = probe_context(settings)?;
    let state = State::open(settings, None, context, 0)
        .with_context(|| format!("loading {}", settings.script.name))?;
    state.declared()
}

/// A state of `settings`' script with its options, connecting nowhere useful: for the
/// report hooks.
pub fn open_plain_state(settings: &Settings, declared: &Declared) -> anyhow::Result<State> {
    State::open(settings, Some(declared), probe_context(settings)?, 0)
}

/// A context for a state that connects nowhere useful (reading declarations).
pub(super) fn probe_context(settings: &Settings) -> anyhow::Result<api::Context> {
    api::Context::new(
        ConnectionSpec::unix_socket(std::path::Path::new("/nonexistent"), "root", None),
        0,
        settings.ignore_errors()?,
        Default::default(),
        settings.rand_spec()?,
        0,
    )
    .map_err(anyhow::Error::msg)
}

/// Runs script command `command` (a custom one, or sysbench's prepare/cleanup/help
/// functions) on `spec`: in `threads` states when the script marks it parallel, else in
/// one. Returns the lines the script printed when they go to stderr (a study's).
pub fn run_command(
    settings: &Settings,
    declared: &Declared,
    command: &str,
    spec: &ConnectionSpec,
    threads: u32,
    seed: u64,
) -> anyhow::Result<Vec<String>> {
    let mut settings = settings.clone();
    settings.command = command.to_string();
    settings.global.threads = threads.max(1);
    let parallel = declared.commands.get(command).copied();
    let custom = parallel.is_some();
    if !custom && !declared.has_function(command) {
        bail!(
            "{}: no command '{command}' (the script defines: {})",
            settings.script.name,
            declared
                .commands
                .keys()
                .cloned()
                .chain(
                    declared
                        .functions
                        .iter()
                        .filter(|f| ["prepare", "cleanup", "help", "prewarm"].contains(&f.as_str()))
                        .cloned()
                )
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let states = if parallel == Some(true) {
        settings.global.threads
    } else {
        1
    };
    let open = |tid: u32| -> anyhow::Result<State> {
        let context = api::Context::new(
            spec.clone(),
            tid as usize,
            settings.ignore_errors()?,
            Default::default(),
            settings.rand_spec()?,
            seed ^ u64::from(tid),
        )
        .map_err(anyhow::Error::msg)?
        .counted_as(crate::server::Purpose::Setup);
        State::open(&settings, Some(declared), context, tid)
    };
    let run_one = |tid: u32| -> anyhow::Result<Vec<String>> {
        let state = open(tid)?;
        if custom {
            state.call_command(command)?;
        } else {
            state.call(command, ())?;
        }
        Ok(state.printed())
    };
    if states == 1 {
        return run_one(0);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..states)
            .map(|tid| scope.spawn(move || run_one(tid)))
            .collect();
        let mut first_error = None;
        let mut printed = Vec::new();
        for handle in handles {
            let outcome = handle
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a command thread panicked")));
            match outcome {
                Ok(lines) => printed.extend(lines),
                Err(err) => {
                    first_error.get_or_insert(err);
                }
            }
        }
        first_error.map_or(Ok(printed), Err)
    })
}
