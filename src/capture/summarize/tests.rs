//! Unit tests of the capture summary: fitting, CREATE TABLE reading, the scenario text.

use super::create_table::*;
use super::tables::*;
use super::*;
use crate::capture::format::TableSnapshot;
use crate::capture::format::{Command, Header, RowsChunk};
use crate::scenario::file::{load_scenario, Generator, Phase};

const CREATE: &str = "CREATE TABLE `items` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `name` varchar(20) NOT NULL,\n  `category` enum('a','b','it''s') NOT NULL DEFAULT 'a',\n  `price` decimal(10,2) DEFAULT NULL,\n  `added` datetime NOT NULL,\n  `label` varchar(8) GENERATED ALWAYS AS (concat(`name`,'!')) VIRTUAL,\n  `owner` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `owner` (`owner`),\n  CONSTRAINT `fk` FOREIGN KEY (`owner`) REFERENCES `owners` (`id`)\n) ENGINE=InnoDB AUTO_INCREMENT=41 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";

fn command(connection: u64, kind: CommandKind, sql: Option<&str>) -> Command {
    Command {
        connection,
        start_us: 0,
        end_us: 0,
        kind,
        sql: sql.map(str::to_string),
        statement: None,
        params: Vec::new(),
        database: None,
        response: None,
    }
}

