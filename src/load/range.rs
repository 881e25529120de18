//! One loader thread's share of a table: rows generated ahead in blocks and sent by LOAD
//! DATA (TSV) or multi-row INSERT. It must not know studies, plans or which tables a study
//! loads.

use super::*;

/// Rows are made in chunks of this many ids, each from its own seeded RNG, so that every
/// method and every degree of parallelism produces the same table.
pub(super) const GENERATION_CHUNK: u64 = 1000;

/// Rows per block handed from LOAD DATA's generator thread to its connection (about 1.6
/// MiB of sbtest rows): small enough to keep a few blocks ahead in little memory.
pub(super) const GENERATION_BLOCK_ROWS: u64 = 8192;
/// Blocks the generator may be ahead of the connection.
pub(super) const GENERATED_AHEAD: usize = 3;

/// Generates rows first..=last into `sink`, one row at a time.
pub(super) struct RowStream<'a> {
    pub(super) table: &'a TableSpec,
    pub(super) next_id: u64,
    pub(super) last: u64,
    pub(super) rng: SmallRng,
    pub(super) row: Vec<Value>,
}

impl<'a> RowStream<'a> {
    pub(super) fn new(table: &'a TableSpec, first: u64, last: u64) -> Self {
        let chunk_start = (first - 1) / GENERATION_CHUNK * GENERATION_CHUNK + 1;
        let mut stream = RowStream {
            table,
            next_id: chunk_start,
            last,
            rng: SmallRng::seed_from_u64(table.seed ^ chunk_start),
            row: Vec::with_capacity(table.columns.len()),
        };
        // Advance to `first` within its generation chunk, so ranges line up exactly.
        while stream.next_id < first {
            stream.next();
        }
        stream
    }

    /// The next row's id, with its values in `self.row`.
    pub(super) fn next(&mut self) -> Option<u64> {
        if self.next_id > self.last {
            return None;
        }
        let id = self.next_id;
        if (id - 1).is_multiple_of(GENERATION_CHUNK) {
            self.rng = SmallRng::seed_from_u64(self.table.seed ^ id);
        }
        self.row.clear();
        self.table
            .generator
            .fill_row(id, &mut self.rng, &mut self.row);
        self.next_id += 1;
        Some(id)
    }
}

