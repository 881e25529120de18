-- enginebench's own implementation of sysbench 1.0's Lua API, loaded into every Lua state
-- before the user's script. Written from sysbench's documented API and its observed
-- behaviour (Debian's sysbench 1.0.20 is the oracle); no sysbench source is copied. The
-- SQL calls go to `__enginebench` (Rust, src/studies/lua/api.rs), which times each
-- statement under its digest and, on the event driver, suspends the connection's
-- coroutine instead of blocking.

local native = __enginebench
__enginebench = nil

ffi = require("ffi")

-- The types and C symbols scripts name through ffi (sysbench's sb_counter_inc and its
-- counter types): declared as sysbench declares them, so a script's own cdef that uses
-- them compiles.
ffi.cdef[[
typedef enum
{
  SB_CNT_OTHER,
  SB_CNT_READ,
  SB_CNT_WRITE,
  SB_CNT_TRX,
  SB_CNT_ERROR,
  SB_CNT_RECONNECT,
  SB_CNT_MAX
} sb_counter_type;
typedef enum
{
  DB_ERROR_NONE,
  DB_ERROR_IGNORABLE,
  DB_ERROR_FATAL
} sql_error_t;
typedef enum
{
  SQL_TYPE_NONE,
  SQL_TYPE_TINYINT,
  SQL_TYPE_SMALLINT,
  SQL_TYPE_INT,
  SQL_TYPE_BIGINT,
  SQL_TYPE_FLOAT,
  SQL_TYPE_DOUBLE,
  SQL_TYPE_TIME,
  SQL_TYPE_DATE,
  SQL_TYPE_DATETIME,
  SQL_TYPE_TIMESTAMP,
  SQL_TYPE_CHAR,
  SQL_TYPE_VARCHAR
} sql_bind_type_t;
]]

sysbench = sysbench or {}
sysbench.version = "1.0.20"
sysbench.version_string = "sysbench 1.0.20 (enginebench)"
sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.hooks = {}
sysbench.cmdline = sysbench.cmdline or {}
sysbench.cmdline.PARALLEL_COMMAND = true
sysbench.cmdline.ARG_NULL = 0
sysbench.cmdline.ARG_BOOL = 1
sysbench.cmdline.ARG_INT = 2
sysbench.cmdline.ARG_SIZE = 3
sysbench.cmdline.ARG_DOUBLE = 4
sysbench.cmdline.ARG_STRING = 5
sysbench.cmdline.ARG_LIST = 6
sysbench.cmdline.ARG_FILE = 7
sysbench.cmdline.ARG_MAX = 8
sysbench.opt = sysbench.opt or {}

-- sysbench.cmdline's functions, as sysbench 1.0.20 has them. Options are read by
-- enginebench from the table itself (script.rs), so reading them here only checks it.
function sysbench.cmdline.read_cmdline_options()
   local options = sysbench.cmdline.options
   if options == nil then
      return true
   end
   assert(type(options) == "table", "wrong type for sysbench.cmdline.options: " .. type(options))
   for name, def in pairs(options) do
      assert(type(name) == "string" and type(def) == "table",
             "wrong table structure in sysbench.cmdline.options")
      assert(def[1] ~= nil, "nil description for option " .. name)
   end
   return true
end

function sysbench.cmdline.command_defined(name)
   local commands = sysbench.cmdline.commands
   return type(commands) == "table" and commands[name] ~= nil and commands[name][1] ~= nil
end

function sysbench.cmdline.command_parallel(name)
   return sysbench.cmdline.command_defined(name) and
      sysbench.cmdline.commands[name][2] == sysbench.cmdline.PARALLEL_COMMAND
end

-- Runs a declared command: false when there is none, else whether it succeeded (no
-- value returned counts as success, as in sysbench).
function sysbench.cmdline.call_command(name)
   if not sysbench.cmdline.command_defined(name) then
      return false
   end
   local rc = sysbench.cmdline.commands[name][1]()
   if rc == nil then
      return true
   end
   return rc and true or false
end

-- The script's options in sysbench's help layout (what `SCRIPT help` prints after its
-- "NAME options:" line), for a script's own help().
function sysbench.cmdline.print_test_options()
   local text = native.test_options_text()
   print(text:sub(1, -2))
end

-- The per-statement calls, made through ffi as sysbench makes its own (src/studies/lua/fast.rs):
-- a parameter's buffer, which param:set writes and each execution reads.
ffi.cdef[[
typedef struct {
  int64_t i;
  double d;
  const char *s;
  size_t len;
  int32_t kind;
  int32_t is_null;
} eb_param;
int eb_lua_execute(void *stmt, uint64_t *rows);
void eb_lua_bind(void *stmt, int count, const void **params);
int eb_lua_query(void *conn, const char *sql, size_t len);
uint32_t eb_lua_rand(const void *context, int generator, uint32_t a, uint32_t b);
int eb_lua_usleep(unsigned int micros);
]]
local C = ffi.C

-- A script's ffi.C.usleep(us) (think time, as sysbench scripts write it) sleeps its own
-- connection: on the event driver libc's would block the loop with every connection on it.
-- Every other name is looked up in the process as before (once, then kept here).
do
   local process = ffi.C
   ffi.C = setmetatable({ usleep = C.eb_lua_usleep }, {
      __index = function(symbols, name)
         local found = process[name]
         rawset(symbols, name, found)
         return found
      end,
   })
end
local CONTEXT = ffi.cast("const void *", native.context)
local eb_rand = C.eb_lua_rand

-- The fast calls' answers (api.rs).
local ANSWER_NONE, ANSWER_ROWS, ANSWER_CLOSED, ANSWER_INTERRUPTED = 0, 1, -2, -3

-- sysbench.rand: the generators live in Rust (one per state, seeded per thread).
sysbench.rand = {
   default = function(a, b) return eb_rand(CONTEXT, -1, a, b) end,
   uniform = function(a, b) return eb_rand(CONTEXT, 0, a, b) end,
   gaussian = function(a, b) return eb_rand(CONTEXT, 1, a, b) end,
   special = function(a, b) return eb_rand(CONTEXT, 2, a, b) end,
   pareto = function(a, b) return eb_rand(CONTEXT, 3, a, b) end,
   zipfian = function(a, b) return eb_rand(CONTEXT, 4, a, b) end,
   uniform_uint64 = native.rand_uniform_uint64,
   uniform_double = native.rand_uniform_double,
   unique = native.rand_unique,
   string = native.rand_string,
   varstring = native.rand_varstring,
}

-- sysbench.sql
sysbench.sql = {}
sysbench.sql.type = {
   NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
   TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
}
sysbench.sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }

