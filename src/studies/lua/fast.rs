//! The calls a script makes for every statement, as C functions the prelude calls through
//! LuaJIT's ffi (as sysbench's own API calls its C side): executing a prepared statement,
//! sending a text statement, drawing a random number. An ffi call costs a few nanoseconds,
//! JIT-compiled; a call through the Lua C API (mlua) costs several hundred. Everything
//! else (errors, result rows, connecting) goes through `api.rs`.
//!
//! The binary exports these names (build.rs), so that `ffi.C` finds them; the pointers
//! passed are the boxed cores `api.rs` hands the prelude, alive as long as the Lua objects
//! holding them.
//!
//! Owns: the C signatures of the fast calls. Must not know how statements are measured.

use std::ffi::{c_int, c_void};

use super::api::Context;
use super::connection::{ConnCore, EbParam, StmtCore};

/// A script's `ffi.C.usleep(us)` (the prelude routes it here): sleeps this connection
/// only, suspending its coroutine on the event driver instead of blocking the loop and
/// every connection on it; on a thread of its own, it sleeps the thread, as libc's does.
#[no_mangle]
pub extern "C" fn eb_lua_usleep(micros: std::ffi::c_uint) -> c_int {
    crate::driver::events::sleep(std::time::Duration::from_micros(u64::from(micros)));
    0
}

/// Executes a prepared statement; rows read go to `*rows`. See `StmtCore::execute`.
///
/// # Safety
/// `stmt` is a pointer the statement's `pointer()` returned, its Lua object alive.
#[no_mangle]
pub unsafe extern "C" fn eb_lua_execute(stmt: *mut c_void, rows: *mut u64) -> c_int {
    let stmt = unsafe { &mut *stmt.cast::<StmtCore>() };
    let mut read = 0;
    let answer = stmt.execute(&mut read);
    unsafe { *rows = read };
    answer
}

/// Binds `count` parameter buffers to a prepared statement, in placeholder order.
///
/// # Safety
/// `stmt` as for `eb_lua_execute`; `params` points at `count` buffers the prelude keeps
/// alive with the statement.
#[no_mangle]
pub unsafe extern "C" fn eb_lua_bind(
    stmt: *mut c_void,
    count: c_int,
    params: *const *const c_void,
) {
    let stmt = unsafe { &mut *stmt.cast::<StmtCore>() };
    let count = usize::try_from(count).unwrap_or(0);
    stmt.params = (0..count)
        .map(|index| unsafe { *params.add(index) }.cast::<EbParam>())
        .collect();
}

/// Sends a text statement of `len` bytes. See `ConnCore::query`.
///
/// # Safety
/// `conn` is a pointer the connection's `pointer()` returned, its Lua object alive; `sql`
/// points at `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn eb_lua_query(conn: *mut c_void, sql: *const u8, len: usize) -> c_int {
    let conn = unsafe { &mut *conn.cast::<ConnCore>() };
    conn.query(unsafe { std::slice::from_raw_parts(sql, len) })
}

/// A number in [a, b] from `generator` (-1: `--rand-type`'s; 0-4: uniform, gaussian,
/// special, pareto, zipfian).
///
/// # Safety
/// `context` is the state's own (`__enginebench.context`), alive as long as the state.
#[no_mangle]
pub unsafe extern "C" fn eb_lua_rand(
    context: *const c_void,
    generator: c_int,
    a: u32,
    b: u32,
) -> u32 {
    let context = unsafe { &*context.cast::<Context>() };
    context.rand_between(usize::try_from(generator).ok(), a, b)
}
