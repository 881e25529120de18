//! A group of cells the verdict compares round by round, as the runner names it when it
//! asks (decide, then stop; a group's progress line), and the answer it gets. Owns these
//! two shapes only: how a group is judged is the view's, when to ask the runner's.

/// A group of cells whose set-ups are compared round by round: one phase at one thread
/// count on one server (its profile, if the study has them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellGroup {
    pub profile: Option<String>,
    /// The phase's name, as the cells' `variant` holds it.
    pub phase: String,
    pub threads: u32,
}

/// A finished group's answer: decided or not, and who is ahead, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAnswer {
    /// Whether every comparison of the group is decided (a lead or an equivalence); none
    /// where the group had nothing to compare (one set-up that may be ranked).
    pub decided: Option<bool>,
    /// "InnoDB (relaxed) ahead", "MyISAM ahead so far", "equivalent within ±5%".
    pub words: String,
}
