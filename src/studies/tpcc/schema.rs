//! TPC-C's nine tables (specification clause 1.3) and their initial population (clause
//! 4.3.3), as table specs the runner loads in parallel with LOAD DATA: W warehouses, 10
//! districts each, 3,000 customers and orders per district (the last 900 undelivered, in
//! NEW_ORDER), 5–15 lines per order, 100,000 items and a stock row per item and warehouse.
//! Secondary indexes (customers by last name, orders by customer) are built after the rows.

use rand::rngs::SmallRng;
use rand::Rng;

use super::random::{self, alnum, cents, data_with_original, digits, last_name, nurand, rate, zip};
use crate::engine::Engine;
use crate::load::{memory_table_cap, RowGenerator, TableSpec, Value};

pub const DISTRICTS: u32 = 10;
pub const CUSTOMERS: u32 = 3000;
pub const ITEMS: u32 = 100_000;
/// Orders 2101..=3000 of each district are new (undelivered) at load.
pub const FIRST_NEW_ORDER: u32 = 2101;

/// Every table, in the order of the specification.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The number of lines of order `o` of district `d` of warehouse `w` at load, 5..=15:
/// a function of the order, so ORDERS.O_OL_CNT and the ORDER_LINE rows agree.
pub fn lines_of(seed: u64, w: u32, d: u32, o: u32) -> u32 {
    let mut x = seed ^ (u64::from(w) << 40) ^ (u64::from(d) << 32) ^ u64::from(o);
    // splitmix64's finaliser.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    5 + (x % 11) as u32
}

/// The customer who placed order `o` of a district: a permutation of 1..=3000 (1777 is
/// prime to 3000), shifted per district.
fn customer_of_order(w: u32, d: u32, o: u32) -> u32 {
    ((o - 1) * 1777 + w * 31 + d * 7) % CUSTOMERS + 1
}

/// One table's columns, keys, secondary index and the bytes a row takes (for a MEMORY
/// table's cap), as the specification lists them. Identifiers and small counts take
/// sysbench-tpcc's integer types (a warehouse a SMALLINT, a district, a carrier, a line
/// number, a line's quantity a TINYINT): a row's width sets how many rows a page holds,
/// and with it the pages the engine reads (the optimizer's range estimates read the leaf
/// pages between their two ends when those are few: an Order-Status read 2.5 pages more
/// on INT columns). Counts that grow with the run (stock's and customers') stay INT,
/// where sysbench-tpcc's SMALLINTs would overflow on a long one.
struct Shape {
    /// Separated by ", " (DECIMAL(12,2) has no space after its comma).
    columns: &'static str,
    keys: &'static str,
    index: Option<&'static str>,
    row_bytes: u64,
}

/// The nine tables' shapes, in the order of [`TABLES`].
const SHAPES: [Shape; 9] = [
    Shape {
        columns: "w_id SMALLINT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2)",
        keys: ", PRIMARY KEY (w_id)",
        index: None,
        row_bytes: 100,
    },
    Shape {
        columns: "d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT",
        keys: ", PRIMARY KEY (d_w_id, d_id)",
        index: None,
        row_bytes: 100,
    },
    Shape {
        columns: "c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500)",
        keys: ", PRIMARY KEY (c_w_id, c_d_id, c_id)",
        index: Some("INDEX idx_customer (c_w_id, c_d_id, c_last, c_first)"),
        row_bytes: 700,
    },
    Shape {
        columns: "h_c_id INT, h_c_d_id TINYINT, h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT, h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24)",
        keys: "",
        index: None,
        row_bytes: 60,
    },
    Shape {
        columns: "no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL",
        keys: ", PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
        index: None,
        row_bytes: 12,
    },
    Shape {
        columns: "o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT, o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT",
        keys: ", PRIMARY KEY (o_w_id, o_d_id, o_id)",
        index: Some("INDEX idx_orders (o_w_id, o_d_id, o_c_id, o_id)"),
        row_bytes: 40,
    },
    Shape {
        columns: "ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL, ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d DATETIME, ol_quantity TINYINT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24)",
        keys: ", PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
        index: None,
        row_bytes: 80,
    },
    Shape {
        columns: "i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50)",
        keys: ", PRIMARY KEY (i_id)",
        index: None,
        row_bytes: 90,
    },
    Shape {
        columns: "s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT, s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50)",
        keys: ", PRIMARY KEY (s_w_id, s_i_id)",
        index: None,
        row_bytes: 320,
    },
];

