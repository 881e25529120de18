-- sysbench 0.5's Lua API as sysbench 1.0.20 still gives it to old scripts: thread_id and
-- test, the sb_rand* names, the db_* calls on one implicit connection per Lua state,
-- sysbench.db, DB_ERROR_*, mysql_table_engine and myisam_max_rows. Loaded into every
-- state right after prelude.lua and built on its sysbench 1.0 API, so the statements go
-- out (and are measured) the same way. Written from sysbench 1.0.20's observed behaviour
-- (its tests/t/api_legacy_*.t and the 0.5-era scripts of tests/include/oltp_legacy); no
-- sysbench source is copied. Options given to a script that declares none become globals
-- too: script.rs does that, after the script's own top-level code, as sysbench does.
--
-- Owns: the legacy names. Must not know how statements are sent or measured.

thread_id = sysbench.tid
test = sysbench.cmdline.script_path

sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special

-- 32 random bits as a number. sysbench keeps the low half of a 64-bit draw; a uniform
-- draw over the same range is the same distribution (enginebench's 64-bit draw is a
-- double, whose low bits are zeros).
function sb_rnd()
   return sysbench.rand.uniform(0, 4294967295)
end

-- A number never drawn before in this state, within [a, b] (default: all 32-bit numbers):
-- unique numbers are drawn until one falls in the range, as sysbench does.
function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local value
   repeat
      value = sysbench.rand.unique()
   until value >= a and value <= b
   return value
end

DB_ERROR_NONE = sysbench.sql.error.NONE
DB_ERROR_RESTART_TRANSACTION = sysbench.sql.error.IGNORABLE
DB_ERROR_FAILED = sysbench.sql.error.FATAL

-- What 0.5's common.lua builds its CREATE TABLE from; --mysql-table-engine replaces it.
mysql_table_engine = mysql_table_engine or "innodb"
myisam_max_rows = 1000000

-- This state's driver and its one connection: made by db_connect(), or by the first
-- db_query/db_prepare/db_bulk_insert_init without one.
local driver, con

-- Statements and results are userdata, as sysbench's are (type() and tostring() say so),
-- each proxy's metatable indexing its own fields; `legacy_kinds` says which each is.
local legacy_kinds = setmetatable({}, { __mode = "k" })

local function legacy_object(kind, fields)
   local object = newproxy(true)
   local mt = getmetatable(object)
   mt.__index = fields
   mt.__newindex = fields
   legacy_kinds[object] = kind
   return object
end

local function connect()
   driver = driver or sysbench.sql.driver()
   -- sysbench sets the driver's name as the global 0.5's scripts branch on.
   db_driver = driver:name()
   if con == nil then
      local ok, made = pcall(driver.connect, driver)
      if not ok then
         error("Failed to connect to the database: " .. tostring(made), 3)
      end
      con = made
   end
end

-- The calls that need a connection and do not make one say so, as sysbench does.
local function connected()
   if con == nil then
      error("Uninitialized database connection", 3)
   end
   return con
end

