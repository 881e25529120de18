//! The replay kind: a captured workload replayed on each engine (and build), every repeat
//! from the capture's snapshot again. Owns its parameters (the capture, speed, database
//! mapping), its own step (the snapshot loaded), its workload (one worker per captured
//! connection), its part of the record and its report (what each captured statement kind
//! did here against what it did there). What a capture holds the capture stage says.

mod snapshot;
mod tables;
mod workload;

pub use snapshot::with_engine;
pub use workload::ReplayWorkload;

use anyhow::bail;
use serde::Serialize;
use std::sync::Arc;

use super::{Kind, StudyArgs};
use crate::driver::Workload;
use crate::engine::Engine;
use crate::plan::{
    run_phase_cells, About, CellLink, CellStep, Defaults, Description, Matrix, Pacing,
    PhaseTopology, RunPhase, Step, StepHost, Study, StudyKind,
};
use crate::results::RunRecord;
use crate::scenario::StatementClass;
use crate::view::layout::{Layout, Part};

/// The name a replay's record carries.
pub const REPLAY_STUDY: &str = "replay";

/// The replay's steps of its own: the snapshot loaded into an engine's tables before each
/// cell; after it, ROLLBACKs that undid nothing mark the engine not comparable.
const LOAD_SNAPSHOT: usize = 0;
const AFTER_CELL: usize = 1;

/// The registry's entry: what the commands and the reports know of this kind.
pub const KIND: Kind = Kind {
    name: "replay",
    command: "replay",
    study_named: |file, matrix, args| Some(replay_study(file, matrix, args)),
    layout: Layout {
        parts: &[Part::Own, Part::Agents, Part::Status, Part::Warnings],
        own_sections: |view| tables::replay_section(view).into_iter().collect(),
    },
    protocol: crate::driver::Protocol::AsSent,
    protocol_fixed: Some(
        "a replay sends each statement as the application did (text or prepared, as captured)",
    ),
    ..Kind::NONE
};

/// A replay's capture and choices; the choices are kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayParams {
    /// The capture file, as named on the command line.
    pub file: String,
    /// A factor on the captured pace; None: as fast as each connection can go.
    pub speed: Option<f64>,
    /// The database the snapshot is loaded into: `--database`, or the captured one.
    pub database: Option<String>,
    /// The captured database, when `--database` maps it to another: connections that chose
    /// it, and USE of it, go to `database` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// Statement kinds that name the captured database explicitly (`db.table`): they run
    /// as written, against the captured database, and the plan says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub naming_captured: Vec<String>,
    #[serde(skip)]
    pub capture: std::sync::Arc<crate::capture::Capture>,
    #[serde(skip)]
    pub script: std::sync::Arc<crate::capture::ReplayScript>,
}

