//! TPC-C's statements: the SQL of each (a query kind each, in this order), filled in for a
//! district and an order's size, and parameters drawn as the transactions draw them for
//! the plans sampled. Must not know how the transactions run or are measured.

use rand::rngs::SmallRng;
use rand::Rng;

use super::random::{nurand, run_last_name, RUN};
use super::schema::{CUSTOMERS, DISTRICTS, ITEMS};

/// The statements, in query-kind order; `{D}` is the district's two digits.
pub const STATEMENTS: &[(&str, &str)] = &[
    ("begin", "START TRANSACTION"),
    // Each transaction's COMMIT is a kind of its own: counts of these are the transactions
    // completed by type (New-Orders per minute among them).
    ("no_commit", "COMMIT"),
    ("p_commit", "COMMIT"),
    ("os_commit", "COMMIT"),
    ("d_commit", "COMMIT"),
    ("sl_commit", "COMMIT"),
    ("rollback", "ROLLBACK"),
    // New-Order
    ("no_get_customer_warehouse", "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"),
    ("no_get_district", "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE"),
    ("no_update_district", "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"),
    ("no_insert_order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, NOW(), ?, ?)"),
    ("no_insert_new_order", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
    // Line by line, as sysbench-tpcc sends them (the default): each line's item read, its
    // stock row locked, updated, and its order line inserted, one statement each.
    ("no_get_item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"),
    ("no_get_stock", "SELECT s_quantity, s_data, s_dist_{D} FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"),
    ("no_insert_order_line", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    // Batched (`--tpcc-statements batched`): an order's items and their stock rows are
    // read in one statement each, as go-tpc
    // reads them: the lists are padded to 15 (the most lines an order has) by repeating
    // the first, so one prepared statement serves every order.
    ("no_get_items", "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({ITEMS})"),
    ("no_get_stocks", "SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_{D} FROM stock WHERE (s_w_id, s_i_id) IN ({STOCKS}) FOR UPDATE"),
    ("no_update_stock", "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"),
    // All of an order's lines in one INSERT: a statement per line count, prepared when
    // first needed ({LINES} rows).
    ("no_insert_order_lines", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES {LINES}"),
    // Payment
    ("p_update_warehouse", "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"),
    ("p_get_warehouse", "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?"),
    ("p_update_district", "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"),
    ("p_get_district", "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?"),
    // A customer by last name: the names counted, then read in order (the specification's
    // sample code, A.2 and A.3, and sysbench-tpcc both count first).
    ("customers_count_by_name", "SELECT COUNT(c_id) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"),
    ("customers_by_name", "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"),
    ("p_get_customer", "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"),
    ("p_get_customer_data", "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("p_update_customer_bad_credit", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("p_update_customer", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("p_insert_history", "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, NOW(), ?, ?)"),
    // Order-Status
    // By last name, the customer's figures come with the names (A.3), none read again.
    ("os_customers_by_name", "SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"),
    ("os_get_customer", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    // The customer's orders newest first, all of them sent and the first one kept: no
    // LIMIT, as in the specification's sample code (A.3) and sysbench-tpcc, so the engine
    // reads every order of the customer's, as theirs does.
    ("os_get_last_order", "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC"),
    ("os_get_order_lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
    // Delivery
    ("d_get_new_order", "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"),
    ("d_delete_new_order", "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"),
    ("d_get_order_customer", "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
    ("d_update_order", "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
    ("d_update_order_lines", "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
    ("d_sum_amount", "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
    ("d_update_customer", "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    // Stock-Level
    ("sl_get_district", "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
    ("sl_count_low_stock", "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"),
];

/// One parameter set for statement `name`, drawn as its transaction draws it (an order
/// among the loaded ones where the statement needs an existing order).
pub(super) fn sample_params(name: &str, rng: &mut SmallRng, warehouses: u32) -> Vec<mysql::Value> {
    let w = rng.gen_range(1..=warehouses);
    let d = rng.gen_range(1..=DISTRICTS);
    let c = nurand(rng, 1023, RUN.c_id, 1, CUSTOMERS);
    let item = nurand(rng, 8191, RUN.ol_i_id, 1, ITEMS);
    let order = rng.gen_range(1..=CUSTOMERS);
    let amount = "10.00";
    let values: Vec<mysql::Value> = match name {
        "no_get_customer_warehouse"
        | "p_get_customer"
        | "p_get_customer_data"
        | "os_get_customer"
        | "os_get_last_order" => vec![w.into(), d.into(), c.into()],
        "no_get_district" | "no_update_district" | "p_get_district" | "d_get_new_order"
        | "sl_get_district" => vec![w.into(), d.into()],
        "no_insert_order" => vec![
            (CUSTOMERS + 1).into(),
            d.into(),
            w.into(),
            c.into(),
            10.into(),
            1.into(),
        ],
        "no_insert_new_order" => vec![(CUSTOMERS + 1).into(), d.into(), w.into()],
        "no_get_items" => (0..MAX_LINES)
            .map(|_| nurand(rng, 8191, RUN.ol_i_id, 1, ITEMS).into())
            .collect(),
        "no_get_stocks" => (0..MAX_LINES)
            .flat_map(|_| [w.into(), nurand(rng, 8191, RUN.ol_i_id, 1, ITEMS).into()])
            .collect(),
        "no_get_item" => vec![item.into()],
        "no_get_stock" => vec![item.into(), w.into()],
        "no_insert_order_line" => vec![
            (CUSTOMERS + 1).into(),
            d.into(),
            w.into(),
            1.into(),
            item.into(),
            w.into(),
            5.into(),
            amount.into(),
            "x".into(),
        ],
        "no_update_stock" => vec![50.into(), 5.into(), 0.into(), item.into(), w.into()],
        "no_insert_order_lines" => (1..=SAMPLE_LINES)
            .flat_map(|line| -> [mysql::Value; 9] {
                [
                    (CUSTOMERS + 1).into(),
                    d.into(),
                    w.into(),
                    line.into(),
                    item.into(),
                    w.into(),
                    5.into(),
                    amount.into(),
                    "x".into(),
                ]
            })
            .collect(),
        "p_update_warehouse" => vec![amount.into(), w.into()],
        "p_get_warehouse" => vec![w.into()],
        "p_update_district" => vec![amount.into(), w.into(), d.into()],
        "customers_by_name" | "customers_count_by_name" | "os_customers_by_name" => vec![w.into(), d.into(), run_last_name(rng).into()],
        "p_update_customer_bad_credit" => vec![
            amount.into(),
            amount.into(),
            "x".into(),
            w.into(),
            d.into(),
            c.into(),
        ],
        "p_update_customer" => vec![amount.into(), amount.into(), w.into(), d.into(), c.into()],
        "p_insert_history" => vec![
            d.into(),
            w.into(),
            c.into(),
            d.into(),
            w.into(),
            amount.into(),
            "x".into(),
        ],
        "os_get_order_lines"
        | "d_delete_new_order"
        | "d_get_order_customer"
        | "d_update_order_lines"
        | "d_sum_amount" => vec![w.into(), d.into(), order.into()],
        "d_update_order" => vec![1.into(), w.into(), d.into(), order.into()],
        "d_update_customer" => vec![amount.into(), w.into(), d.into(), c.into()],
        "sl_count_low_stock" => vec![
            w.into(),
            d.into(),
            (CUSTOMERS + 1).into(),
            (CUSTOMERS - 19).into(),
            w.into(),
            15.into(),
        ],
        // Transaction control: no parameters, no plan.
        _ => Vec::new(),
    };
    values
}

/// The statements only New-Orders sent line by line use (the others serve both ways).
pub(super) const PER_LINE_ONLY: [&str; 3] = ["no_get_item", "no_get_stock", "no_insert_order_line"];
/// The statements only batched New-Orders use.
pub(super) const BATCHED_ONLY: [&str; 3] = ["no_get_items", "no_get_stocks", "no_insert_order_lines"];

/// A statement's query-kind index by name (the list above is the one place they are).
pub(super) fn at(name: &str) -> usize {
    STATEMENTS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no statement {name}"))
}

/// The most lines an order has (clause 2.4.1.3): the item and stock lists' length.
pub(super) const MAX_LINES: u32 = 15;

/// The order lines of the INSERT whose plan is sampled.
const SAMPLE_LINES: u32 = 10;

/// The statement's SQL, `{D}` filled in for district `d` and `{LINES}` with `lines` rows.
pub(super) fn sql_with(index: usize, district: u32, lines: u32) -> String {
    let list = |item: &str, count: u32| vec![item; count as usize].join(", ");
    STATEMENTS[index]
        .1
        .replace("{D}", &format!("{district:02}"))
        .replace("{ITEMS}", &list("?", MAX_LINES))
        .replace("{STOCKS}", &list("(?, ?)", MAX_LINES))
        .replace("{LINES}", &list("(?, ?, ?, ?, ?, ?, ?, ?, ?)", lines))
}

/// The statement's SQL as its plan is sampled: district `d`, an order of ten lines.
pub(super) fn sql_for(index: usize, district: u32) -> String {
    sql_with(index, district, SAMPLE_LINES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_statements_sample_has_a_value_per_placeholder() {
        let mut rng = SmallRng::seed_from_u64(3);
        for (index, (name, _)) in STATEMENTS.iter().enumerate() {
            let sql = sql_for(index, 4);
            let placeholders = sql.matches('?').count();
            let params = sample_params(name, &mut rng, 2);
            assert_eq!(params.len(), placeholders, "{name}: {sql}");
        }
        for stock in ["no_get_stocks", "no_get_stock"] {
            assert_eq!(sql_for(at(stock), 4).matches("s_dist_04").count(), 1);
        }
        assert_eq!(
            sql_with(at("no_insert_order_lines"), 1, 7)
                .matches('?')
                .count(),
            7 * 9
        );
    }
}
