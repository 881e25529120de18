//! Unit tests of the capture file format: read back as written, a cut last line kept with a
//! warning, malformed files named by line.

use super::*;

fn command(connection: u64, sql: &str) -> Command {
    Command {
        connection,
        start_us: 10,
        end_us: 20,
        kind: CommandKind::Query,
        sql: Some(sql.into()),
        statement: None,
        params: vec![Value::Int(-1), Value::Text("x".into()), Value::Null],
        database: None,
        response: Some(Response {
            rows: 1,
            ..Default::default()
        }),
    }
}

fn written(lines: &[Line]) -> String {
    let header = Header::new("test", Some("shop".into()), None);
    let mut text = serde_json::to_string(&Line::Header(header)).unwrap() + "\n";
    for line in lines {
        text += &(serde_json::to_string(line).unwrap() + "\n");
    }
    text
}

#[test]
fn a_capture_reads_back_as_written() {
    let lines = vec![
        Line::Table(TableSnapshot {
            name: "t".into(),
            create: "CREATE TABLE t (id INT)".into(),
        }),
        Line::Rows(RowsChunk {
            table: "t".into(),
            columns: vec!["id".into()],
            rows: vec![
                vec![Value::UInt(u64::MAX)],
                vec![Value::Bytes { hex: "ff00".into() }],
            ],
        }),
        Line::Command(command(1, "SELECT 1")),
        Line::End(End {
            commands: 1,
            connections: 1,
            duration_us: 30,
            secrets_masked: 0,
            proxy_cost: None,
        }),
    ];
    let capture = parse(written(&lines).as_bytes(), "x").unwrap();
    assert_eq!(capture.header().database.as_deref(), Some("shop"));
    assert_eq!(capture.tables.len(), 1);
    assert_eq!(capture.rows[0].rows[0][0], Value::UInt(u64::MAX));
    assert_eq!(
        capture.rows[0].rows[1][0].to_mysql(),
        mysql::Value::Bytes(vec![0xff, 0])
    );
    assert_eq!(capture.commands, vec![command(1, "SELECT 1")]);
    assert!(capture.warnings.is_empty());
}

#[test]
fn a_cut_last_line_keeps_what_came_before_with_a_warning() {
    let text = written(&[
        Line::Command(command(1, "SELECT 1")),
        Line::Command(command(2, "SELECT 2")),
    ]);
    let cut = &text[..text.len() - 10];
    let capture = parse(cut.as_bytes(), "x").unwrap();
    assert_eq!(capture.commands.len(), 1);
    assert!(
        capture.warnings[0].contains("cut short"),
        "{:?}",
        capture.warnings
    );
}

#[test]
fn malformed_files_are_errors_naming_the_line() {
    let text = written(&[Line::Command(command(1, "SELECT 1"))]);
    let broken =
        text.replacen("\"t\":\"command\"", "\"t\":\"nonsense\"", 1) + &written(&[])[..5] + "\n";
    let err = parse(broken.as_bytes(), "x.ebcap").unwrap_err().to_string();
    assert!(err.starts_with("x.ebcap, line 2:"), "{err}");
    let err = parse("{\"a\":1}\n".as_bytes(), "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not an enginebench capture"), "{err}");
    let err = parse("".as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("empty"), "{err}");
    let newer = written(&[]).replace("\"version\":1", "\"version\":99");
    let err = parse(newer.as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("newer enginebench"), "{err}");
    let rows = written(&[Line::Rows(RowsChunk {
        table: "nowhere".into(),
        columns: vec![],
        rows: vec![],
    })]);
    let err = parse(rows.as_bytes(), "x").unwrap_err().to_string();
    assert!(err.contains("before its CREATE TABLE"), "{err}");
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap fuzz: every prefix and some corruptions of a valid file.
    let text = written(&[Line::Command(command(1, "SELECT 'a'"))]);
    for cut in 0..text.len() {
        let _ = parse(&text.as_bytes()[..cut], "x");
    }
    let mut seed: u64 = 42;
    for _ in 0..2000 {
        let mut bytes = text.clone().into_bytes();
        for _ in 0..3 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (seed >> 33) as usize % bytes.len();
            bytes[at] = (seed >> 13) as u8;
        }
        let _ = parse(bytes.as_slice(), "x");
    }
}