fn capture() -> Capture {
    let rows = (1..=40)
        .map(|i| {
            vec![
                Value::Int(i),
                Value::Text(format!("item{i}")),
                Value::Text(if i % 2 == 0 { "a" } else { "b" }.into()),
                Value::Text(format!("{i}.50")),
                Value::Text(format!("2025-01-{:02} 10:00:00", i % 28 + 1)),
                Value::Text(format!("item{i}!")),
                Value::Null,
            ]
        })
        .collect();
    let mut commands = vec![command(1, CommandKind::Connect, None)];
    for id in [3, 7, 12, 20, 33, 41] {
        commands.push(command(
            1,
            CommandKind::Query,
            Some(&format!("SELECT name FROM shop.items WHERE id = {id}")),
        ));
    }
    for category in ["a", "b", "a", "b"] {
        commands.push(command(
            2,
            CommandKind::Query,
            Some(&format!(
                "UPDATE items SET price = price + 1 WHERE category = '{category}'"
            )),
        ));
    }
    let mut prepare = command(
        2,
        CommandKind::Prepare,
        Some("SELECT price FROM `shop`.`items` WHERE id = ?"),
    );
    prepare.statement = Some(1);
    commands.push(prepare);
    for id in [5, 5, 9, 9, 9] {
        let mut execute = command(2, CommandKind::Execute, None);
        execute.statement = Some(1);
        execute.params = vec![Value::Int(id)];
        commands.push(execute);
    }
    // The same digest as text: counts for it too.
    commands.push(command(
        1,
        CommandKind::Query,
        Some("select price from items where id=5"),
    ));
    let mut orphan = command(3, CommandKind::Execute, None);
    orphan.statement = Some(9);
    commands.push(orphan);
    for sql in [
        "SET NAMES utf8mb4",
        "SHOW TABLES",
        "BEGIN",
        "COMMIT;",
        "SELECT 1; SELECT 2",
        "CREATE TABLE x (a VARCHAR(10))",
    ] {
        commands.push(command(1, CommandKind::Query, Some(sql)));
    }
    commands.push(command(1, CommandKind::Quit, None));
    Capture {
        header: Some(Header::new(
            "general log (mysql.general_log)",
            Some("shop".into()),
            Some("10.11.19-MariaDB".into()),
        )),
        tables: vec![TableSnapshot {
            name: "items".into(),
            create: CREATE.into(),
        }],
        rows: vec![RowsChunk {
            table: "items".into(),
            columns: ["id", "name", "category", "price", "added", "label", "owner"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
        commands,
        end: None,
        warnings: Vec::new(),
    }
}

#[test]
fn a_capture_becomes_a_scenario_with_an_event_per_digest() {
    let text = scenario_text(&capture(), "shop-replay").unwrap();
    let scenario = load_scenario(&text, "shop-replay", &[], None).unwrap();
    assert_eq!(scenario.engines, vec![crate::engine::Engine::InnoDb]);
    assert_eq!(scenario.threads, vec![2]);
    let Phase::Run {
        events,
        ignore_errors,
        ..
    } = &scenario.phases[0]
    else {
        panic!("{text}")
    };
    assert_eq!(ignore_errors, &vec![1062]);
    let summary: Vec<(&str, u32, &str)> = events
        .iter()
        .map(|e| (e.name.as_str(), e.weight, e.statements[0].sql.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("select_items", 6, "SELECT name FROM items WHERE id = ?"),
            (
                "select_items_2",
                6,
                "SELECT price FROM `items` WHERE id = ?"
            ),
            (
                "update_items",
                4,
                "UPDATE items SET price = price + ? WHERE category = ?"
            ),
            ("begin", 1, "BEGIN"),
            ("commit", 1, "COMMIT"),
        ],
        "{text}"
    );
    let params = |event: usize| format!("{:?}", events[event].statements[0].params);
    // Six distinct ids seen once each: their range.
    assert!(
        params(0).starts_with("[Int { min: 3, max: 41"),
        "{}",
        params(0)
    );
    // Executes ran most: their values, which repeat, are picked.
    assert_eq!(params(1), "[Pick([Int(5), Int(9)])]");
    assert_eq!(
        params(2),
        "[Pick([Int(1)]), Pick([Text(\"a\"), Text(\"b\")])]"
    );
    assert!(text.contains("SET ×1"), "{text}");
    assert!(text.contains("SHOW ×1"), "{text}");
    assert!(text.contains("CREATE ×1"), "{text}");
    assert!(
        text.contains("several statements in one query ×1"),
        "{text}"
    );
    assert!(
        text.contains("executes prepared before the capture began ×1"),
        "{text}"
    );
}

#[test]
fn snapshot_tables_become_scenario_tables_with_fitted_columns() {
    let text = scenario_text(&capture(), "shop-replay").unwrap();
    let scenario = load_scenario(&text, "shop-replay", &[], None).unwrap();
    let table = &scenario.tables[0];
    assert_eq!(table.name, "items");
    assert_eq!(table.rows, 40);
    let create = table.create_sql(crate::engine::Engine::MyIsam);
    assert!(
        create.contains("ENGINE=MyISAM DEFAULT CHARSET=utf8mb4"),
        "{create}"
    );
    assert!(!create.contains("FOREIGN KEY"), "{create}");
    assert!(!create.contains("AUTO_INCREMENT=41"), "{create}");
    assert!(create.contains("KEY `owner` (`owner`))"), "{create}");
    let columns: Vec<(String, String)> = table
        .columns
        .iter()
        .map(|(name, generator)| (name.clone(), format!("{generator:?}")))
        .collect();
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    // The generated column is computed; the NULL-only one keeps its default.
    assert_eq!(names, vec!["id", "name", "category", "price", "added"]);
    assert_eq!(columns[0].1, "Sequence { start: 1 }");
    assert_eq!(columns[1].1, "Text { min: 5, max: 6 }");
    assert_eq!(columns[2].1, "Pick([Text(\"a\"), Text(\"b\")])");
    assert!(
        columns[3].1.starts_with("Int { min: 1, max: 41"),
        "{}",
        columns[3].1
    );
    assert!(
        columns[4]
            .1
            .starts_with("Pick([Text(\"2025-01-01 10:00:00\")"),
        "{}",
        columns[4].1
    );
    assert!(matches!(table.columns[4].1, Generator::Pick(ref v) if v.len() == 28));
}

#[test]
fn a_capture_with_nothing_to_replay_is_an_error_saying_why() {
    let mut capture = capture();
    capture
        .commands
        .retain(|c| c.sql.as_deref().is_some_and(|s| s.starts_with("SET")));
    let err = scenario_text(&capture, "x").unwrap_err().to_string();
    assert!(err.contains("no statement a scenario can replay"), "{err}");
    assert!(err.contains("SET ×1"), "{err}");
}

#[test]
fn empty_tables_and_odd_names_still_make_a_loadable_scenario() {
    let mut capture = capture();
    capture.rows.clear();
    capture.tables.push(TableSnapshot {
        name: "we ird".into(),
        create: "CREATE TABLE `we ird` (\n  `k` varchar(30) NOT NULL,\n  `d` date NOT NULL,\n  `s` set('x','y') DEFAULT NULL,\n  `j` longtext DEFAULT NULL CHECK (json_valid(`j`)),\n  UNIQUE KEY `k` (`k`)\n) ENGINE=Aria DEFAULT CHARSET=latin1 PAGE_CHECKSUM=1 TRANSACTIONAL=1".into(),
    });
    let text = scenario_text(&capture, "we \"ird\"").unwrap();
    let scenario = load_scenario(&text, "x", &[], None).unwrap();
    assert_eq!(scenario.name, "we \"ird\"");
    assert_eq!(scenario.tables[0].rows, 1);
    let weird = &scenario.tables[1];
    let columns = format!("{:?}", weird.columns);
    assert!(
        columns.contains("(\"k\", Text { min: 1, max: 20 })"),
        "{columns}"
    );
    assert!(columns.contains("(\"d\", Now("), "{columns}");
    assert!(
        columns.contains("Pick([Text(\"x\"), Text(\"y\")])"),
        "{columns}"
    );
    assert!(
        columns.contains("(\"j\", Constant(Text(\"{}\")))"),
        "{columns}"
    );
    let create = weird.create_sql(crate::engine::Engine::InnoDb);
    assert!(
        create.ends_with("ENGINE=InnoDB DEFAULT CHARSET=latin1"),
        "{create}"
    );
}

#[test]
fn names_are_unqualified_outside_strings_only() {
    assert_eq!(
        unqualify(
            "SELECT shop.items.id, 'shop.x' FROM `shop`.`items`, myshop.t",
            "shop"
        ),
        "SELECT items.id, 'shop.x' FROM `items`, myshop.t"
    );
}

#[test]
fn create_table_columns_and_keys_are_read_from_show_create_layout() {
    let definition = Definition::read(CREATE);
    let names: Vec<&str> = definition.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["id", "name", "category", "price", "added", "label", "owner"]
    );
    assert_eq!(definition.columns[2].args, "'a','b','it''s'");
    assert_eq!(
        enum_values(&definition.columns[2].args),
        vec!["a", "b", "it's"]
    );
    assert!(definition.columns[5].generated);
    assert!(definition.columns[0].auto_increment);
    assert_eq!(definition.primary, vec!["id"]);
    assert_eq!(definition.engine.as_deref(), Some("InnoDB"));
    assert_eq!(key_columns("`u` (`a`,`b`(10),`c`)"), vec!["a", "b", "c"]);
    // Another layout: the text kept on one line, the engine still the study's.
    let other = Definition::read("create table t (a int) engine=MyISAM");
    assert!(other.columns.is_empty());
    assert_eq!(
        other.scenario_create,
        "create table t (a int) ENGINE={engine}"
    );
}