impl Shape {
    /// Table `name` of this shape on `engine`: `rows` rows from `generator`.
    fn spec(
        &self,
        name: &str,
        engine: Engine,
        seed: u64,
        rows: u64,
        generator: Box<dyn RowGenerator>,
    ) -> TableSpec {
        let columns = self.columns;
        let column_names = columns
            .split(", ")
            .map(|column| column.split_whitespace().next().unwrap().to_string())
            .collect();
        TableSpec {
            name: name.to_string(),
            before_create: memory_table_cap(engine, rows * self.row_bytes * 2)
                .into_iter()
                .collect(),
            create_sql: format!(
                "CREATE TABLE `{name}` ({columns}{}) ENGINE={}",
                self.keys,
                engine.sql_name()
            ),
            secondary_indexes: self.index.iter().map(|index| index.to_string()).collect(),
            columns: column_names,
            rows,
            seed: seed ^ name.len() as u64 ^ (rows << 8),
            generator,
        }
    }
}

/// The nine tables of `warehouses` warehouses on `engine`.
pub fn tables(warehouses: u32, engine: Engine, seed: u64, loaded_at: &str) -> Vec<TableSpec> {
    let w = u64::from(warehouses);
    let districts = w * u64::from(DISTRICTS);
    let customers = districts * u64::from(CUSTOMERS);
    let line_offsets = LineOffsets::new(seed, warehouses);
    let order_lines = line_offsets.total();
    let now = Value::Text(loaded_at.to_string());
    // Each table's rows at load and what generates them, in the order of TABLES.
    let populations: [(u64, Box<dyn RowGenerator>); 9] = [
        (w, Box::new(Warehouses)),
        (districts, Box::new(Districts)),
        (customers, Box::new(Customers { now: now.clone() })),
        (customers, Box::new(History { now: now.clone() })),
        (
            districts * u64::from(CUSTOMERS - FIRST_NEW_ORDER + 1),
            Box::new(NewOrders),
        ),
        (
            customers,
            Box::new(Orders {
                now: now.clone(),
                seed,
            }),
        ),
        (
            order_lines,
            Box::new(OrderLines {
                now,
                offsets: line_offsets,
            }),
        ),
        (u64::from(ITEMS), Box::new(Items)),
        (w * u64::from(ITEMS), Box::new(Stock)),
    ];
    TABLES
        .iter()
        .zip(&SHAPES)
        .zip(populations)
        .map(|((name, shape), (rows, generator))| shape.spec(name, engine, seed, rows, generator))
        .collect()
}

/// (warehouse, district) of district row `index` (0-based), districts numbered within
/// their warehouse.
fn district_of(index: u64) -> (u32, u32) {
    (
        (index / u64::from(DISTRICTS)) as u32 + 1,
        (index % u64::from(DISTRICTS)) as u32 + 1,
    )
}

/// (warehouse, district, number) of a per-district row `id` (1-based) with `per` rows
/// in each district.
fn in_district(id: u64, per: u32) -> (u32, u32, u32) {
    let index = id - 1;
    let (w, d) = district_of(index / u64::from(per));
    (w, d, (index % u64::from(per)) as u32 + 1)
}

fn text(value: String) -> Value {
    Value::Text(value)
}

fn state(rng: &mut SmallRng) -> String {
    (0..2)
        .map(|_| char::from(b'A' + rng.gen_range(0..26u8)))
        .collect()
}

/// Name, two streets, city, state and zip: the address every warehouse, district and
/// customer has.
fn push_address(rng: &mut SmallRng, row: &mut Vec<Value>, with_name: bool) {
    if with_name {
        row.push(text(alnum(rng, 6, 10)));
    }
    row.push(text(alnum(rng, 10, 20)));
    row.push(text(alnum(rng, 10, 20)));
    row.push(text(alnum(rng, 10, 20)));
    row.push(text(state(rng)));
    row.push(text(zip(rng)));
}