// Long by design: one range of rows loaded by one method, its chunks, retries and progress together.
#[allow(clippy::too_many_lines)]
pub(super) fn load_range(
    spec: &ConnectionSpec,
    table: &TableSpec,
    plan: &LoadPlan,
    first: u64,
    last: u64,
    max_packet: u64,
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<WorkerTotals, LoadError> {
    let mut conn = spec
        .connect_own(Purpose::Setup)
        .map_err(|err| LoadError::setup(&table.name, err.to_string()))?;
    let mut rows = RowStream::new(table, first, last);
    let mut totals = WorkerTotals::default();
    let columns = table
        .columns
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut tsv = Vec::new();
    let chunk_error =
        |from: u64, to: u64, err: mysql::Error| LoadError::chunk(&table.name, from, to, &err);
    match plan.method {
        LoadMethod::RowAutocommit | LoadMethod::CommitEvery => {
            let placeholders = vec!["?"; table.columns.len()].join(", ");
            let insert = conn
                .prep(format!(
                    "INSERT INTO `{}` ({columns}) VALUES ({placeholders})",
                    table.name
                ))
                .map_err(|err| {
                    LoadError::setup(&table.name, crate::server::describe_mysql_error(&err))
                })?;
            let batch = if plan.method == LoadMethod::CommitEvery {
                plan.commit_every.max(1)
            } else {
                1
            };
            let mut batch_first = first;
            while batch_first <= last {
                if !keep_going() {
                    break;
                }
                let batch_last = (batch_first + batch - 1).min(last);
                let transactional = plan.method == LoadMethod::CommitEvery;
                if transactional {
                    conn.query_drop("START TRANSACTION")
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                }
                for _ in batch_first..=batch_last {
                    rows.next();
                    let params: Vec<mysql::Value> = rows.row.iter().map(to_mysql_value).collect();
                    tsv.clear();
                    push_tsv_row(&mut tsv, &rows.row);
                    totals.data_bytes += tsv.len() as u64;
                    conn.exec_drop(&insert, params)
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                    totals.statements += 1;
                    totals.rows += 1;
                }
                if transactional {
                    conn.query_drop("COMMIT")
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                }
                batch_first = batch_last + 1;
            }
        }
        LoadMethod::MultiRow => {
            let head = format!("INSERT INTO `{}` ({columns}) VALUES ", table.name);
            // Leave room for the packet header and the last row that crosses the line.
            let max_statement = (max_packet as usize)
                .saturating_sub(64 * 1024)
                .max(16 * 1024);
            let mut sql =
                String::with_capacity(head.len() + 256 * plan.rows_per_statement as usize);
            let commit_every = plan.commit_every.max(1);
            let mut in_transaction = false;
            let mut rows_since_commit = 0;
            let mut statement_first = first;
            let mut statement_rows = 0;
            while let Some(id) = rows.next() {
                if statement_rows == 0 {
                    if !keep_going() {
                        break;
                    }
                    if !in_transaction {
                        conn.query_drop("START TRANSACTION")
                            .map_err(|e| chunk_error(id, id, e))?;
                        in_transaction = true;
                    }
                    sql.clear();
                    sql.push_str(&head);
                    statement_first = id;
                } else {
                    sql.push(',');
                }
                sql.push('(');
                for (index, value) in rows.row.iter().enumerate() {
                    if index > 0 {
                        sql.push(',');
                    }
                    push_sql_literal(&mut sql, value);
                }
                sql.push(')');
                tsv.clear();
                push_tsv_row(&mut tsv, &rows.row);
                totals.data_bytes += tsv.len() as u64;
                statement_rows += 1;
                rows_since_commit += 1;
                let full =
                    statement_rows >= plan.rows_per_statement.max(1) || sql.len() >= max_statement;
                if full || id == last {
                    conn.query_drop(&sql)
                        .map_err(|e| chunk_error(statement_first, id, e))?;
                    totals.statements += 1;
                    totals.rows += statement_rows;
                    statement_rows = 0;
                    if rows_since_commit >= commit_every || id == last {
                        conn.query_drop("COMMIT")
                            .map_err(|e| chunk_error(statement_first, id, e))?;
                        in_transaction = false;
                        rows_since_commit = 0;
                    }
                }
            }
            if in_transaction {
                conn.query_drop("COMMIT")
                    .map_err(|e| chunk_error(statement_first, last, e))?;
            }
        }
        LoadMethod::LoadData => {
            // Rows are generated on a thread of their own, a few blocks ahead, and the
            // server pulls them through LOAD DATA's file request: the connection never waits
            // for the generator, and one statement may span many blocks, so what the server
            // ingests sets the pace, as when its own client reads a file (the floor). The
            // generator sends a statement's blocks, then `None` where its rows end.
            let (ready_tx, ready_rx) =
                std::sync::mpsc::sync_channel::<Option<Vec<u8>>>(GENERATED_AHEAD);
            let (spent_tx, spent_rx) = std::sync::mpsc::channel::<Vec<u8>>();
            let ready_rx = Arc::new(Mutex::new(ready_rx));
            // Bytes the statement in flight has sent: counted once it commits, as its rows.
            let statement_bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
            {
                let ready_rx = Arc::clone(&ready_rx);
                let statement_bytes = Arc::clone(&statement_bytes);
                conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, stream| {
                    let ready_rx = ready_rx.lock().unwrap_or_else(|p| p.into_inner());
                    loop {
                        // Nothing more: the generator stopped (Ctrl-C); the statement fails
                        // and the caller sees why.
                        let block = ready_rx.recv().map_err(|_| {
                            std::io::Error::new(std::io::ErrorKind::Interrupted, "load stopped")
                        })?;
                        let Some(bytes) = block else {
                            return stream.flush();
                        };
                        stream.write_all(&bytes)?;
                        statement_bytes
                            .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
                        let _ = spent_tx.send(bytes);
                    }
                })));
            }
            let charset = if table.generator.ascii_only() {
                "binary"
            } else {
                "utf8mb4"
            };
            let statement = format!(
                "LOAD DATA LOCAL INFILE 'enginebench-chunk' INTO TABLE `{}` CHARACTER SET {charset} \
                 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({columns})",
                table.name
            );
            let chunk_rows = plan.chunk_rows.max(1);
            let block_rows = chunk_rows.min(GENERATION_BLOCK_ROWS);
            std::thread::scope(|scope| {
                scope.spawn(move || {
                    let mut chunk_first = first;
                    'chunks: while chunk_first <= last {
                        let chunk_last = (chunk_first + chunk_rows - 1).min(last);
                        let mut block_first = chunk_first;
                        while block_first <= chunk_last {
                            if !keep_going() {
                                break 'chunks;
                            }
                            let block_last = (block_first + block_rows - 1).min(chunk_last);
                            let mut bytes = spent_rx.try_recv().unwrap_or_default();
                            bytes.clear();
                            for _ in block_first..=block_last {
                                rows.next();
                                push_tsv_row(&mut bytes, &rows.row);
                            }
                            if ready_tx.send(Some(bytes)).is_err() {
                                // The sender stopped (an error).
                                break 'chunks;
                            }
                            block_first = block_last + 1;
                        }
                        if ready_tx.send(None).is_err() {
                            break;
                        }
                        chunk_first = chunk_last + 1;
                    }
                });
                let result = (|| {
                    let mut chunk_first = first;
                    while chunk_first <= last {
                        if !keep_going() {
                            break;
                        }
                        let chunk_last = (chunk_first + chunk_rows - 1).min(last);
                        // Autocommit is on: each LOAD DATA commits its own chunk.
                        if let Err(err) = conn.query_drop(&statement) {
                            if !keep_going() {
                                break;
                            }
                            return Err(chunk_error(chunk_first, chunk_last, err));
                        }
                        totals.statements += 1;
                        totals.rows += chunk_last - chunk_first + 1;
                        totals.data_bytes +=
                            statement_bytes.swap(0, std::sync::atomic::Ordering::Relaxed);
                        chunk_first = chunk_last + 1;
                    }
                    Ok(())
                })();
                // Whatever happened, the generator must not wait on a full channel: its
                // receiver is dropped (swapped for one with no sender), so its send fails.
                *ready_rx.lock().unwrap_or_else(|p| p.into_inner()) =
                    std::sync::mpsc::sync_channel(0).1;
                result
            })?;
        }
    }
    Ok(totals)
}

pub(super) fn push_tsv_row(out: &mut Vec<u8>, row: &[Value]) {
    for (index, value) in row.iter().enumerate() {
        if index > 0 {
            out.push(b'\t');
        }
        push_tsv_field(out, value);
    }
    out.push(b'\n');
}

pub(super) fn to_mysql_value(value: &Value) -> mysql::Value {
    match value {
        Value::Null => mysql::Value::NULL,
        Value::Int(number) => mysql::Value::Int(*number),
        Value::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
    }
}
