//! A measured cell's record: crash, stall, probe judgement and nodes' parts put in, said,
//! evidence gathered and saved. It must not know how the cell was driven.

use super::*;

/// The cell recorded (crashed, stalled, a probe's judgement, the nodes' parts), said, its
/// evidence gathered and the record saved; whether the next cells need a fresh server.
pub(super) fn record_cell(
    plan: &Plan,
    bench: &mut Bench,
    cell: &CellStep,
    probe: Option<&Probe>,
    configured: Configured,
    driven: Driven,
    probes_before: crate::server::OwnCounts,
) -> anyhow::Result<bool> {
    let Configured {
        workload,
        config,
        label,
        key,
        ..
    } = configured;
    let Driven {
        measured,
        node_records,
        fault,
        counters,
        kills_a_node,
        progress,
    } = driven;
    // A failed cell or a lost probe may mean the server died. A stalled cell's server did
    // not die (it stopped answering), and an interrupted cell ended because we asked.
    let stalled = match &measured.outcome {
        CellOutcome::Stalled(stall) => Some(stall.clone()),
        _ => None,
    };
    let crash = crash_of(bench, &measured, &counters, stalled.is_some());
    let counters = match counters {
        Ok(counters) => counters,
        Err(err) => {
            if crash.is_none() && stalled.is_none() && !crate::interrupt::requested() {
                note(&format!(
                    "{label}: the server's counters could not be read ({err:#}); the cell is kept without them"
                ));
            }
            // The probe timed out or lost its server: the next cell needs another.
            bench.probe_broken = true;
            Default::default()
        }
    };
    let mut record =
        CellRecord::from_measurement(bench.record.cells.len(), &key, &config, &measured, counters);
    record.protocol = Some(plan.phase(cell.phase).protocol);
    if let Some(message) = &crash {
        record.outcome = OutcomeRecord::Crashed;
        record.error = Some(message.clone());
    }
    if let Some(stall) = &stalled {
        record.stall = Some(stall_record(bench, cell, stall));
    }
    record.nodes = node_records;
    record.probe = probe.map(|probe| probe_record(probe, &measured));
    if let Some(fault) = &fault {
        note_fault(fault);
    }
    record.fault = fault;
    progress.finish(&finish_line(&measured, crash.is_some(), &record));
    record.mismatches = workload
        .mismatches()
        .into_iter()
        .map(|(name, count, example)| MismatchRecord {
            name,
            count,
            example,
        })
        .collect();
    let stall_message = record
        .stall
        .as_ref()
        .map(|stall| describe_stall(record.error.as_deref().unwrap_or_default(), stall));
    let completed = record.outcome == OutcomeRecord::Completed;
    // Statements the study could not class before they ran (a script's, learned as it
    // ran, named by their SQL) are classed by their verb.
    for query in &record.queries {
        bench
            .record
            .statement_classes
            .entry(query.name.clone())
            .or_insert_with(|| crate::scenario::StatementClass::of_sql(&query.name));
    }
    bench.record.cells.push(record);
    if let Some(message) = &crash {
        note(message);
    }
    if let Some(message) = &stall_message {
        note(message);
    }
    let external_stalled = stalled.is_some() && !bench.target.is_private();
    // Agent 1 gathers the evidence (once is enough, and the others are not to be slowed).
    let gathers = plan.agent.as_ref().is_none_or(|agent| agent.prepares());
    if completed && gathers {
        gather_evidence(plan, bench, cell, &key, workload.as_ref());
    }
    if let Some(last) = bench.record.cells.last_mut() {
        last.own_probes = crate::server::own_load::counted(Purpose::Probe).since(&probes_before);
    }
    bench.save()?;
    if external_stalled {
        // Not ours to restart: the run ends here, with what it measured stored.
        bench.unanswering = true;
        anyhow::bail!(
            "{} stopped answering during {label}; the run stops here (what was measured is kept). Find out why (the lines above), then run again",
            bench.target.admin_spec().label()
        );
    }
    // A killed node leaves the topology short, and a server that stopped answering was
    // stopped: the next cells get a fresh one.
    Ok(crash.is_some() || kills_a_node || stalled.is_some())
}

/// The record of a stall: what was in flight, what the server showed a new connection,
/// and what became of it (a throwaway server is stopped now, so the next cells run on a
/// fresh one; an external one is left alone).
pub(super) fn stall_record(
    bench: &mut Bench,
    cell: &CellStep,
    stall: &crate::driver::StallReport,
) -> crate::results::StallRecord {
    let shows = crate::targets::ask_unanswering(bench.target.as_ref(), cell.engine);
    let server_then = bench
        .target
        .stop_unanswering()
        .unwrap_or_else(|| "left running: it is not enginebench's to stop".into());
    bench.probe_broken = true;
    bench.stopped_unanswering = bench.target.is_private();
    crate::results::StallRecord {
        silent_s: stall.silent.as_secs_f64(),
        bound_s: stall.bound.as_secs_f64(),
        during: stall.during.to_string(),
        slowest_ms: stall.slowest.as_secs_f64() * 1000.0,
        in_flight: stall.in_flight.iter().cloned().collect(),
        server_answered: shows.answered,
        processlist: shows.processlist,
        engine_status: shows.disk.into_iter().chain(shows.engine_status).collect(),
        server_then,
    }
}

/// The stall as the user reads it: what happened, what the server showed, what was done,
/// and what to do.
pub(super) fn describe_stall(headline: &str, stall: &crate::results::StallRecord) -> String {
    let mut lines = vec![headline.to_string()];
    if stall.server_answered {
        lines.push(if stall.processlist.is_empty() {
            "a new connection was answered; no session was busy".to_string()
        } else {
            "a new connection was answered; busy sessions (SHOW PROCESSLIST):".to_string()
        });
        lines.extend(stall.processlist.iter().map(|line| format!("  {line}")));
    } else {
        lines.push(
            "a new connection got no answer either (within 3 s): the whole server is stuck (paused, swapping, or blocked on its disk)"
                .into(),
        );
    }
    if !stall.engine_status.is_empty() {
        lines.push("the server's state:".into());
        lines.extend(stall.engine_status.iter().map(|line| format!("  {line}")));
    }
    lines.push(format!("the server: {}", stall.server_then));
    lines.push(format!(
        "the intervals measured before are kept; if this study's statements can take longer than {:.0} s, give a larger --stall-timeout",
        stall.bound_s
    ));
    lines.join("\n")
}