/// `enginebench replay FILE`'s study: the capture read (refused when it holds nothing to
/// replay), its snapshot loaded and replayed on each of the matrix's engines (and builds),
/// every repeat from the snapshot again; `speed` (a factor on the captured pace; none: as
/// fast as it goes) and `database` (where the snapshot goes) are the command's parameters.
fn replay_study(file: &str, matrix: &Matrix, args: &StudyArgs) -> anyhow::Result<Study> {
    let speed: Option<f64> = args.parameter("speed")?;
    let database: Option<String> = args.parameter("database")?;
    let file = std::path::Path::new(file);
    let capture = crate::capture::read(file)?;
    let script = crate::capture::ReplayScript::of(&capture);
    if script.connections.is_empty() {
        bail!(
            "{} holds no command to replay ({} command(s) captured, none a query, prepared statement, USE or ping of a connection that logged in): capture while your application runs",
            file.display(),
            capture.commands.len()
        );
    }
    super::choices::check_servers(&matrix.servers)?;
    let captured = capture.header().database.clone();
    // `--database` maps the captured default database to the one given (a staging copy
    // of production usually still holds the original).
    let renamed_from = match (&database, &captured) {
        (Some(given), Some(captured)) if given != captured => Some(captured.clone()),
        _ => None,
    };
    let naming_captured = renamed_from
        .as_deref()
        .map(|captured| {
            script
                .kinds
                .iter()
                .filter(|kind| names_database(kind, captured))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let database = database.or(captured);
    Ok(Arc::new(ReplayParams {
        file: file.display().to_string(),
        speed,
        database,
        renamed_from,
        naming_captured,
        capture: std::sync::Arc::new(capture),
        script: std::sync::Arc::new(script),
    }))
}

/// Why a replayed cell is not comparable with the others: ROLLBACKs its engine did not
/// honour (the capture's transactions then left changes the captured server undid), with
/// how many answers differed from the captured ones after them. None when every ROLLBACK
/// was honoured.
fn rollbacks_not_honoured(cell: &crate::results::CellRecord) -> Option<String> {
    let rollback = crate::sqlerror::ROLLBACK_NOT_HONOURED;
    let ignored = cell.mismatches.iter().find(|m| m.name == rollback)?;
    let differed: u64 = cell
        .mismatches
        .iter()
        .filter(|m| m.name != rollback)
        .map(|m| m.count)
        .sum();
    Some(format!(
        "{} ROLLBACK(s) not honoured ({}){}",
        ignored.count,
        ignored.example,
        if differed > 0 {
            format!("; {differed} answer(s) differed from the captured ones")
        } else {
            String::new()
        }
    ))
}

/// Whether `sql` names `database` as a qualifier (`db.t`, `` `db`.t ``), in any case.
fn names_database(sql: &str, database: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    let database = database.to_ascii_lowercase();
    [format!("{database}."), format!("`{database}`.")]
        .iter()
        .any(|qualified| {
            lower.match_indices(qualified.as_str()).any(|(at, _)| {
                // The name starts here, not inside a longer identifier.
                !lower[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            })
        })
}

impl StudyKind for ReplayParams {
    fn name(&self) -> &str {
        REPLAY_STUDY
    }

    fn about(&self) -> About {
        About {
            description: {
                let mut notes = Vec::new();
                if let (Some(database), Some(captured)) = (&self.database, &self.renamed_from) {
                    notes.push(format!(
                        "the captured database {captured} is replayed as {database}: the snapshot loads into {database}, and connections that chose {captured} or USE it get {database}"
                    ));
                    if !self.naming_captured.is_empty() {
                        notes.push(format!(
                            "{} statement kind(s) name {captured} explicitly and run as written, against {captured} on that server (first: {})",
                            self.naming_captured.len(),
                            self.naming_captured[0]
                        ));
                    }
                }
                Description {
                    title: format!(
                        "{} replayed: {} connection(s), {} command(s), {}",
                        self.file,
                        self.script.connections.len(),
                        self.script.commands(),
                        self.speed
                            .map_or("as fast as possible".to_string(), |s| format!(
                                "at {s}× the captured pace"
                            ))
                    ),
                    heading: None,
                    notes,
                }
            },
            // One worker per captured connection, each ending with its script.
            defaults: {
                Defaults {
                    threads: vec![self.script.connections.len().max(1) as u32],
                    time: None,
                    ..Defaults::default()
                }
            },
            ..About::new(KIND.name, "")
        }
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        super::record_parameters(record, self, matrix, &["engines", "repeat"]);
        record.statement_classes = self
            .script
            .kinds
            .iter()
            .map(|kind| {
                let sql = kind.strip_prefix("prepare: ").unwrap_or(kind);
                (kind.clone(), StatementClass::of_sql(sql))
            })
            .collect();
        record.replay = Some(snapshot::replay_record(self));
    }

    /// Each connection ends with its script, at the captured pace (or `speed` times it).
    fn phase(&self, _phase: usize, _matrix: &Matrix) -> RunPhase {
        RunPhase {
            name: REPLAY_STUDY.to_string(),
            writes: true,
            topology: PhaseTopology::default(),
            pacing: Pacing::default(),
            protocol: crate::driver::CellProtocol::of(KIND.protocol, None),
            count: Some(format!(
                "{} captured command(s) over {} connection(s)",
                self.script.commands(),
                self.script.connections.len()
            )),
        }
    }

    /// The captured statements name the captured database (or the one it maps to).
    fn database_for(&self, _engine: Engine, database: &str, _matrix: &Matrix) -> String {
        self.database
            .clone()
            .unwrap_or_else(|| database.to_string())
    }

    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        // Every repeat starts from the snapshot: the replay's writes change it.
        let threads = [self.script.connections.len().max(1) as u32];
        let mut steps = Vec::new();
        for cell in run_phase_cells(0, &threads, &matrix.engines, matrix) {
            let Step::Cell(cell_step) = &cell else {
                steps.push(cell);
                continue;
            };
            let engine = cell_step.engine;
            steps.push(Step::Own {
                what: LOAD_SNAPSHOT,
                engine,
            });
            steps.push(cell);
            steps.push(Step::Own {
                what: AFTER_CELL,
                engine,
            });
        }
        steps
    }

    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        let Step::Own { what, engine } = step else {
            return format!("{step:?}");
        };
        if *what == AFTER_CELL {
            return format!("on {engine}: a ROLLBACK that undid nothing marks it not comparable");
        }
        format!(
            "load the snapshot ({} table(s), {} row(s)) into {} with ENGINE={}",
            self.capture.tables.len(),
            self.capture
                .rows
                .iter()
                .map(|r| r.rows.len())
                .sum::<usize>(),
            match (&self.database, &self.renamed_from) {
                (Some(database), Some(captured)) => format!(
                    "{database} (the captured {captured}, mapped by --database{})",
                    if self.naming_captured.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} statement kind(s) name {captured} explicitly and run against it as written",
                            self.naming_captured.len()
                        )
                    }
                ),
                (Some(database), None) => database.clone(),
                (None, _) => "the run's database".into(),
            },
            engine.sql_name()
        )
    }

    fn workload(&self, _cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(ReplayWorkload::new(
            self.capture.clone(),
            self.script.clone(),
            link.spec,
            link.database,
            self.renamed_from.clone(),
            self.speed,
        )))
    }

    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        match what {
            LOAD_SNAPSHOT => snapshot::load_snapshot(self, host, engine, matrix),
            AFTER_CELL => {
                // The cell this step follows may have been left out (a round that repeats
                // only what is undecided): then the last cell is another engine's.
                let own = host.last_cell().filter(|cell| cell.engine == engine);
                if let Some(why) = own.and_then(rollbacks_not_honoured) {
                    host.mark_not_comparable(engine, why);
                }
                Ok(())
            }
            other => bail!("a replay has no step numbered {other} (a bug in enginebench)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{names_database, rollbacks_not_honoured};
    use crate::results::MismatchRecord;

    #[test]
    fn a_cell_whose_rollbacks_undid_nothing_says_so_with_the_answers_that_differed() {
        let record = crate::results::parse_record(
            include_str!("../../../tests/fixtures/s0-verdict.json"),
            "s0-verdict.json",
        )
        .unwrap();
        let mut cell = record.cells[0].clone();
        let mismatch = |name: &str, count| MismatchRecord {
            name: name.into(),
            count,
            example: format!("{name} example"),
        };
        cell.mismatches = vec![mismatch("SELECT ?", 43)];
        assert_eq!(rollbacks_not_honoured(&cell), None, "no ROLLBACK ignored");
        cell.mismatches.push(mismatch("rollback", 56));
        cell.mismatches.push(mismatch("UPDATE ?", 2));
        assert_eq!(
            rollbacks_not_honoured(&cell).unwrap(),
            "56 ROLLBACK(s) not honoured (rollback example); 45 answer(s) differed from the captured ones"
        );
    }

    #[test]
    fn a_statement_names_a_database_only_as_a_qualifier_of_its_own() {
        assert!(names_database("SELECT * FROM shop.items", "shop"));
        assert!(names_database("select * from `SHOP`.items", "shop"));
        assert!(names_database("UPDATE x JOIN shop.y", "shop"));
        assert!(!names_database("SELECT * FROM items", "shop"));
        assert!(!names_database("SELECT * FROM myshop.items", "shop"));
        assert!(!names_database("SELECT shopping.x FROM shopping", "shop"));
    }
}
