//! A plan laid out again on other server profiles than its study's own (a tune's candidate
//! configurations, each on a server of its own), and the numbering of a plan's cells.
//! Owns nothing of what a step is; must not know who asks for the profiles.

use super::{study, Plan, Step};
use crate::scenario::file::Profile;

impl Plan {
    /// The plan on `profiles` instead of its own, its steps laid out again for them.
    #[must_use]
    pub fn on_profiles(self, profiles: Vec<Profile>) -> Plan {
        let mut steps = study::steps(&*self.study, profiles.len(), &self.matrix);
        number_cells(&mut steps);
        Plan {
            profiles,
            steps,
            ..self
        }
    }
}

/// Numbers the cells of `steps` in run order, each with the count of them.
pub(super) fn number_cells(steps: &mut [Step]) {
    let total = steps.iter().filter(|s| matches!(s, Step::Cell(_))).count();
    let mut number = 0;
    for step in steps {
        if let Step::Cell(cell) = step {
            number += 1;
            cell.number = number;
            cell.total = total;
        }
    }
}