local sql_type = sysbench.sql.type

-- What a statement without a result set answers: sysbench hands back a NULL `sql_result *`,
-- which compares equal to nil yet is true in a test and prints as <sql_result>. The same
-- here, except that reading a field of it raises an error instead of crashing.
ffi.cdef[[ typedef struct { int unused; } enginebench_no_result; ]]
ffi.metatype("enginebench_no_result", {
   __tostring = function() return "<sql_result>" end,
   __index = function(_, key)
      error("the statement returned no result set, so its result has no '" .. tostring(key) ..
            "' (sysbench would crash here)", 2)
   end,
})
local NO_RESULT = ffi.cast("enginebench_no_result *", nil)

local driver_methods = {}
local driver_mt = {
   __index = driver_methods,
   __tostring = function() return "<sql_driver>" end,
}
local connection_methods = {}
local connection_mt = {
   __index = connection_methods,
   __tostring = function() return "<sql_connection>" end,
}
local statement_methods = {}
local statement_mt = {
   __index = statement_methods,
   __tostring = function() return "<sql_statement>" end,
}
local param_methods = {}
-- A prepared statement's result: its rows counted (nrows), not kept.
local prepared_result_methods = {
   fetch_row = function()
      error("fetch_row() on a prepared statement's result: enginebench counts its rows " ..
            "(rs.nrows) but does not keep them (sysbench 1.0 cannot fetch them either); " ..
            "use con:query() to read rows", 2)
   end,
   free = function() return true end,
}
local prepared_result_mt = {
   __index = prepared_result_methods,
   __tostring = function() return "<sql_result>" end,
}
local param_mt = {
   __index = param_methods,
   __tostring = function() return "<sql_param>" end,
}

