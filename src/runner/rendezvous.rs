//! Where the agents of one run (`--agent K/N`) meet: a small table on the server they all
//! load, `enginebench_agents.rendezvous`, one row per agent and meeting point. Each agent
//! writes its arrival and polls until all have arrived, so that agent 1 prepares tables
//! before anyone measures, and every cell starts on all agents together (within a few
//! milliseconds: the poll interval plus a round trip). No agent talks to another and no
//! cluster manager is needed; whatever starts the agents (ssh, a Kubernetes Job) is enough.
//! An agent that fails or is interrupted leaves a mark the others stop at; the last agent
//! to leave removes the run's rows (and the database, once empty); what the meetings send
//! is counted as the set-up's own. This must not know what a step does.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use mysql::prelude::Queryable;

use crate::console::note;
use crate::interrupt;
use crate::measure::interval_log::unix_now_s;
use crate::plan::AgentShare;
use crate::server::{ConnectionSpec, OwnConn, Purpose};

const DATABASE: &str = "enginebench_agents";
/// Points with a meaning of their own; steps use 0, 1, 2, ….
const JOINED: i64 = -3;
const FAILED: i64 = -2;
const LEFT: i64 = -1;
/// How long an agent waits for the others at one point before giving up: long enough for
/// agent 1 to load big tables.
const WAIT_LIMIT: Duration = Duration::from_secs(30 * 60);
/// How long one question on the meeting server may wait for its answer.
const MEETING_READ_LIMIT: Duration = Duration::from_secs(10);

pub struct Rendezvous {
    conn: OwnConn,
    key: String,
    pub agent: AgentShare,
    /// The last point met, so a cell's start meets just after its step's.
    last_point: i64,
    /// Whether the first measured cell has started (it waits for `--start-at`).
    pub started: bool,
}