struct Warehouses;

impl RowGenerator for Warehouses {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        row.push(Value::Int(id as i64));
        push_address(rng, row, true);
        row.push(text(rate(rng.gen_range(0..=2000))));
        row.push(text(cents(30_000_000)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct Districts;

impl RowGenerator for Districts {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (w, d) = district_of(id - 1);
        row.push(Value::Int(d.into()));
        row.push(Value::Int(w.into()));
        push_address(rng, row, true);
        row.push(text(rate(rng.gen_range(0..=2000))));
        row.push(text(cents(3_000_000)));
        row.push(Value::Int(i64::from(CUSTOMERS) + 1));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct Customers {
    now: Value,
}

impl RowGenerator for Customers {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (w, d, c) = in_district(id, CUSTOMERS);
        row.push(Value::Int(c.into()));
        row.push(Value::Int(d.into()));
        row.push(Value::Int(w.into()));
        row.push(text(alnum(rng, 8, 16)));
        row.push(text("OE".into()));
        let last = if c <= 1000 {
            c - 1
        } else {
            nurand(rng, 255, random::LOAD.c_last, 0, 999)
        };
        row.push(text(last_name(last)));
        push_address(rng, row, false);
        row.push(text(digits(rng, 16)));
        row.push(self.now.clone());
        row.push(text(
            if rng.gen_range(0..10) == 0 {
                "BC"
            } else {
                "GC"
            }
            .into(),
        ));
        row.push(text(cents(5_000_000)));
        row.push(text(rate(rng.gen_range(0..=5000))));
        row.push(text(cents(-1000)));
        row.push(text(cents(1000)));
        row.push(Value::Int(1));
        row.push(Value::Int(0));
        row.push(text(alnum(rng, 300, 500)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct History {
    now: Value,
}

impl RowGenerator for History {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (w, d, c) = in_district(id, CUSTOMERS);
        row.extend([c, d, w, d, w].map(|n| Value::Int(n.into())));
        row.push(self.now.clone());
        row.push(text(cents(1000)));
        row.push(text(alnum(rng, 12, 24)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct NewOrders;

impl RowGenerator for NewOrders {
    fn fill_row(&self, id: u64, _rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (w, d, n) = in_district(id, CUSTOMERS - FIRST_NEW_ORDER + 1);
        row.push(Value::Int(i64::from(FIRST_NEW_ORDER + n - 1)));
        row.push(Value::Int(d.into()));
        row.push(Value::Int(w.into()));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct Orders {
    now: Value,
    seed: u64,
}

impl RowGenerator for Orders {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (w, d, o) = in_district(id, CUSTOMERS);
        row.push(Value::Int(o.into()));
        row.push(Value::Int(d.into()));
        row.push(Value::Int(w.into()));
        row.push(Value::Int(customer_of_order(w, d, o).into()));
        row.push(self.now.clone());
        row.push(if o < FIRST_NEW_ORDER {
            Value::Int(rng.gen_range(1..=10))
        } else {
            Value::Null
        });
        row.push(Value::Int(lines_of(self.seed, w, d, o).into()));
        row.push(Value::Int(1));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

/// Where each order's lines start among all order lines, so that line row `id` finds its
/// order by a binary search.
struct LineOffsets {
    /// starts[k]: the lines before order k (orders in warehouse, district, id order); one
    /// more entry holds the total.
    starts: Vec<u64>,
}

impl LineOffsets {
    fn new(seed: u64, warehouses: u32) -> LineOffsets {
        let mut starts = Vec::with_capacity((warehouses * DISTRICTS * CUSTOMERS) as usize + 1);
        let mut total = 0u64;
        for w in 1..=warehouses {
            for d in 1..=DISTRICTS {
                for o in 1..=CUSTOMERS {
                    starts.push(total);
                    total += u64::from(lines_of(seed, w, d, o));
                }
            }
        }
        starts.push(total);
        LineOffsets { starts }
    }

    fn total(&self) -> u64 {
        *self.starts.last().unwrap_or(&0)
    }

    /// (order index, line number 1-based) of line row `id` (1-based).
    fn locate(&self, id: u64) -> (u64, u32) {
        let index = id - 1;
        let order = self.starts.partition_point(|&start| start <= index) - 1;
        (order as u64, (index - self.starts[order]) as u32 + 1)
    }
}

struct OrderLines {
    now: Value,
    offsets: LineOffsets,
}

impl RowGenerator for OrderLines {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let (order, number) = self.offsets.locate(id);
        let (w, d, o) = in_district(order + 1, CUSTOMERS);
        row.push(Value::Int(o.into()));
        row.push(Value::Int(d.into()));
        row.push(Value::Int(w.into()));
        row.push(Value::Int(number.into()));
        row.push(Value::Int(rng.gen_range(1..=i64::from(ITEMS))));
        row.push(Value::Int(w.into()));
        let delivered = o < FIRST_NEW_ORDER;
        row.push(if delivered {
            self.now.clone()
        } else {
            Value::Null
        });
        row.push(Value::Int(5));
        row.push(text(cents(if delivered {
            0
        } else {
            rng.gen_range(1..=999_999)
        })));
        row.push(text(alnum(rng, 24, 24)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct Items;

impl RowGenerator for Items {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        row.push(Value::Int(id as i64));
        row.push(Value::Int(rng.gen_range(1..=10_000)));
        row.push(text(alnum(rng, 14, 24)));
        row.push(text(cents(rng.gen_range(100..=10_000))));
        row.push(text(data_with_original(rng)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

struct Stock;

impl RowGenerator for Stock {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let index = id - 1;
        row.push(Value::Int((index % u64::from(ITEMS)) as i64 + 1));
        row.push(Value::Int((index / u64::from(ITEMS)) as i64 + 1));
        row.push(Value::Int(rng.gen_range(10..=100)));
        for _ in 0..10 {
            row.push(text(alnum(rng, 24, 24)));
        }
        row.extend([0, 0, 0].map(Value::Int));
        row.push(text(data_with_original(rng)));
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_population_has_the_specifications_counts_and_the_lines_match_their_orders() {
        let tables = tables(2, Engine::InnoDb, 3, "2026-11-24 10:00:00");
        let rows: Vec<(&str, u64)> = tables.iter().map(|t| (t.name.as_str(), t.rows)).collect();
        assert_eq!(
            &rows[..5],
            &[
                ("warehouse", 2),
                ("district", 20),
                ("customer", 60_000),
                ("history", 60_000),
                ("new_order", 18_000),
            ]
        );
        assert_eq!(rows[7], ("item", 100_000));
        assert_eq!(rows[8], ("stock", 200_000));
        // Every order's lines, in order, and as many as its O_OL_CNT.
        let lines = &tables[6];
        let mut rng = SmallRng::seed_from_u64(1);
        let mut expected = Vec::new();
        for w in 1..=2 {
            for d in 1..=DISTRICTS {
                for o in 1..=CUSTOMERS {
                    for n in 1..=lines_of(3, w, d, o) {
                        expected.push((o, d, w, n));
                    }
                }
            }
        }
        assert_eq!(lines.rows, expected.len() as u64);
        for id in [1, 2, 15, 16, 29_999, expected.len() as u64] {
            let mut row = Vec::new();
            lines.generator.fill_row(id, &mut rng, &mut row);
            let (o, d, w, n) = expected[id as usize - 1];
            assert_eq!(
                &row[..4],
                &[o, d, w, n].map(|v| Value::Int(v.into())),
                "line {id}"
            );
        }
        // Customers' orders are a permutation of the district's customers.
        let mut seen = vec![false; CUSTOMERS as usize + 1];
        for o in 1..=CUSTOMERS {
            seen[customer_of_order(2, 5, o) as usize] = true;
        }
        assert!(seen[1..].iter().all(|&s| s));
        // The first thousand customers' last names are their numbers' syllables.
        let mut row = Vec::new();
        tables[2].generator.fill_row(3001 + 371, &mut rng, &mut row);
        assert_eq!(row[..3], [372, 2, 1].map(Value::Int));
        assert_eq!(row[5], Value::Text("PRICALLYOUGHT".into()));
        assert_eq!(tables[2].columns.len(), row.len());
    }
}