function sysbench.sql.driver(name)
   -- sysbench's db_create(): the name given, else --db-driver; an unknown one logged as
   -- a FATAL line before the error the script sees.
   name = name or sysbench.opt.db_driver or "mysql"
   if name ~= "mysql" then
      print(string.format("FATAL: invalid database driver name: '%s'", tostring(name)))
      error("failed to initialize the DB driver", 2)
   end
   native.driver_created()
   return setmetatable({ sname = "mysql", lname = "MySQL driver" }, driver_mt)
end

function driver_methods.name(self)
   return self.sname
end

function driver_methods.connect(self)
   local handle, message = native.connect()
   if handle == nil then
      error("connection creation failed: " .. tostring(message), 2)
   end
   return setmetatable({ handle = handle, ptr = ffi.cast("void *", handle:pointer()),
                         rs = handle:rows() }, connection_mt)
end

-- An error the server sent for `query`: raised as sysbench raises it. Ignorable errors
-- (--mysql-ignore-errors, or the sql_error_ignorable hook) raise a table with
-- errcode = RESTART_EVENT, which restarts the event unless the script catches it;
-- others raise "SQL error, errno = N, state = 'S': message".
local function raise_sql_error(self, query, errno, state, message, ignorable, level, call)
   local errdesc = {
      connection = self,
      query = query,
      sql_errno = errno,
      sql_state = state,
      sql_errmsg = message,
   }
   if ignorable and (sysbench.opt.verbosity or 3) >= 5 then
      -- sysbench's driver logs an error of --mysql-ignore-errors at debug level.
      print(string.format("DEBUG: Ignoring error %u %s, ", errno, message))
   end
   if ignorable or (type(sysbench.hooks.sql_error_ignorable) == "function"
                    and sysbench.hooks.sql_error_ignorable(errdesc)) then
      native.count_ignored()
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(errdesc, level + 1)
   end
   -- sysbench logs each fatal error, caught or not, on stdout (a line the same as the one
   -- before it is not repeated).
   local line, repeated = native.fatal_sql_error(call, errno, message, query)
   if not repeated then
      print("FATAL: " .. line)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s", errno, state, message),
         level)
end

-- A fast call's answer that is neither rows nor none: raised from the caller's caller.
local function failed(con, handle, query, answer, call)
   if answer == ANSWER_CLOSED then
      error("attempt to use an already closed connection", 3)
   elseif answer == ANSWER_INTERRUPTED then
      error("interrupted (Ctrl-C): the statement was not sent", 3)
   end
   local _, errno, state, message, ignorable = handle:last_failure()
   raise_sql_error(con, query, errno, state, message, ignorable, 4, call)
end

