//! TPC-C's consistency conditions 1–4 (specification clause 3.3.2), checked on an engine's
//! tables after each cell: what a faster result that did less work would break.

use mysql::prelude::Queryable;

use crate::server::OwnConn;

/// Each condition's words and the query counting the warehouses or districts breaking it.
const CONDITIONS: [(&str, &str); 4] = [
    (
        "1: W_YTD = sum of its districts' D_YTD",
        "SELECT COUNT(*) FROM warehouse w WHERE w.w_ytd <> (SELECT SUM(d.d_ytd) FROM district d WHERE d.d_w_id = w.w_id)",
    ),
    (
        "2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        "SELECT COUNT(*) FROM district d WHERE d.d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id) OR d.d_next_o_id - 1 <> (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d.d_w_id AND no_d_id = d.d_id)",
    ),
    (
        "3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW_ORDER",
        "SELECT COUNT(*) FROM (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 AS span, COUNT(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) t WHERE span <> n",
    ),
    (
        "4: sum(O_OL_CNT) = rows in ORDER_LINE",
        "SELECT COUNT(*) FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS ordered FROM orders GROUP BY o_w_id, o_d_id) o JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l ON o.o_w_id = l.ol_w_id AND o.o_d_id = l.ol_d_id WHERE o.ordered <> l.n",
    ),
];

/// The conditions broken, each with how many warehouses or districts break it.
pub fn broken_conditions(conn: &mut OwnConn) -> anyhow::Result<Vec<(&'static str, u64)>> {
    let mut broken = Vec::new();
    for (condition, query) in CONDITIONS {
        let count: Option<u64> = conn.query_first(query)?;
        if let Some(count) = count.filter(|&count| count > 0) {
            broken.push((condition, count));
        }
    }
    Ok(broken)
}