-- Argument errors in Lua's words, at `level` as error() would take it in the function
-- calling these (2 in a db_* function: the script's line that called it).
local function bad_argument(n, call, expected, value, level)
   error(string.format("bad argument #%d to '%s' (%s expected, got %s)", n, call, expected,
                       type(value)), level + 1)
end

-- A string argument, a number read as its text (as Lua's C API reads it).
local function text_argument(value, n, call, level)
   if type(value) == "number" then
      return tostring(value)
   elseif type(value) ~= "string" then
      bad_argument(n, call, "string", value, level + 1)
   end
   return value
end

local function statement_argument(stmt, call)
   if legacy_kinds[stmt] ~= "sysbench.stmt" then
      bad_argument(1, call, "sysbench.stmt", stmt, 3)
   end
   return stmt
end

local function result_argument(rs, call)
   if legacy_kinds[rs] ~= "sysbench.rs" then
      bad_argument(1, call, "sysbench.rs", rs, 3)
   end
end

-- An error of the 1.0 API that restarts the event (an ignorable SQL error's table) goes
-- on as it is; any other is `message`, at the script's line.
local function restart_or(err, message)
   if type(err) == "table" and err.errcode == sysbench.error.RESTART_EVENT then
      error(err, 0)
   end
   error(message, 3)
end

function db_connect()
   connect()
end

function db_disconnect()
   if con ~= nil then
      con:disconnect()
      con = nil
   end
end

-- A statement whose result is dropped: 0.5's scripts get nothing back.
function db_query(query)
   if con == nil then
      connect()
   end
   query = text_argument(query, 1, "db_query", 2)
   local ok, err = pcall(con.query, con, query)
   if not ok then
      restart_or(err, "db_query() failed")
   end
end

function db_bulk_insert_init(query)
   if con == nil then
      connect()
   end
   query = text_argument(query, 1, "db_bulk_insert_init", 2)
   local ok = pcall(con.bulk_insert_init, con, query)
   if not ok then
      error("db_bulk_insert_init() failed", 2)
   end
end

-- A row's failure (its INSERT sent when the buffer filled) fails the call, ignorable or not.
function db_bulk_insert_next(row)
   local connection = connected()
   row = text_argument(row, 1, "db_bulk_insert_next", 2)
   local ok = pcall(connection.bulk_insert_next, connection, row)
   if not ok then
      error("db_bulk_insert_next() failed", 2)
   end
end

-- The last INSERT's failure is only logged (sysbench prints it and goes on).
function db_bulk_insert_done()
   local connection = connected()
   pcall(connection.bulk_insert_done, connection)
end

-- A prepared statement; its parameters are a table's entries, bound by db_bind_param and
-- read again at each db_execute.
function db_prepare(query)
   if con == nil then
      connect()
   end
   query = text_argument(query, 1, "db_prepare", 2)
   local ok, stmt = pcall(con.prepare, con, query)
   if not ok then
      error("db_prepare() failed", 2)
   end
   return legacy_object("sysbench.stmt", { stmt = stmt })
end

-- Each entry of `values` (in the order `next` walks the table, as sysbench walks it) is a
-- parameter, a number bound as a 32-bit INT and a string as a CHAR; the table is kept, and
-- each db_execute sends its entries' values at that time.
local INT, CHAR = sysbench.sql.type.INT, sysbench.sql.type.VARCHAR
local CHAR_BYTES = 2147483647

local function bind_kinds(values, call)
   if type(values) ~= "table" then
      error("table was expected", 3)
   end
   if next(values) == nil then
      error("table is empty", 3)
   end
   local ids, kinds = {}, {}
   for id, value in next, values do
      if type(id) ~= "number" then
         bad_argument(-2, call, "number", id, 3)
      end
      if type(value) == "number" then
         kinds[#kinds + 1] = INT
      elseif type(value) == "string" then
         kinds[#kinds + 1] = CHAR
      else
         error("Unsupported variable type: " .. type(value), 3)
      end
      ids[#ids + 1] = id
   end
   return ids, kinds
end

function db_bind_param(stmt, values)
   connected()
   statement_argument(stmt, "db_bind_param")
   local ids, kinds = bind_kinds(values, "db_bind_param")
   local binds = {}
   for i, kind in ipairs(kinds) do
      binds[i] = stmt.stmt:bind_create(kind, kind == CHAR and CHAR_BYTES or nil)
   end
   stmt.stmt:bind_param(unpack(binds))
   stmt.values, stmt.ids, stmt.kinds, stmt.binds = values, ids, kinds, binds
end

-- Result buffers: sysbench binds them but never hands their values to the script, so only
-- the arguments are checked.
function db_bind_result(stmt, values)
   connected()
   statement_argument(stmt, "db_bind_result")
   bind_kinds(values, "db_bind_result")
end

-- A number as C's (int) cast of a double leaves it on x86-64: truncated toward zero, and
-- INT_MIN when out of range, which is what sysbench's buffer then holds.
local function c_int(n)
   if n ~= n or n >= 2147483648 or n <= -2147483649 then
      return -2147483648
   end
   return n >= 0 and math.floor(n) or math.ceil(n)
end

local function set_params(stmt)
   local values = stmt.values
   for i, id in ipairs(stmt.ids) do
      local value, bind = values[id], stmt.binds[i]
      if value == nil then
         bind:set(nil)
      elseif stmt.kinds[i] == INT then
         local n = tonumber(value)
         if n == nil then
            bad_argument(-1, "db_execute", "number", value, 3)
         end
         bind:set(c_int(n))
      else
         bind:set(text_argument(value, -1, "db_execute", 3))
      end
   end
end

-- Executes with the bound table's current values. An ignorable error restarts the event;
-- any other is logged (FATAL: …) and the script goes on with an empty result, as sysbench.
function db_execute(stmt)
   connected()
   statement_argument(stmt, "db_execute")
   if stmt.ids ~= nil then
      set_params(stmt)
   end
   local ok, err = pcall(stmt.stmt.execute, stmt.stmt)
   if not ok and type(err) == "table" and err.errcode == sysbench.error.RESTART_EVENT then
      error(err, 0)
   end
   return legacy_object("sysbench.rs", {})
end

function db_close(stmt)
   connected()
   statement_argument(stmt, "db_close")
   stmt.stmt:close()
end

-- Results are stored as each statement returns, and a prepared statement's rows are
-- counted, not kept: nothing left to store or free.
function db_store_results(rs)
   connected()
   result_argument(rs, "db_store_results")
end

function db_free_results(rs)
   connected()
   result_argument(rs, "db_free_results")
end

sysbench.db = {
   connect = db_connect,
   disconnect = db_disconnect,
   query = db_query,
   bulk_insert_init = db_bulk_insert_init,
   bulk_insert_next = db_bulk_insert_next,
   bulk_insert_done = db_bulk_insert_done,
   prepare = db_prepare,
   bind_param = db_bind_param,
   bind_result = db_bind_result,
   execute = db_execute,
   close = db_close,
   store_results = db_store_results,
   free_results = db_free_results,
   DB_ERROR_NONE = DB_ERROR_NONE,
   DB_ERROR_RESTART_TRANSACTION = DB_ERROR_RESTART_TRANSACTION,
   DB_ERROR_FAILED = DB_ERROR_FAILED,
}