function connection_methods.query(self, query)
   local answer = C.eb_lua_query(self.ptr, query, #query)
   if answer == ANSWER_ROWS then
      return self.rs
   elseif answer == ANSWER_NONE then
      return NO_RESULT
   end
   failed(self, self.handle, query, answer, "mysql_drv_query()")
end

function connection_methods.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 then
      return nil
   end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end

-- sysbench 1.1's: whether the last statement (a CALL) has more results, and the next one.
function connection_methods.more_results(self)
   return self.handle:more_results()
end

function connection_methods.next_result(self)
   local answer = self.handle:next_result()
   if answer == ANSWER_ROWS then
      return self.rs
   elseif answer == ANSWER_NONE then
      return NO_RESULT
   end
   failed(self, self.handle, nil, answer, "mysql_next_result()")
end

function connection_methods.disconnect(self)
   self.handle:disconnect()
   return true
end

function connection_methods.reconnect(self)
   local ok, message = self.handle:reconnect()
   assert(ok, message)
   return true
end

-- Multi-row INSERTs as sysbench builds them: rows joined with commas into one statement,
-- sent when the next row would take it past 512 KiB, and at bulk_insert_done (no COMMIT
-- of its own, as sysbench's MySQL driver), so the server counts the same statements.
local BULK_PACKET_BYTES = 512 * 1024

function connection_methods.bulk_insert_init(self, query)
   assert(#query + 1 <= BULK_PACKET_BYTES, "db_bulk_insert_init() failed")
   self.bulk_query = query
   self.bulk_rows = {}
   self.bulk_size = #query
   return true
end

local function bulk_flush(self)
   if self.bulk_rows == nil or #self.bulk_rows == 0 then
      return
   end
   local sql = self.bulk_query .. table.concat(self.bulk_rows, ",")
   self.bulk_rows = {}
   self.bulk_size = #self.bulk_query
   self:query(sql)
end

function connection_methods.bulk_insert_next(self, value)
   assert(self.bulk_rows ~= nil, "db_bulk_insert_next() failed")
   local comma = #self.bulk_rows > 0 and 1 or 0
   if self.bulk_size + #value + 1 + comma > BULK_PACKET_BYTES then
      assert(comma == 1, "db_bulk_insert_next() failed")
      bulk_flush(self)
      comma = 0
   end
   self.bulk_rows[#self.bulk_rows + 1] = value
   self.bulk_size = self.bulk_size + #value + comma
   return true
end

function connection_methods.bulk_insert_done(self)
   bulk_flush(self)
   self.bulk_rows = nil
   self.bulk_query = nil
   return true
end

-- --db-ps-mode=disable: sysbench then emulates prepared statements in the client, each
-- execution a text query with the bound values written in where the `?` were (its
-- db_print_value: integers %d, doubles %f, strings quoted, NULL). sysbench quotes a string
-- without escaping it, so a value with a quote breaks the statement; here quotes and
-- backslashes are escaped and the value arrives as bound.
local emulated_methods = {}
local emulated_mt = {
   __index = emulated_methods,
   __tostring = function() return "<sql_statement>" end,
}

-- The text around each `?` the server would take for a placeholder (outside quotes and
-- comments, as a prepared statement of the same text has them). sysbench 1.0.20 writes a
-- value at every `?` byte, in a string or a comment too (drv_mysql.c, mysql_drv_execute);
-- here the emulation sends what --db-ps-mode=auto would have bound.
local around_placeholders = native.around_placeholders

local function written_value(param)
   local c = param.c
   if c.is_null ~= 0 then
      return "NULL"
   elseif param.type == sql_type.BIGINT then
      return string.format("%d", c.i)
   elseif param.type == sql_type.DOUBLE then
      return string.format("%f", c.d)
   end
   local text = ffi.string(c.s, c.len):gsub("[\\']", "\\%0")
   return "'" .. text .. "'"
end

emulated_methods.bind_create = function(self, btype, max_len)
   return statement_methods.bind_create(self, btype, max_len)
end

function emulated_methods.bind_param(self, ...)
   if select("#", ...) < 1 then
      return nil
   end
   self.params = { ... }
   return 0
end

function emulated_methods.execute(self)
   local parts, params = self.parts, self.params
   if #params ~= #parts - 1 then
      error(string.format("execute(): the statement has %d placeholder(s) but %d parameter(s) " ..
                          "are bound (--db-ps-mode=disable writes them into the text)",
                          #parts - 1, #params), 2)
   end
   local pieces = { parts[1] }
   for i = 1, #params do
      pieces[#pieces + 1] = written_value(params[i])
      pieces[#pieces + 1] = parts[i + 1]
   end
   return self.connection:query(table.concat(pieces))
end

function emulated_methods.close(self)
   return 0
end

function connection_methods.prepare(self, query)
   if sysbench.opt.db_ps_mode == "disable" then
      return setmetatable({ connection = self, query = query, params = {},
                            parts = around_placeholders(query) }, emulated_mt)
   end
   local handle, errno, state, message, ignorable = self.handle:prepare(query)
   if handle == nil then
      raise_sql_error(self, query, errno, state, message, ignorable, 3, "mysql_stmt_prepare()")
   end
   return setmetatable({ handle = handle, ptr = ffi.cast("void *", handle:pointer()),
                         connection = self, query = query, params = {},
                         rows = ffi.new("uint64_t[1]"),
                         rs = setmetatable({ nrows = 0, nfields = 0 }, prepared_result_mt) },
                       statement_mt)
end

function statement_methods.bind_create(self, btype, max_len)
   local param = setmetatable({ c = ffi.new("eb_param") }, param_mt)
   if btype == sql_type.TINYINT or btype == sql_type.SMALLINT or btype == sql_type.INT
      or btype == sql_type.BIGINT then
      param.type = sql_type.BIGINT
      param.max_len = 8
   elseif btype == sql_type.FLOAT or btype == sql_type.DOUBLE then
      param.type = sql_type.DOUBLE
      param.max_len = 8
   elseif btype == sql_type.CHAR or btype == sql_type.VARCHAR then
      param.type = sql_type.VARCHAR
      param.max_len = max_len
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   param.c.kind = param.type
   return param
end

function statement_methods.bind_param(self, ...)
   local count = select("#", ...)
   if count < 1 then
      return nil
   end
   -- The buffers stay alive with the statement, which reads them at each execution.
   self.params = { ... }
   local buffers = ffi.new("const void *[?]", count)
   for i = 1, count do
      buffers[i - 1] = self.params[i].c
   end
   C.eb_lua_bind(self.ptr, count, buffers)
   return 0
end

function statement_methods.execute(self)
   local answer = C.eb_lua_execute(self.ptr, self.rows)
   if answer == ANSWER_ROWS then
      local rs = self.rs
      rs.nrows = tonumber(self.rows[0])
      return rs
   elseif answer == ANSWER_NONE then
      return NO_RESULT
   elseif answer == ANSWER_CLOSED then
      error("execute() on a closed statement (stmt:close() was called)", 2)
   elseif answer == ANSWER_INTERRUPTED then
      error("interrupted (Ctrl-C): the statement was not sent", 2)
   end
   failed(self.connection, self.handle, self.query, answer, "mysql_stmt_execute()")
end

function statement_methods.close(self)
   self.handle:close()
   return 0
end

function param_methods.set(self, value)
   local c = self.c
   if value == nil then
      c.is_null = 1
      return
   end
   c.is_null = 0
   local t = self.type
   if t == sql_type.BIGINT then
      -- An int64 keeps the whole part, as sysbench's buffer does.
      c.i = value
   elseif t == sql_type.DOUBLE then
      c.d = value
   elseif t == sql_type.VARCHAR then
      value = tostring(value)
      if #value > self.max_len then
         value = value:sub(1, self.max_len)
      end
      -- The buffer points into the string, kept alive here.
      self.keep = value
      c.s = value
      c.len = #value
   else
      error("Unsupported argument type: " .. tostring(t), 2)
   end
end

function param_methods.set_rand_str(self, fmt)
   if self.type ~= sql_type.VARCHAR then
      error("Unsupported argument type: " .. tostring(self.type), 2)
   end
   self:set(sysbench.rand.string(fmt))
end

-- The event loop of one thread, as sysbench runs it: returns 0 after an event, 1 when an
-- ignorable error restarted it (the caller runs it again), 2 when event() asked to stop.
function __enginebench_event(thread_id)
   local ok, ret = pcall(event, thread_id)
   if not ok then
      if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
         if sysbench.hooks.before_restart_event then
            sysbench.hooks.before_restart_event(ret)
         end
         return 1
      end
      error(ret, 0)
   end
   if ret then
      return 2
   end
   return 0
end

-- sysbench's report helpers, for scripts' report hooks.
function sysbench.report_default(stat)
   local seconds = stat.time_interval
   print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f " ..
                          "(r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f " ..
                          "err/s %4.2f reconn/s: %4.2f",
                       stat.time_total, stat.threads_running,
                       stat.events / seconds,
                       (stat.reads + stat.writes + stat.other) / seconds,
                       stat.reads / seconds, stat.writes / seconds, stat.other / seconds,
                       sysbench.opt.percentile, stat.latency_pct * 1000,
                       stat.errors / seconds, stat.reconnects / seconds))
end

function sysbench.report_csv(stat)
   local seconds = stat.time_interval
   print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                       stat.time_total, stat.threads_running,
                       stat.events / seconds,
                       (stat.reads + stat.writes + stat.other) / seconds,
                       stat.reads / seconds, stat.writes / seconds, stat.other / seconds,
                       stat.latency_pct * 1000,
                       stat.errors / seconds, stat.reconnects / seconds))
end

-- sysbench.report_json: each interval as a JSON object in one array, "[" before the first
-- and "]" once the reporting state closes (a userdata's finalizer).
function sysbench.report_json(stat)
   if not __enginebench_json_open then
      io.write('[\n')
      __enginebench_json_open = newproxy(true)
      getmetatable(__enginebench_json_open).__gc = function() io.write('\n]\n') end
   else
      io.write(',\n')
   end
   local seconds = stat.time_interval
   io.write(string.format('  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n' ..
                          '    "qps": {\n      "total": %4.2f,\n      "reads": %4.2f,\n' ..
                          '      "writes": %4.2f,\n      "other": %4.2f\n    },\n' ..
                          '    "latency": %4.2f,\n    "errors": %4.2f,\n    "reconnects": %4.2f\n  }',
                          stat.time_total, stat.threads_running, stat.events / seconds,
                          (stat.reads + stat.writes + stat.other) / seconds,
                          stat.reads / seconds, stat.writes / seconds, stat.other / seconds,
                          stat.latency_pct * 1000, stat.errors / seconds,
                          stat.reconnects / seconds))
end

-- sysbench's bounded histograms (sysbench.histogram.new(size, min, max), h:update(value),
-- h:print()): `size` buckets spaced logarithmically from `min` to `max`, a value counted in
-- the nearest, printed as sb_histogram_print prints them. One per Lua state, as sysbench's
-- are per thread.
local histogram_methods = {}
local histogram_mt = {
   __index = histogram_methods,
   __tostring = function() return "<sb_histogram>" end,
}
sysbench.histogram = {}
function sysbench.histogram.new(size, range_min, range_max)
   local deduct = math.log(range_min)
   return setmetatable({ size = size, deduct = deduct, counts = {},
                         mult = (size - 1) / (math.log(range_max) - deduct) }, histogram_mt)
end

function histogram_methods.update(self, value)
   local i = math.floor((math.log(value) - self.deduct) * self.mult + 0.5)
   if i < 0 then
      i = 0
   elseif i >= self.size then
      i = self.size - 1
   end
   self.counts[i] = (self.counts[i] or 0) + 1
end

function histogram_methods.print(self)
   local most = 0
   for _, count in pairs(self.counts) do
      most = math.max(most, count)
   end
   if most == 0 then
      return
   end
   print("       value  ------------- distribution ------------- count")
   for i = 0, self.size - 1 do
      local count = self.counts[i]
      if count ~= nil then
         local width = math.floor(count * 40 / most + 0.5)
         print(string.format("%12.3f |%-40s %d", math.exp(i / self.mult + self.deduct),
                             string.rep("*", width), count))
      end
   end
end
