//! The measurement stage: latency histograms per query kind, merged per interval and per
//! cell, and probes of the server's own counters.

mod histogram;
mod status;

pub use histogram::{
    decode_histogram, encode_histogram, new_histogram, LatencySummary, QueryHistograms,
    QueryRecorder,
};
pub use status::{status_delta, StatusSnapshot};
