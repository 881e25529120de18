//! A script's cell: each connection thread a Lua state of its own running `thread_init`,
//! then `event` in the driver's loop (ignorable errors restart the event, as sysbench's
//! do), then `thread_done`; the script's `init` before the cell and `done` after, in a
//! state of their own. Statements are the query kinds, learned as they run (their
//! digests). On the event driver every SQL call suspends the connection's coroutine, so
//! one loop thread holds many Lua connections.
//!
//! Owns: the workload and worker of a script's cells. Must not know the runner.

use std::sync::{Arc, Mutex};

use super::api::{Context, Slots, SLOTS};
use super::script::{Declared, Settings, State};
use crate::driver::{Worker, Workload};
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;
use crate::sqlerror::{ErrorClass, QueryFailure};

/// The name of the mismatch a ROLLBACK that undid nothing counts under.
pub const ROLLBACK: &str = crate::sqlerror::ROLLBACK_NOT_HONOURED;

/// The state that runs `init` and `done`, held by the workload. Only the thread that
/// builds and drops the workload (the runner's) touches it.
struct MainState(State);
// SAFETY: see above: the Lua state is created, used and closed on one thread; the mutex
// only satisfies `Workload: Sync`.
unsafe impl Send for MainState {}

pub struct LuaWorkload {
    pub settings: Arc<Settings>,
    pub declared: Arc<Declared>,
    pub spec: ConnectionSpec,
    pub seed: u64,
    pub slots: Arc<Slots>,
    main: Mutex<Option<MainState>>,
}

impl LuaWorkload {
    /// The cell's workload, its script's `init` run.
    pub fn new(
        settings: Arc<Settings>,
        declared: Arc<Declared>,
        spec: ConnectionSpec,
        seed: u64,
    ) -> anyhow::Result<LuaWorkload> {
        let slots = Arc::new(Slots::default());
        let workload = LuaWorkload {
            settings,
            declared,
            spec,
            seed,
            slots,
            main: Mutex::new(None),
        };
        if workload.declared.has_function("init") || workload.declared.has_function("done") {
            let state = workload.state(0, u32::MAX)?;
            if state.has_function("init") {
                state.call("init", ())?;
            }
            *workload.main.lock().unwrap_or_else(|e| e.into_inner()) = Some(MainState(state));
        }
        Ok(workload)
    }

    /// A state for connection `index` as thread `tid`.
    fn state(&self, index: usize, tid: u32) -> anyhow::Result<State> {
        let context = Context::new(
            self.spec.clone(),
            index,
            self.settings.ignore_errors()?,
            Arc::clone(&self.slots),
            self.settings.rand_spec()?,
            self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(tid),
        )
        .map_err(anyhow::Error::msg)?;
        State::open(&self.settings, Some(&self.declared), context, tid)
    }
}

impl Drop for LuaWorkload {
    fn drop(&mut self) {
        let main = self
            .main
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(MainState(state)) = main {
            if state.has_function("done") {
                if let Err(err) = state.call("done", ()) {
                    crate::console::note(&format!("{}: {err:#}", self.settings.script.name));
                }
            }
        }
    }
}

impl Workload for LuaWorkload {
    fn query_kinds(&self) -> Vec<String> {
        (0..SLOTS).map(|slot| format!("statement {slot}")).collect()
    }

    fn connections_per_loop(&self) -> Option<usize> {
        // Measured at 16 connections against sysbench (4 rounds of 4 s, medians): one loop
        // gave 0.81x sysbench's QPS on oltp_point_select.lua and 0.97x on
        // oltp_read_write.lua, two loops 0.92x and 1.03x, for 3-4% more client CPU per
        // query. A script's events take more client time than the built-in workloads', so
        // a loop fills at fewer connections.
        Some(8)
    }

    fn learned_kinds(&self) -> Option<Vec<String>> {
        Some(self.slots.names())
    }

    fn statement_samples(
        &self,
        count: usize,
    ) -> Vec<crate::measure::statement_probe::StatementSample> {
        let names = self.slots.names();
        let examples = self
            .slots
            .examples
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        examples
            .iter()
            .filter(|(slot, _)| !names[**slot].is_empty())
            .map(
                |(slot, (sql, params))| crate::measure::statement_probe::StatementSample {
                    name: names[*slot].clone(),
                    sql: sql.clone(),
                    params: params.iter().take(count.max(1)).cloned().collect(),
                },
            )
            .collect()
    }

    fn mismatches(&self) -> Vec<(String, u64, String)> {
        let ignored = self
            .slots
            .rollbacks_not_honoured
            .load(std::sync::atomic::Ordering::Relaxed);
        if ignored == 0 {
            return Vec::new();
        }
        vec![(
            ROLLBACK.to_string(),
            ignored,
            "ROLLBACK left changes in place: the server warned that non-transactional tables could not be rolled back (1196)".into(),
        )]
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let tid = worker_index as u32;
        let state = self.state(worker_index, tid)?;
        if !state.has_function("event") {
            anyhow::bail!(
                "{} defines no event() function: it cannot run (sysbench would say the same)",
                self.settings.script.name
            );
        }
        if state.has_function("thread_init") {
            state.call("thread_init", tid)?;
        }
        let event = state
            .lua
            .globals()
            .get::<mlua::Function>("__enginebench_event")
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        Ok(Box::new(LuaWorker {
            event,
            state,
            stopped: false,
        }))
    }
}

/// One connection thread's state.
struct LuaWorker {
    /// The prelude's event runner (pcall around the script's `event`).
    event: mlua::Function,
    state: State,
    stopped: bool,
}

// SAFETY: a worker is opened inside its own thread (or its event loop's coroutine) and
// used only there; its Lua state never meets another thread.
unsafe impl Send for LuaWorker {}

impl Worker for LuaWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let context = &self.state.context;
        context.recorder.set(recorder);
        let outcome = self.event.call::<i64>(self.state.tid);
        context.recorder.set(std::ptr::null_mut());
        match outcome {
            Ok(0) => Ok(()),
            Ok(1) => Err(context.ignored.take().unwrap_or(QueryFailure {
                kind_index: SLOTS - 1,
                code: None,
                message: "the script restarted its event".into(),
                class: ErrorClass::Survivable,
            })),
            Ok(_) => {
                // event() returned a true value: sysbench stops this thread.
                self.stopped = true;
                Ok(())
            }
            Err(err) => Err(QueryFailure {
                kind_index: SLOTS - 1,
                code: None,
                message: format!(
                    "{}: {:#}",
                    self.state_name(),
                    self.state.failed("event", &err)
                ),
                class: ErrorClass::Fatal,
            }),
        }
    }

    fn finish(&mut self, _recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        if self.state.has_function("thread_done") {
            self.state
                .call("thread_done", self.state.tid)
                .map_err(|err| QueryFailure {
                    kind_index: SLOTS - 1,
                    code: None,
                    message: format!("{err:#}"),
                    class: ErrorClass::Fatal,
                })?;
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.stopped
    }
}

impl LuaWorker {
    fn state_name(&self) -> String {
        format!("Lua thread {}", self.state.tid)
    }
}
