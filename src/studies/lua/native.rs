//! The `__enginebench` table the prelude wraps (`prelude.lua`): connecting, random strings
//! and numbers the ffi calls do not cover, fatal-error lines, a statement's text around its
//! placeholders (`crate::sqltext`'s reading), and the state's context for the ffi calls
//! (`fast.rs`); and sysbench's `sb_counter_inc`, which scripts declare.
//!
//! Owns: what the prelude may call natively. Must not know the runner or the reports.

use mlua::{AnyUserData, Lua};
use rand::Rng;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

use super::api::Context;
use super::connection::Conn;

/// The `__enginebench` table the prelude takes its native calls from.
pub fn install(lua: &Lua, context: Rc<Context>) -> mlua::Result<()> {
    let native = lua.create_table()?;
    let ctx = Rc::clone(&context);
    native.set(
        "connect",
        lua.create_function(move |lua, ()| match ctx.connect() {
            Ok(connection) => {
                let conn: AnyUserData =
                    lua.create_userdata(Conn::new(Rc::clone(&ctx), connection))?;
                Ok((Some(conn), None))
            }
            // With the TLS fix when TLS is what failed, as a run's own connections say it.
            Err(err) => Ok((
                None,
                Some(crate::server::tls::describe_connect_error(
                    &err,
                    ctx.spec.tls(),
                )),
            )),
        })?,
    )?;
    native.set("count_ignored", lua.create_function(|_, ()| Ok(()))?)?;
    native.set("around_placeholders", around_placeholders(lua)?)?;
    native.set("driver_created", note_driver_created(lua)?)?;
    let ctx = Rc::clone(&context);
    native.set(
        "fatal_sql_error",
        lua.create_function(
            move |_, (call, code, message, query): (String, i64, String, Option<String>)| {
                let line = match query {
                    Some(query) => {
                        format!("{call} returned error {code} ({message}) for query '{query}'")
                    }
                    None => format!("{call} returned error {code} ({message})"),
                };
                let repeated = ctx.fatal.borrow().as_deref() == Some(line.as_str());
                *ctx.fatal.borrow_mut() = Some(line.clone());
                Ok((line, repeated))
            },
        )?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_uniform_uint64",
        lua.create_function(move |_, ()| Ok(ctx.rng.borrow_mut().gen::<u64>() as f64))?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_uniform_double",
        lua.create_function(move |_, ()| Ok(ctx.rng.borrow_mut().gen::<f64>()))?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_unique",
        lua.create_function(move |_, ()| Ok(next_unique(ctx.unique_offset)))?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_string",
        lua.create_function(move |lua, template: mlua::String| {
            let mut rng = ctx.rng.borrow_mut();
            let bytes: Vec<u8> = template
                .as_bytes()
                .iter()
                .map(|&byte| match byte {
                    b'#' => rng.gen_range(b'0'..=b'9'),
                    b'@' => rng.gen_range(b'a'..=b'z'),
                    other => other,
                })
                .collect();
            lua.create_string(bytes)
        })?,
    )?;
    let ctx = Rc::clone(&context);
    native.set(
        "rand_varstring",
        lua.create_function(move |lua, (min, max): (u32, u32)| {
            let mut rng = ctx.rng.borrow_mut();
            let length = rng.gen_range(min.min(max)..=max.max(min));
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    let pick = rng.gen_range(0..36u8);
                    if pick < 10 {
                        b'0' + pick
                    } else {
                        b'a' + pick - 10
                    }
                })
                .collect();
            lua.create_string(bytes)
        })?,
    )?;
    native.set(
        "context",
        mlua::LightUserData(Rc::as_ptr(&context).cast_mut().cast::<std::ffi::c_void>()),
    )?;
    lua.globals().set("__enginebench", native)?;
    Ok(())
}

/// The process's unique sequence, one for every state as sysbench's is one for every
/// thread: `sysbench.rand.unique()` (0.5's `sb_rand_uniq`, which scripts give rows their
/// ids with) never draws a number twice, whichever thread draws it.
/// Whether any script state of this process has created a database driver
/// (`sysbench.sql.driver()`): sysbench's `stats_enabled`, set by its `db_init`, which is
/// what makes its `--report-interval` line count statements rather than events. One
/// flag per process, as sysbench's, because a command runs one script.
static DATABASE_DRIVER_CREATED: AtomicBool = AtomicBool::new(false);

/// The native call an emulated prepared statement (`--db-ps-mode=disable`) splits its
/// text with: the pieces around the `?` the server would take for placeholders.
fn around_placeholders(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|lua, query: mlua::String| {
        let query = query.as_bytes();
        let pieces = crate::sqltext::pieces_around_placeholders(&query[..])
            .into_iter()
            .map(|piece| lua.create_string(&query[piece]))
            .collect::<mlua::Result<Vec<_>>>()?;
        lua.create_sequence_from(pieces)
    })
}

/// The native call `sysbench.sql.driver()` makes once the driver's name is accepted.
fn note_driver_created(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|_, ()| {
        DATABASE_DRIVER_CREATED.store(true, Ordering::Release);
        Ok(())
    })
}

/// Whether a script of this process has created a database driver (see above).
pub fn database_driver_created() -> bool {
    DATABASE_DRIVER_CREATED.load(Ordering::Acquire)
}

static UNIQUE_INDEX: AtomicU32 = AtomicU32::new(0);
static UNIQUE_OFFSET: OnceLock<u32> = OnceLock::new();

/// The sequence's next number; `offset` (a state's random draw) places the sequence when
/// it is first drawn from.
fn next_unique(offset: u32) -> u32 {
    let offset = *UNIQUE_OFFSET.get_or_init(|| offset);
    let index = UNIQUE_INDEX.fetch_add(1, Ordering::Relaxed);
    unique_permutation(unique_permutation(index).wrapping_add(offset) ^ 0x5bf0_3635)
}

/// sysbench's unique-number permutation (a quadratic residue mod the largest prime below
/// 2^32), which gives each of 2^32 draws a distinct value.
fn unique_permutation(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

/// sysbench's `sb_counter_inc(thread, type)`, for scripts that declare it through ffi
/// (Percona's TPC-C counts its own errors with it). enginebench counts statements from
/// the statements themselves, so the call is accepted and has no effect.
#[no_mangle]
pub extern "C" fn sb_counter_inc(_thread_id: std::ffi::c_int, _counter: std::ffi::c_int) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_numbers_do_not_repeat() {
        let drawn: std::collections::HashSet<u32> = (0..100_000u32)
            .map(|i| unique_permutation(unique_permutation(i).wrapping_add(7) ^ 0x5bf0_3635))
            .collect();
        assert_eq!(drawn.len(), 100_000);
    }

    #[test]
    fn states_share_one_unique_sequence() {
        // Two states (their own offsets) drawing in turn, as two threads' scripts do.
        let drawn: std::collections::HashSet<u32> = (0..50_000u32)
            .flat_map(|_| [next_unique(11), next_unique(99_999)])
            .collect();
        assert_eq!(drawn.len(), 100_000);
    }
}
