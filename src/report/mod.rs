//! The report stage: everything people read, as functions of a [`crate::view::View`]:
//! terminal and Markdown tables (`text`), CSV (`export`), the HTML page with charts
//! (`html`), the verdict every report opens with (`verdict`), each set-up's durability
//! beside the figures (`durability`) and `compare`; `formats` names
//! them for `--format`, beside the formats kinds of study bring (`cli::formats`).
//!
//! Owns: wording, layout, number formats, charts. Must not compute a statistic, merge a
//! histogram, group cells or re-read what a record is (its scenario text, its study's
//! name): the view has done all of that once, so reports cannot disagree.

pub mod capacity;
pub mod client_groups;
pub mod compare;
pub mod durability;
pub mod export;
pub mod formats;
pub mod html;
pub mod over_time;
pub mod section;
pub mod summary;
pub mod text;
pub mod verdict;
