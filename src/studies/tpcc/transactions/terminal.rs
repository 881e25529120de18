//! What a TPC-C terminal does: the five transactions (new-order, payment, order-status,
//! delivery, stock-level), each its statements in the specification's order, and the
//! rollback a new-order asks for. It must not know pacing, recording or the workload's threads.

use super::*;

impl Terminal {
    /// A customer by id (40%) or by last name (60%, the middle one of those sorted by
    /// first name, their number counted first): its id, and whether it was found by name.
    /// `by_name` is the statement that reads the names in order, and its customer id's
    /// column.
    pub(super) fn pick_customer(
        &mut self,
        tx: &mut Tx,
        (w, d): (u32, u32),
        (by_name, id_column): (&str, usize),
    ) -> Result<(u32, bool), QueryFailure> {
        if self.rng.gen_range(1..=100) <= 60 {
            let last = run_last_name(&mut self.rng);
            let params = [n(w), n(d), Param::Text(&last)];
            tx.drop(at("customers_count_by_name"), &params)?;
            let kind = at(by_name);
            let mut ids = Vec::new();
            let statement = prepared(tx.statements, kind);
            tx.recorder.measure(kind, || {
                statement.execute_rows(params.iter().copied(), |row| {
                    ids.push(row.int(id_column))
                })
            })?;
            if !ids.is_empty() {
                return Ok((ids[ids.len().div_ceil(2) - 1] as u32, true));
            }
        }
        Ok((nurand(&mut self.rng, 1023, RUN.c_id, 1, CUSTOMERS), false))
    }

    /// Another warehouse than `w` (or `w` when there is one).
    pub(super) fn other_warehouse(&mut self, w: u32) -> u32 {
        if self.warehouses == 1 {
            return w;
        }
        let other = self.rng.gen_range(1..self.warehouses);
        if other >= w {
            other + 1
        } else {
            other
        }
    }

    /// New-Order as the TPC-C specification writes it, step by step (2.4.2).
    pub(super) fn new_order(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        let c = nurand(&mut self.rng, 1023, RUN.c_id, 1, CUSTOMERS);
        let lines = self.rng.gen_range(5..=15u32);
        let abort = self.rng.gen_range(1..=100) == 1;
        let (items, all_local) = self.draw_order_lines(w, lines, abort);
        tx.text(at("begin"))?;
        tx.drop(at("no_get_customer_warehouse"), &[n(w), n(d), n(c)])?;
        let order = tx
            .first(at("no_get_district"), &[n(w), n(d)], |row| row.int(0))?
            .unwrap_or(0);
        tx.drop(at("no_update_district"), &[n(w), n(d)])?;
        tx.drop(
            at("no_insert_order"),
            &[n(order), n(d), n(w), n(c), n(lines), n(all_local)],
        )?;
        tx.drop(at("no_insert_new_order"), &[n(order), n(d), n(w)])?;
        if self.statements == TpccStatements::PerLine {
            return match tx.line_by_line((order, d, w), &items)? {
                LinesDone::All => tx.text(at("no_commit")),
                // The specification's user abort: the unused item rolls the order back.
                LinesDone::UnusedItem => self.roll_back(tx),
            };
        }
        let prices = tx.item_prices(&items)?;
        let price_of = |item: u32| {
            prices
                .iter()
                .find(|(id, _)| *id == i64::from(item))
                .map(|(_, price)| *price)
        };
        if items.iter().any(|&(item, _, _)| price_of(item).is_none()) {
            // The specification's user abort: the unused item rolls the order back.
            return self.roll_back(tx);
        }
        let stock = tx.lock_stock(d, &items)?;
        let (amounts, dist_infos) = tx.take_stock(w, &items, stock, price_of)?;
        tx.insert_order_lines((order, d, w), &items, &amounts, &dist_infos)?;
        tx.text(at("no_commit"))
    }

