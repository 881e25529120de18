//! Unit tests of the wire protocol reader: results followed to their end, prepares and executions
//! decoded, odd packets never panic.

use super::*;

fn command(kind: CommandKind) -> ClientCommand {
    ClientCommand {
        kind,
        sql: None,
        statement: None,
        params: Vec::new(),
        database: None,
        answered: true,
        one_packet_answer: false,
    }
}

fn read_all(reader: &mut ResponseReader, packets: &[&[u8]]) -> Vec<bool> {
    packets.iter().map(|p| reader.read(p)).collect()
}

const OK: &[u8] = &[0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00];
const COLUMN: &[u8] = &[0x03, b'd', b'e', b'f'];
const EOF: &[u8] = &[0xFE, 0x00, 0x00, 0x02, 0x00];

#[test]
fn ok_error_and_result_sets_are_followed_to_their_end() {
    let old = CapabilityFlags::CLIENT_PROTOCOL_41;
    let mut reader = ResponseReader::new(&command(CommandKind::Query), old);
    assert_eq!(read_all(&mut reader, &[OK]), vec![true]);
    assert_eq!(reader.response.affected_rows, 2);

    let mut reader = ResponseReader::new(&command(CommandKind::Query), old);
    let error = b"\xff\x16\x04#42S22Unknown column";
    assert!(reader.read(error));
    assert_eq!(reader.response.error, Some(1046));
    assert_eq!(reader.response.message.as_deref(), Some("Unknown column"));

    // Two columns, EOF, three rows, EOF (no DEPRECATE_EOF).
    let mut reader = ResponseReader::new(&command(CommandKind::Query), old);
    let row: &[u8] = &[0x01, b'1', 0x01, b'x'];
    let done = read_all(
        &mut reader,
        &[&[0x02], COLUMN, COLUMN, EOF, row, row, row, EOF],
    );
    assert_eq!(
        done,
        vec![false, false, false, false, false, false, false, true]
    );
    assert_eq!(reader.response.rows, 3);

    // With DEPRECATE_EOF: no EOF after the columns, an OK (0xFE) at the end.
    let new = old | CapabilityFlags::CLIENT_DEPRECATE_EOF;
    let mut reader = ResponseReader::new(&command(CommandKind::Query), new);
    let end: &[u8] = &[0xFE, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
    let done = read_all(&mut reader, &[&[0x01], COLUMN, row, row, end]);
    assert_eq!(done, vec![false, false, false, false, true]);
    assert_eq!(reader.response.rows, 2);
}

#[test]
fn several_results_follow_the_more_results_flag() {
    let caps = CapabilityFlags::CLIENT_PROTOCOL_41;
    let mut reader = ResponseReader::new(&command(CommandKind::Query), caps);
    // OK with SERVER_MORE_RESULTS_EXISTS (0x0008), then a result set, then its EOF.
    let ok_more: &[u8] = &[0x00, 0x01, 0x00, 0x0A, 0x00, 0x00, 0x00];
    let row: &[u8] = &[0x01, b'1'];
    let done = read_all(&mut reader, &[ok_more, &[0x01], COLUMN, EOF, row, EOF]);
    assert_eq!(done, vec![false, false, false, false, false, true]);
    assert_eq!(
        (reader.response.affected_rows, reader.response.rows),
        (1, 1)
    );
}

#[test]
fn a_prepare_tells_the_statement_and_its_parameters() {
    let caps = CapabilityFlags::CLIENT_PROTOCOL_41;
    let mut reader = ResponseReader::new(&command(CommandKind::Prepare), caps);
    // id 7, 1 column, 2 parameters: 2 parameter definitions + EOF, 1 column + EOF.
    let prepared: &[u8] = &[0x00, 7, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0];
    let done = read_all(&mut reader, &[prepared, COLUMN, COLUMN, EOF, COLUMN, EOF]);
    assert_eq!(done, vec![false, false, false, false, false, true]);
    assert_eq!(reader.prepared, Some((7, 2)));
}

#[test]
fn executions_decode_their_parameters() {
    let mut prepared = std::collections::HashMap::new();
    prepared.insert(
        7,
        PreparedInfo {
            sql: "SELECT ?, ?, ?".into(),
            params: 3,
            types: Vec::new(),
        },
    );
    // COM_STMT_EXECUTE id 7, no cursor, 1 iteration, NULL bitmap (third is NULL),
    // types bound: LONGLONG, VAR_STRING, NULL; values 42 and "ab".
    let mut packet = vec![
        0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0b100, 1, 0x08, 0, 0xFD, 0, 0x06, 0,
    ];
    packet.extend_from_slice(&42i64.to_le_bytes());
    packet.extend_from_slice(&[2, b'a', b'b']);
    let command = client_command(&packet, CapabilityFlags::CLIENT_PROTOCOL_41, &mut prepared);
    assert_eq!(command.kind, CommandKind::Execute);
    assert_eq!(command.sql.as_deref(), Some("SELECT ?, ?, ?"));
    assert_eq!(
        command.params,
        vec![Value::Int(42), Value::Text("ab".into()), Value::Null]
    );
    // Sent again without types: the bound ones are kept.
    let mut again = vec![0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0b100, 0];
    again.extend_from_slice(&43i64.to_le_bytes());
    again.extend_from_slice(&[1, b'c']);
    let command = client_command(&again, CapabilityFlags::CLIENT_PROTOCOL_41, &mut prepared);
    assert_eq!(command.params[0], Value::Int(43));
}

#[test]
fn a_tls_request_is_told_from_a_login_and_compression_is_refused() {
    let ssl = (CapabilityFlags::CLIENT_SSL | CapabilityFlags::CLIENT_PROTOCOL_41).bits();
    let mut request = ssl.to_le_bytes().to_vec();
    request.extend_from_slice(&[0; 28]);
    assert!(is_tls_request(&request));
    let mut login = request.clone();
    login.extend_from_slice(b"root\0");
    assert!(!is_tls_request(&login));
    let compress = (CapabilityFlags::CLIENT_COMPRESS | CapabilityFlags::CLIENT_PROTOCOL_41).bits();
    let mut compressed = compress.to_le_bytes().to_vec();
    compressed.extend_from_slice(&[0; 28]);
    assert_eq!(client_handshake(&compressed), Err(Unsupported::Compression));
    let packet = Unsupported::PlainToTlsServer.error_packet(2);
    assert_eq!(packet[3], 2);
    assert_eq!(packet[4], 0xFF);
    assert!(String::from_utf8_lossy(&packet).contains("connect to the proxy with TLS"));
}

#[test]
fn an_execution_with_cached_metadata_goes_straight_to_its_rows() {
    let caps = CapabilityFlags::CLIENT_PROTOCOL_41 | CapabilityFlags::CLIENT_DEPRECATE_EOF;
    let end: &[u8] = &[0xFE, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
    let row: &[u8] = &[0x00, 0x00, 0x01, b'a'];
    let mut reader =
        ResponseReader::new(&command(CommandKind::Execute), caps).caching_metadata(true);
    // Two columns, metadata not sent again (0), one row, the end.
    let done = read_all(&mut reader, &[&[0x02, 0x00], row, end]);
    assert_eq!(done, vec![false, false, true]);
    assert_eq!(reader.response.rows, 1);
    // Without DEPRECATE_EOF the skipped definitions still end with an EOF.
    let old = CapabilityFlags::CLIENT_PROTOCOL_41;
    let mut reader =
        ResponseReader::new(&command(CommandKind::Execute), old).caching_metadata(true);
    let done = read_all(&mut reader, &[&[0x02, 0x00], EOF, row, EOF]);
    assert_eq!(done, vec![false, false, false, true]);
    assert_eq!(reader.response.rows, 1);
    // Metadata sent (1): the column definitions come first.
    let mut reader =
        ResponseReader::new(&command(CommandKind::Execute), caps).caching_metadata(true);
    let done = read_all(&mut reader, &[&[0x02, 0x01], COLUMN, COLUMN, row, end]);
    assert_eq!(done, vec![false, false, false, false, true]);
}

#[test]
fn short_or_odd_packets_never_panic() {
    let caps = CapabilityFlags::CLIENT_PROTOCOL_41 | CapabilityFlags::CLIENT_DEPRECATE_EOF;
    let mut prepared = std::collections::HashMap::new();
    let mut seed: u64 = 7;
    for _ in 0..5000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let length = (seed >> 59) as usize;
        let packet: Vec<u8> = (0..length).map(|i| (seed >> (i % 7 * 8)) as u8).collect();
        for kind in [
            CommandKind::Query,
            CommandKind::Prepare,
            CommandKind::Execute,
        ] {
            let mut reader = ResponseReader::new(&command(kind), caps);
            let _ = reader.read(&packet);
            let _ = reader.read(&packet);
        }
        let _ = client_command(
            &packet,
            caps | CapabilityFlags::CLIENT_QUERY_ATTRIBUTES,
            &mut prepared,
        );
        let _ = client_handshake(&packet);
        let _ = server_capabilities(&packet);
        let _ = server_caches_metadata(&packet);
        let _ = client_caches_metadata(&packet);
    }
}

#[test]
fn packets_are_framed_across_reads() {
    let mut framer = Framer::default();
    let mut seen = Vec::new();
    framer.push(&[3, 0, 0, 0, b'a', b'b']);
    framer.packets(|seq, payload| seen.push((seq, payload.to_vec())));
    assert!(seen.is_empty());
    framer.push(&[b'c', 1, 0, 0, 1, b'd']);
    framer.packets(|seq, payload| seen.push((seq, payload.to_vec())));
    assert_eq!(seen, vec![(0, b"abc".to_vec()), (1, b"d".to_vec())]);
}