impl Rendezvous {
    /// Joins the run `key` on the server `spec` reaches. Refused when this agent has
    /// joined it already (two processes given the same `--agent`, or a `--start-at` an
    /// earlier run used).
    pub fn join(spec: &ConnectionSpec, agent: &AgentShare, study: &str) -> anyhow::Result<Self> {
        // Every question to the server the agents meet on is short: a server that stops
        // answering ends the wait with an error instead of holding every agent.
        let mut conn = spec
            .with_read_limit(MEETING_READ_LIMIT)
            .connect_own(Purpose::Setup)?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))?;
        conn.query_drop(format!(
            "CREATE TABLE IF NOT EXISTS {DATABASE}.rendezvous (
                run_key VARCHAR(200) NOT NULL,
                point BIGINT NOT NULL,
                agent INT NOT NULL,
                arrived_unix_us BIGINT NOT NULL,
                detail VARCHAR(2000) NOT NULL DEFAULT '',
                PRIMARY KEY (run_key, point, agent))"
        ))?;
        let mut rendezvous = Rendezvous {
            conn,
            key: agent.run_key(study),
            agent: agent.clone(),
            last_point: JOINED,
            started: false,
        };
        match rendezvous.arrive(JOINED, "") {
            Err(mysql::Error::MySqlError(err)) if err.code == 1062 => bail!(
                "agent {}/{} has joined run {} already: each agent needs its own K in --agent K/N, and each run a --start-at of its own (an earlier run with this --start-at left its mark in {DATABASE}.rendezvous)",
                agent.index,
                agent.count,
                rendezvous.key
            ),
            other => other?,
        }
        Ok(rendezvous)
    }

    fn arrive(&mut self, point: i64, detail: &str) -> Result<(), mysql::Error> {
        self.conn.exec_drop(
            format!(
                "INSERT INTO {DATABASE}.rendezvous (run_key, point, agent, arrived_unix_us, detail) VALUES (?, ?, ?, ?, ?)"
            ),
            (
                &self.key,
                point,
                self.agent.index,
                (unix_now_s() * 1e6) as i64,
                detail.chars().take(2000).collect::<String>(),
            ),
        )
    }

    /// Arrives at `point` (`what` names it in messages) and waits until every agent has.
    /// Fails at once when another agent has failed, on Ctrl-C, or after the wait limit.
    pub fn meet(&mut self, point: i64, what: &str) -> anyhow::Result<()> {
        match self.arrive(point, what) {
            Ok(()) => {}
            // Met here before (a retried step): the row stands.
            Err(mysql::Error::MySqlError(err)) if err.code == 1062 => {}
            Err(err) => return Err(err.into()),
        }
        self.last_point = point;
        let started = Instant::now();
        let mut last_note = Instant::now();
        loop {
            let rows: Vec<(i64, u32, String)> = self
                .conn
                .exec(
                    format!(
                        "SELECT point, agent, detail FROM {DATABASE}.rendezvous WHERE run_key = ? AND point IN (?, ?)"
                    ),
                    (&self.key, point, FAILED),
                )
                .map_err(|err| {
                    anyhow!("cannot read the agents' rendezvous ({DATABASE}.rendezvous) on the server: {err}")
                })?;
            if let Some((_, agent, detail)) = rows
                .iter()
                .find(|(p, agent, _)| *p == FAILED && *agent != self.agent.index)
            {
                bail!("agent {agent}/{} stopped ({detail}), so this agent stops too; what it measured so far is kept", self.agent.count);
            }
            let arrived: Vec<u32> = rows
                .iter()
                .filter(|(p, ..)| *p == point)
                .map(|(_, agent, _)| *agent)
                .collect();
            if arrived.len() >= self.agent.count as usize {
                return Ok(());
            }
            if interrupt::requested() {
                bail!("interrupted while waiting for the other agents at {what}");
            }
            let missing: Vec<String> = (1..=self.agent.count)
                .filter(|k| !arrived.contains(k))
                .map(|k| k.to_string())
                .collect();
            if started.elapsed() > WAIT_LIMIT {
                bail!(
                    "agent(s) {} did not reach {what} within {} min: check that they run (same study, --agent K/{} and --start-at {}) and reach this server",
                    missing.join(", "),
                    WAIT_LIMIT.as_secs() / 60,
                    self.agent.count,
                    self.agent.start_at_text
                );
            }
            if last_note.elapsed() > Duration::from_secs(10) {
                note(&format!(
                    "agent {}/{}: waiting for agent(s) {} at {what}...",
                    self.agent.index,
                    self.agent.count,
                    missing.join(", ")
                ));
                last_note = Instant::now();
            }
            // Tight polling while the others are likely close (a cell's start), lighter
            // while one prepares tables.
            std::thread::sleep(if started.elapsed() < Duration::from_secs(2) {
                Duration::from_millis(2)
            } else {
                Duration::from_millis(50)
            });
        }
    }

    /// Meets the others at the point just after the last one (a cell's start, once every
    /// agent's workers are connected).
    pub fn meet_next(&mut self, what: &str) -> anyhow::Result<()> {
        self.meet(self.last_point + 1, what)
    }

    /// Tells the other agents this one has stopped, and why: they stop at their next
    /// meeting instead of waiting for it.
    pub fn fail(&mut self, why: &str) {
        let _ = self.arrive(FAILED, why);
    }

    /// Leaves the run; the last agent to leave removes its rows, and the database once
    /// no run uses it.
    pub fn leave(mut self) {
        let _ = self.arrive(LEFT, "");
        // An agent that failed may never come back to leave: its mark stands for it.
        let gone: Option<usize> = self
            .conn
            .exec_first(
                format!(
                    "SELECT COUNT(DISTINCT agent) FROM {DATABASE}.rendezvous WHERE run_key = ? AND point IN (?, ?)"
                ),
                (&self.key, LEFT, FAILED),
            )
            .unwrap_or(None);
        if gone.is_none_or(|gone| gone < self.agent.count as usize) {
            return;
        }
        let _ = self.conn.exec_drop(
            format!("DELETE FROM {DATABASE}.rendezvous WHERE run_key = ?"),
            (&self.key,),
        );
        let remaining: Option<u64> = self
            .conn
            .query_first(format!("SELECT COUNT(*) FROM {DATABASE}.rendezvous"))
            .unwrap_or(None);
        if remaining == Some(0) {
            let _ = self
                .conn
                .query_drop(format!("DROP DATABASE IF EXISTS {DATABASE}"));
        }
    }

    /// Sleeps until `--start-at` (interruptibly); returns how late this agent is, in ms,
    /// when the agreed time had passed already.
    pub fn wait_for_start(&self) -> anyhow::Result<f64> {
        loop {
            let now = std::time::SystemTime::now();
            match self.agent.start_at.duration_since(now) {
                Ok(left) if !left.is_zero() => {
                    if interrupt::requested() {
                        return Err(anyhow!("interrupted while waiting for --start-at"));
                    }
                    std::thread::sleep(left.min(Duration::from_millis(50)));
                }
                Ok(_) => return Ok(0.0),
                Err(late) => return Ok(late.duration().as_secs_f64() * 1000.0),
            }
        }
    }
}