    /// A New-Order's `lines` lines drawn for home warehouse `w` (the last one an unused
    /// item when it must `abort`, 1% supplied by another warehouse): each line's item,
    /// supplying warehouse and quantity; and 1 when every line is supplied by `w`.
    fn draw_order_lines(&mut self, w: u32, lines: u32, abort: bool) -> (Vec<OrderLine>, u32) {
        let mut items = Vec::with_capacity(lines as usize);
        let mut all_local = 1;
        for line in 1..=lines {
            let item = if abort && line == lines {
                ITEMS + 1
            } else {
                nurand(&mut self.rng, 8191, RUN.ol_i_id, 1, ITEMS)
            };
            let supply = if self.rng.gen_range(1..=100) == 1 {
                self.other_warehouse(w)
            } else {
                w
            };
            if supply != w {
                all_local = 0;
            }
            items.push((item, supply, self.rng.gen_range(1..=10u32)));
        }
        (items, all_local)
    }

    pub(super) fn payment(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        let (c_w, c_d) = if self.rng.gen_range(1..=100) <= 85 {
            (w, d)
        } else {
            (self.other_warehouse(w), self.rng.gen_range(1..=DISTRICTS))
        };
        let paid = format!(
            "{:.2}",
            f64::from(self.rng.gen_range(100..=500_000u32)) / 100.0
        );
        let amount = Param::Text(&paid);
        tx.text(at("begin"))?;
        tx.drop(at("p_update_warehouse"), &[amount, n(w)])?;
        tx.drop(at("p_get_warehouse"), &[n(w)])?;
        tx.drop(at("p_update_district"), &[amount, n(w), n(d)])?;
        tx.drop(at("p_get_district"), &[n(w), n(d)])?;
        let (c, _) = self.pick_customer(tx, (c_w, c_d), ("customers_by_name", 0))?;
        let bad_credit = tx
            .first(at("p_get_customer"), &[n(c_w), n(c_d), n(c)], |row| {
                row.get(9) == Some(b"BC")
            })?
            .unwrap_or(false);
        if bad_credit {
            let old = tx
                .first(at("p_get_customer_data"), &[n(c_w), n(c_d), n(c)], |row| {
                    row.text(0)
                })?
                .unwrap_or_default();
            let mut data = format!("{c} {c_d} {c_w} {d} {w} {paid} | {old}");
            data.truncate(500);
            tx.drop(
                at("p_update_customer_bad_credit"),
                &[amount, amount, Param::Text(&data), n(c_w), n(c_d), n(c)],
            )?;
        } else {
            tx.drop(
                at("p_update_customer"),
                &[amount, amount, n(c_w), n(c_d), n(c)],
            )?;
        }
        let history = alnum(&mut self.rng, 12, 24);
        tx.drop(
            at("p_insert_history"),
            &[
                n(c_d),
                n(c_w),
                n(c),
                n(d),
                n(w),
                amount,
                Param::Text(&history),
            ],
        )?;
        tx.text(at("p_commit"))
    }

    pub(super) fn order_status(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = self.rng.gen_range(1..=DISTRICTS);
        tx.text(at("begin"))?;
        let (c, by_name) = self.pick_customer(tx, (w, d), ("os_customers_by_name", 3))?;
        if !by_name {
            tx.drop(at("os_get_customer"), &[n(w), n(d), n(c)])?;
        }
        if let Some(order) = tx.first(at("os_get_last_order"), &[n(w), n(d), n(c)], |row| {
            row.int(0)
        })? {
            tx.drop(at("os_get_order_lines"), &[n(w), n(d), n(order)])?;
        }
        tx.text(at("os_commit"))
    }

    pub(super) fn delivery(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let carrier = self.rng.gen_range(1..=10u32);
        tx.text(at("begin"))?;
        for d in 1..=DISTRICTS {
            let Some(o) = tx.first(at("d_get_new_order"), &[n(w), n(d)], |row| row.int(0))? else {
                continue;
            };
            tx.drop(at("d_delete_new_order"), &[n(w), n(d), n(o)])?;
            let customer = tx
                .first(at("d_get_order_customer"), &[n(w), n(d), n(o)], |row| {
                    row.int(0)
                })?
                .unwrap_or(0);
            tx.drop(at("d_update_order"), &[n(carrier), n(w), n(d), n(o)])?;
            tx.drop(at("d_update_order_lines"), &[n(w), n(d), n(o)])?;
            let total = tx
                .first(at("d_sum_amount"), &[n(w), n(d), n(o)], |row| row.float(0))?
                .unwrap_or(0.0);
            let total = format!("{total:.2}");
            tx.drop(
                at("d_update_customer"),
                &[Param::Text(&total), n(w), n(d), n(customer)],
            )?;
        }
        tx.text(at("d_commit"))
    }

