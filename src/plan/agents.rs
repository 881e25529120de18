//! One agent's share of a study run from several client hosts (`--agent K/N --start-at
//! TIME`): its threads out of each cell's (and what the study's kind shares beside them), which
//! steps only agent 1 does (everything that creates or changes tables), and the key that
//! makes the agents of one run find each other and no other run's. The plan must not know
//! how agents meet (that is the runner's rendezvous) nor how parts are merged.

use std::time::SystemTime;

use anyhow::bail;

use super::{Plan, Step};

/// `--agent K/N`, with the wall-clock time its measured phase starts at.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentShare {
    /// 1-based.
    pub index: u32,
    pub count: u32,
    pub start_at: SystemTime,
    /// `--start-at` as given (RFC 3339), for messages and the record.
    pub start_at_text: String,
}

impl AgentShare {
    /// Parses `K/N` (1 ≤ K ≤ N).
    pub fn parse_position(text: &str) -> Result<(u32, u32), String> {
        let (index, count) = text.split_once('/').ok_or_else(|| {
            format!("'{text}' is not K/N (e.g. --agent 1/2 for the first of two)")
        })?;
        let index: u32 = index
            .trim()
            .parse()
            .map_err(|_| format!("'{text}': K must be a whole number"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| format!("'{text}': N must be a whole number"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "'{text}': agents are numbered 1 to N (e.g. 1/2 and 2/2)"
            ));
        }
        Ok((index, count))
    }

    /// This agent's part of `total` (threads, events): shared as evenly as whole numbers
    /// allow, the first agents taking one more.
    pub fn share(&self, total: u64) -> u64 {
        let count = u64::from(self.count);
        let extra = u64::from(self.index - 1 < (total % count) as u32);
        total / count + extra
    }

    /// Whether this agent does the steps that create or change tables (agent 1); the
    /// others wait for them at the rendezvous.
    pub fn prepares(&self) -> bool {
        self.index == 1
    }

    /// What the agents of one run share and no other run does: the study, the agent count
    /// and the agreed start.
    pub fn run_key(&self, study: &str) -> String {
        let mut key = format!("{study}@{}/{}", self.start_at_text, self.count);
        key.truncate(190);
        key
    }
}

/// Whether only the preparing agent does `step`: everything but measured cells creates,
/// fills or measures tables, and must happen once.
pub fn preparing_only(step: &Step) -> bool {
    !matches!(step, Step::Cell(_))
}

impl Plan {
    /// The plan for agent `agent`: each cell at its share of the threads, of the total
    /// rate and of the event count. Refused when a cell has fewer threads than there are
    /// agents, or when the study compares server profiles (agents share one server, named
    /// by `--dsn`).
    pub fn for_agent(mut self, agent: AgentShare) -> anyhow::Result<Plan> {
        if !self.profiles.is_empty() {
            bail!(
                "--agent: this study compares server profiles, which needs throwaway servers of its own; agents share one server (--dsn): run it without --agent"
            );
        }
        if !self.matrix.crash.is_empty() {
            bail!(
                "--agent: --crash kills and restarts the server, which agents share (--dsn) and cannot; run crash trials without --agent"
            );
        }
        if let Some(cell) = self.cells().find(|cell| cell.threads < agent.count) {
            bail!(
                "--agent {}/{}: {} has {} thread(s), which {} agents cannot share; give thread counts of at least {} (each agent runs its share)",
                agent.index,
                agent.count,
                self.phase(cell.phase).name,
                cell.threads,
                agent.count,
                agent.count
            );
        }
        for step in &mut self.steps {
            if let Step::Cell(cell) = step {
                cell.threads = agent.share(u64::from(cell.threads)) as u32;
            }
        }
        // Each agent paces its share of the total rate and completes its share of the
        // events.
        self.matrix.rate = self.matrix.rate.map(|rate| rate / f64::from(agent.count));
        if let Some(events) = self.matrix.events {
            if events < u64::from(agent.count) {
                bail!(
                    "--agent: --events {events} cannot be shared among {} agents",
                    agent.count
                );
            }
            self.matrix.events = Some(agent.share(events));
        }
        self.agent = Some(agent);
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(index: u32, count: u32) -> AgentShare {
        AgentShare {
            index,
            count,
            start_at: SystemTime::UNIX_EPOCH,
            start_at_text: "2026-11-23T10:00:00Z".into(),
        }
    }

    #[test]
    fn shares_add_up_to_the_whole_and_differ_by_at_most_one() {
        for total in [2u64, 5, 7, 64, 1001] {
            for count in 1..=5u32 {
                if total < u64::from(count) {
                    continue;
                }
                let shares: Vec<u64> = (1..=count).map(|k| agent(k, count).share(total)).collect();
                assert_eq!(shares.iter().sum::<u64>(), total, "{total} over {count}");
                let (min, max) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
                assert!(max - min <= 1, "{shares:?}");
            }
        }
        assert_eq!(agent(1, 2).share(5), 3);
        assert_eq!(agent(2, 2).share(5), 2);
    }

    #[test]
    fn positions_parse_and_nonsense_is_refused() {
        assert_eq!(AgentShare::parse_position("2/3"), Ok((2, 3)));
        for bad in ["3/2", "0/2", "1/0", "2", "a/b", "1/2/3"] {
            assert!(AgentShare::parse_position(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_run_key_names_study_start_and_count() {
        assert_eq!(agent(1, 2).run_key("s0"), "s0@2026-11-23T10:00:00Z/2");
    }
}
