//! A kind of study defined here, outside enginebench's sources, runs end to end through
//! the same plan, runner, record and reports as the built-in kinds: its own step on each
//! engine, its cells on the real driver against a real server, its part of the record and
//! its own report section. Nothing in `src/` names it; `src/studies/mod.rs` would need one
//! line for `enginebench run` to find it by name.

use crate::common;

use std::sync::Arc;

use enginebench::driver::{QueryFailure, Worker, Workload};
use enginebench::engine::Engine;
use enginebench::measure::QueryRecorder;
use enginebench::plan::{
    run_phase_cells, About, CellLink, CellStep, Matrix, Plan, Step, StepHost, StudyKind,
};
use enginebench::report::text::TableStyle;
use enginebench::results::{RunRecord, StepRecord};
use enginebench::server::ConnectionSpec;
use enginebench::view::layout::{Layout, Part};
use enginebench::view::section::{Block, Section};
use mysql::prelude::Queryable;

/// "Tally": each event inserts one row; the kind's own step makes the table on each engine.
/// The matrix (engines, threads, loops) is the plan's.
#[derive(Debug)]
struct Tally;

const MAKE_TABLE: usize = 0;

impl StudyKind for Tally {
    fn name(&self) -> &str {
        "tally"
    }
    fn about(&self) -> About {
        About::new("tally", "one row inserted per event")
    }

    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix) {
        record.parameters = matrix.recorded(&["loops", "engines"]);
        record.title.push_str(" (an example kind)");
    }
    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step> {
        let mut steps = Vec::new();
        for &engine in &matrix.engines {
            steps.push(Step::Own {
                what: MAKE_TABLE,
                engine,
            });
            steps.extend(run_phase_cells(0, &matrix.threads, &[engine], matrix));
        }
        steps
    }
    fn describe_step(&self, step: &Step, _matrix: &Matrix) -> String {
        format!("make the tally table: {step:?}")
    }
    fn workload(&self, _cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>> {
        Ok(Box::new(TallyWorkload { spec: link.spec }))
    }
    fn run_own_step(
        &self,
        what: usize,
        engine: Engine,
        matrix: &Matrix,
        host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        assert_eq!(what, MAKE_TABLE);
        let database = self.database_for(engine, host.run_database(), matrix);
        host.fresh_database(&database, &["tally"])?;
        host.connect(&database)?.query_drop(format!(
            "CREATE TABLE tally (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE={}",
            engine.sql_name()
        ))?;
        host.record_step(StepRecord {
            name: "make_tally".into(),
            engine: Some(engine),
            profile: None,
            detail: format!("tally in {database}"),
            elapsed_ms: 0.0,
            rows: None,
            error: None,
        })
    }
}

struct TallyWorkload {
    spec: ConnectionSpec,
}

impl Workload for TallyWorkload {
    fn query_kinds(&self) -> Vec<String> {
        vec!["insert".into()]
    }
    fn open_worker(&self, _worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        Ok(Box::new(TallyWorker {
            conn: self.spec.connect()?,
        }))
    }
    fn blocking_client(&self) -> bool {
        true
    }
}

struct TallyWorker {
    conn: mysql::Conn,
}

impl Worker for TallyWorker {
    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let conn = &mut self.conn;
        recorder.measure(0, || conn.query_drop("INSERT INTO tally () VALUES ()"))
    }
}

/// The kind's own report section, described once.
fn tally_section(view: &enginebench::view::View) -> Vec<Section> {
    vec![Section {
        id: "tally",
        title: "Tally".into(),
        blocks: vec![Block::Line(format!(
            "{} cell(s) tallied",
            view.record.cells.len()
        ))],
    }]
}

#[test]
fn a_kind_defined_outside_the_crate_runs_through_plan_runner_record_and_reports() {
    common::require_mariadb();
    let server = enginebench::server::ThrowawayServer::start(&Default::default()).unwrap();
    let target = common::as_external(&server);
    let output = enginebench::runner::RunOutput::quiet(std::time::Duration::from_millis(200));
    // The runner paces each cell from the matrix: 2 threads × 25 loops.
    let plan = Plan::new(
        Arc::new(Tally),
        &Matrix {
            engines: vec![Engine::InnoDb, Engine::MyIsam],
            threads: vec![2],
            loops: Some(25),
            ..Matrix::default()
        },
    );
    assert!(
        plan.describe().contains("make the tally table"),
        "{}",
        plan.describe()
    );
    let record = enginebench::runner::run(&plan, &target, &output)
        .map_err(|(err, _)| err)
        .unwrap();

    assert_eq!(record.kind, "tally");
    assert_eq!(record.title, "one row inserted per event (an example kind)");
    assert_eq!(record.parameters["loops"], 25);
    let made: Vec<_> = record
        .steps
        .iter()
        .filter(|step| step.name == "make_tally")
        .map(|step| step.engine)
        .collect();
    assert_eq!(made, vec![Some(Engine::InnoDb), Some(Engine::MyIsam)]);
    assert_eq!(record.cells.len(), 2);
    for cell in &record.cells {
        // 2 threads × 25 loops, each one insert, measured as the kind's one query kind.
        assert_eq!(cell.events, 50, "{:?}", cell.engine);
        assert_eq!(cell.queries.len(), 1);
        assert_eq!(cell.queries[0].name, "insert");
        assert_eq!(cell.queries[0].count, 50);
    }
    // The run left nothing behind on the shared server: the kind's tables are dropped.
    let mut conn = server.connection_spec(None).connect().unwrap();
    let left: Option<u64> = conn
        .query_first("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'tally'")
        .unwrap();
    assert_eq!(left, Some(0));

    // Reports: a kind this build's registry does not list gets every shared section; with
    // its own layout, its own section is drawn in text and in HTML from one description.
    let view = enginebench::view::View::of(&record);
    let shared = enginebench::commands::tables(&view, TableStyle::Markdown);
    assert!(
        shared.contains("InnoDB") && shared.contains("MyISAM"),
        "{shared}"
    );
    // The kind's layout is data: its own section, then the shared phases' tables.
    let layout = Layout {
        parts: &[Part::Own, Part::Phases],
        own_sections: tally_section,
    };
    let text = enginebench::report::text::tables(&view, layout, TableStyle::Markdown);
    assert!(text.starts_with("2 cell(s) tallied\n"), "{text}");
    let html = enginebench::report::html::page(&view, "tally", layout);
    assert!(
        html.contains("<section id=\"tally\"><h2>Tally</h2><p>2 cell(s) tallied</p></section>"),
        "{html}"
    );
}