    pub(super) fn stock_level(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        let w = self.home;
        let d = match self.district {
            Some(d) => d,
            None => self.rng.gen_range(1..=DISTRICTS),
        };
        let threshold = self.rng.gen_range(10..=20u32);
        tx.text(at("begin"))?;
        let next = tx
            .first(at("sl_get_district"), &[n(w), n(d)], |row| row.int(0))?
            .unwrap_or(0);
        tx.drop(
            at("sl_count_low_stock"),
            &[n(w), n(d), n(next), n(next - 20), n(w), n(threshold)],
        )?;
        tx.text(at("sl_commit"))
    }

    /// The user abort's ROLLBACK; a warning means non-transactional changes stayed.
    pub(super) fn roll_back(&mut self, tx: &mut Tx) -> Result<(), QueryFailure> {
        tx.text(at("rollback"))?;
        if tx.conn.warning_count() > 0 {
            self.shared
                .rollbacks_not_honoured
                .fetch_add(1, Ordering::Relaxed);
            if let Ok(mut first) = self.shared.first_warning.lock() {
                if first.is_none() {
                    *first = Some(
                        first_warning(tx.conn)
                            .unwrap_or_else(|| "the ROLLBACK left a warning".into()),
                    );
                }
            }
        }
        Ok(())
    }
}

/// One New-Order line: its item, supplying warehouse and quantity.
type OrderLine = (u32, u32, u32);

/// How a New-Order's lines sent line by line ended.
enum LinesDone {
    All,
    /// A line ordered the unused item (its read found no row): the order rolls back.
    UnusedItem,
}

impl Tx<'_> {
    /// The order's lines one by one, each its item read, its stock row locked and updated
    /// and its order line inserted, a statement each, as sysbench-tpcc sends them.
    fn line_by_line(
        &mut self,
        (order, d, w): (i64, u32, u32),
        items: &[OrderLine],
    ) -> Result<LinesDone, QueryFailure> {
        for (number, &(item, supply, quantity)) in items.iter().enumerate() {
            let Some(price) = self.first(at("no_get_item"), &[n(item)], |row| row.float(0))?
            else {
                return Ok(LinesDone::UnusedItem);
            };
            let params = [n(item), n(supply)];
            let stock_row = first_row(
                self.recorder,
                at("no_get_stock"),
                &mut self.stock[d as usize - 1],
                &params,
                |row| (row.int(0), row.text(2)),
            )?;
            let (left, dist_info) = stock_row.unwrap_or_default();
            self.update_stock(w, (item, supply, quantity), left)?;
            let amount = format!("{:.2}", f64::from(quantity) * price);
            self.drop(
                at("no_insert_order_line"),
                &[
                    n(order),
                    n(d),
                    n(w),
                    n(number as u32 + 1),
                    n(item),
                    n(supply),
                    n(quantity),
                    Param::Text(&amount),
                    Param::Text(&dist_info),
                ],
            )?;
        }
        Ok(LinesDone::All)
    }

    /// A line of home warehouse `w` takes its quantity from stock row (item, supplying
    /// warehouse) holding `left`, as clause 2.4.2.2 says: down by the quantity, or up by 91
    /// when fewer than 10 would be left; its year-to-date, order and remote counts move.
    /// The quantity now left.
    fn update_stock(
        &mut self,
        w: u32,
        (item, supply, quantity): OrderLine,
        left: i64,
    ) -> Result<i64, QueryFailure> {
        let quantity_left = if left >= i64::from(quantity) + 10 {
            left - i64::from(quantity)
        } else {
            left - i64::from(quantity) + 91
        };
        self.drop(
            at("no_update_stock"),
            &[
                n(quantity_left),
                n(quantity),
                n(u32::from(supply != w)),
                n(item),
                n(supply),
            ],
        )?;
        Ok(quantity_left)
    }

    /// The prices of the order's items, in one statement (the list padded with the first
    /// item): (item id, price) of each item found.
    fn item_prices(&mut self, items: &[OrderLine]) -> Result<Vec<(i64, f64)>, QueryFailure> {
        let item_ids: Vec<Param> = (0..MAX_LINES as usize)
            .map(|line| n(items.get(line).unwrap_or(&items[0]).0))
            .collect();
        let mut prices: Vec<(i64, f64)> = Vec::with_capacity(items.len());
        let kind = at("no_get_items");
        let statement = prepared(self.statements, kind);
        self.recorder.measure(kind, || {
            statement.execute_rows(item_ids.iter().copied(), |row| {
                prices.push((row.int(0), row.float(1)))
            })
        })?;
        Ok(prices)
    }

    /// The lines' stock rows of district `d`, locked in one statement: (warehouse, item,
    /// quantity, s_dist of the district) of each.
    fn lock_stock(
        &mut self,
        d: u32,
        items: &[OrderLine],
    ) -> Result<Vec<(i64, i64, i64, String)>, QueryFailure> {
        let stock_keys: Vec<Param> = (0..MAX_LINES as usize)
            .flat_map(|line| {
                let &(item, supply, _) = items.get(line).unwrap_or(&items[0]);
                [n(supply), n(item)]
            })
            .collect();
        let mut stock: Vec<(i64, i64, i64, String)> = Vec::with_capacity(items.len());
        let kind = at("no_get_stocks");
        let statement = &mut self.stock[d as usize - 1];
        self.recorder.measure(kind, || {
            statement.execute_rows(stock_keys.iter().copied(), |row| {
                stock.push((
                    row.int(0),
                    row.int(1),
                    row.int(2),
                    String::from_utf8_lossy(row.get(4).unwrap_or_default()).into_owned(),
                ))
            })
        })?;
        Ok(stock)
    }

    /// Each line takes its quantity from its `stock` row, in line order (an item ordered
    /// twice takes from what the first line left), and updates the row: each line's amount
    /// (at `price_of` its item) and district information.
    fn take_stock(
        &mut self,
        w: u32,
        items: &[OrderLine],
        mut stock: Vec<(i64, i64, i64, String)>,
        price_of: impl Fn(u32) -> Option<f64>,
    ) -> Result<(Vec<String>, Vec<String>), QueryFailure> {
        let mut amounts = Vec::with_capacity(items.len());
        let mut dist_infos = Vec::with_capacity(items.len());
        for &(item, supply, quantity) in items {
            let row = stock
                .iter_mut()
                .find(|(w, i, _, _)| *w == i64::from(supply) && *i == i64::from(item));
            let (left, dist_info) = row
                .as_ref()
                .map_or((0, String::new()), |(_, _, left, dist)| (*left, dist.clone()));
            let quantity_left = self.update_stock(w, (item, supply, quantity), left)?;
            if let Some((_, _, left, _)) = row {
                *left = quantity_left;
            }
            let price = price_of(item).unwrap_or_default();
            amounts.push(format!("{:.2}", f64::from(quantity) * price));
            dist_infos.push(dist_info);
        }
        Ok((amounts, dist_infos))
    }

    /// The order's lines, in one INSERT (prepared once per line count).
    fn insert_order_lines(
        &mut self,
        (order, d, w): (i64, u32, u32),
        items: &[OrderLine],
        amounts: &[String],
        dist_infos: &[String],
    ) -> Result<(), QueryFailure> {
        let mut line_values = Vec::with_capacity(items.len() * 9);
        for (number, &(item, supply, quantity)) in items.iter().enumerate() {
            line_values.extend([
                n(order),
                n(d),
                n(w),
                n(number as u32 + 1),
                n(item),
                n(supply),
                n(quantity),
                Param::Text(&amounts[number]),
                Param::Text(&dist_infos[number]),
            ]);
        }
        let kind = at("no_insert_order_lines");
        let statement = match &mut self.order_lines[items.len()] {
            Some(statement) => statement,
            empty => empty.insert(
                self.conn
                    .statement(&sql_with(kind, 1, items.len() as u32), self.protocol)
                    .map_err(|err| crate::sqlerror::classify(kind, &err))?,
            ),
        };
        self.recorder
            .measure(kind, || statement.execute_drop(line_values.iter().copied()))
    }
}
