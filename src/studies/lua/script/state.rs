//! One thread's Lua state with the script loaded: the API, the prelude, `sysbench.opt`,
//! sysbench 1.0's legacy globals, then the script's own code; its hooks called by name. It
//! must not know plans, cells or how the figures are recorded.

use super::*;

/// One thread's Lua state with the script loaded.
pub struct State {
    pub lua: Lua,
    pub context: Rc<Context>,
    pub tid: u32,
}

impl State {
    /// A state for thread `tid`: the API, `sysbench.opt`, then the script's top-level code.
    pub fn open(
        settings: &Settings,
        declared: Option<&Declared>,
        context: Context,
        tid: u32,
    ) -> anyhow::Result<State> {
        // SAFETY: the `ffi` and `jit` libraries are what sysbench's scripts are written
        // for; the script is the user's own program, run as it would be under sysbench.
        let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
        let context = Rc::new(context);
        let setup = || -> mlua::Result<()> {
            let package: mlua::Table = lua.globals().get("package")?;
            let dir = settings.script.dir();
            let mut path = format!("{}/?.lua;./?.lua;./?/init.lua;", dir.display());
            for dir in SYSBENCH_DIRS {
                path.push_str(&format!("{dir}/?.lua;"));
            }
            let default: String = package.get("path")?;
            path.push_str(&default);
            package.set("path", path)?;
            native::install(&lua, Rc::clone(&context))?;
            install_test_options(&lua)?;
            let sysbench = lua.create_table()?;
            sysbench.set("tid", tid)?;
            // As sysbench sets them: the command only when one was given, the script as
            // it was named (none on standard input), argv from 0 ("sysbench").
            let cmdline = lua.create_table()?;
            if !settings.command.is_empty() {
                cmdline.set("command", settings.command.as_str())?;
            }
            if !settings.script.from_stdin() {
                cmdline.set("script_path", settings.script.name.as_str())?;
            }
            let argv = lua.create_table()?;
            argv.raw_set(0, "sysbench")?;
            for (index, arg) in settings.global.argv.iter().enumerate() {
                argv.raw_set(index + 1, arg.as_str())?;
            }
            cmdline.set("argv", argv)?;
            sysbench.set("cmdline", cmdline)?;
            lua.globals().set("sysbench", sysbench)?;
            lua.load(PRELUDE)
                .set_name("=enginebench's sysbench API")
                .exec()?;
            lua.load(LEGACY)
                .set_name("=enginebench's sysbench 0.5 API")
                .exec()?;
            if settings.print_to_stderr {
                // A study's stdout holds its report: the script's lines go to stderr, and
                // are kept (`State::printed`) for the step that ran them.
                lua.load(
                    "__enginebench_printed = {} \
                     print = function(...) local n = select('#', ...) local t = {...} \
                     for i = 1, n do t[i] = tostring(t[i]) end \
                     local line = table.concat(t, '\\t', 1, n) \
                     if #__enginebench_printed < 100 then \
                       __enginebench_printed[#__enginebench_printed + 1] = line end \
                     io.stderr:write(line, '\\n') end",
                )
                .set_name("=enginebench")
                .exec()?;
            }
            Ok(())
        };
        setup().map_err(|err| anyhow::anyhow!("setting up the Lua API: {err}"))?;
        let options = match declared {
            Some(declared) => settings.options(declared)?,
            None => Vec::new(),
        };
        let opt: mlua::Table = lua
            .load("return sysbench.opt")
            .eval()
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        for (name, value) in &options {
            let value = value.to_lua(&lua).map_err(|err| anyhow::anyhow!("{err}"))?;
            opt.set(name.as_str(), value)
                .map_err(|err| anyhow::anyhow!("{err}"))?;
        }
        lua.load(settings.script.source.as_str())
            .set_name(format!("@{}", settings.script.path.display()))
            .exec()
            .map_err(|err| anyhow::anyhow!("{}", lua_error_text(&err)))?;
        if declared.is_some_and(|declared| !declared.declares_options) {
            export_legacy_globals(&lua, &options).map_err(|err| anyhow::anyhow!("{err}"))?;
        }
        Ok(State { lua, context, tid })
    }

    /// The lines the script printed so far (its first 100), when they go to stderr.
    pub fn printed(&self) -> Vec<String> {
        self.lua
            .globals()
            .get::<Option<Vec<String>>>("__enginebench_printed")
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Whether the script defines global function `name`.
    pub fn has_function(&self, name: &str) -> bool {
        matches!(
            self.lua.globals().get::<Value>(name),
            Ok(Value::Function(_))
        )
    }

    /// Calls global function `name` with `args`; an error reads as sysbench's
    /// "`name' function failed: file:line: message".
    pub fn call(&self, name: &str, args: impl mlua::IntoLuaMulti) -> anyhow::Result<Value> {
        let function: mlua::Function = self
            .lua
            .globals()
            .get(name)
            .map_err(|_| anyhow::anyhow!("{name} is not a function"))?;
        function
            .call::<Value>(args)
            .map_err(|err| self.failed(name, &err))
    }

    /// A Lua error in `function` as one message, with the SQL error behind it if any.
    pub fn failed(&self, function: &str, err: &mlua::Error) -> anyhow::Error {
        let mut message = format!("`{function}' function failed: {}", lua_error_text(err));
        if let Some(fatal) = self.context.fatal.borrow_mut().take() {
            message.push_str(&format!(" ({fatal})"));
        }
        anyhow::anyhow!(message)
    }

    /// What the script declares (read after its top-level code ran).
    pub fn declared(&self) -> anyhow::Result<Declared> {
        let read = || -> mlua::Result<Declared> {
            let mut declared = Declared::default();
            let sysbench: mlua::Table = self.lua.globals().get("sysbench")?;
            let cmdline: mlua::Table = sysbench.get("cmdline")?;
            if let Value::Table(options) = cmdline.get::<Value>("options")? {
                declared.declares_options = true;
                (declared.options, declared.option_types) = read_options(&options)?;
            }
            if let Value::Table(commands) = cmdline.get::<Value>("commands")? {
                for pair in commands.pairs::<String, Value>() {
                    let (name, definition) = pair?;
                    let parallel = match definition {
                        Value::Table(definition) => {
                            definition.get::<Option<bool>>(2)?.unwrap_or(false)
                        }
                        _ => false,
                    };
                    declared.commands.insert(name, parallel);
                }
            }
            let hooks: mlua::Table = sysbench.get("hooks")?;
            for hook in ["report_intermediate", "report_cumulative"] {
                if matches!(hooks.get::<Value>(hook)?, Value::Function(_)) {
                    declared.report_hooks.push(hook.to_string());
                }
            }
            for name in [
                "init",
                "done",
                "thread_init",
                "thread_done",
                "event",
                "prepare",
                "cleanup",
                "help",
                "prewarm",
            ] {
                if self.has_function(name) {
                    declared.functions.push(name.to_string());
                }
            }
            Ok(declared)
        };
        read().map_err(|err| anyhow::anyhow!("reading the script's declarations: {err}"))
    }

    /// Calls `sysbench.hooks[hook]` with a table of `figures`, as sysbench calls its report
    /// hooks with its statistics.
    pub fn call_hook(&self, hook: &str, figures: &[(&str, f64)]) -> anyhow::Result<()> {
        let run = || -> mlua::Result<()> {
            let stat = self.lua.create_table()?;
            for (name, value) in figures {
                stat.set(*name, *value)?;
            }
            let sysbench: mlua::Table = self.lua.globals().get("sysbench")?;
            let hooks: mlua::Table = sysbench.get("hooks")?;
            let function: mlua::Function = hooks.get(hook)?;
            function.call::<()>(stat)
        };
        let called = run().map_err(|err| self.failed(&format!("sysbench.hooks.{hook}"), &err));
        // The hook prints through C's stdio, which holds a pipe's output until it fills:
        // what it printed goes out now, as the interval it reports closes.
        // SAFETY: fflush(NULL) flushes every C output stream; no stream is borrowed here.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        called
    }

    /// Runs a custom command's function (`sysbench.cmdline.commands[name][1]`).
    pub fn call_command(&self, name: &str) -> anyhow::Result<()> {
        let function: mlua::Function = self
            .lua
            .load(format!(
                "return sysbench.cmdline.commands[{}][1]",
                lua_quote(name)
            ))
            .eval()
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        function
            .call::<Value>(())
            .map(drop)
            .map_err(|err| self.failed(name, &err))
    }
}

/// `test_options_text`, behind sysbench.cmdline.print_test_options: the options the
/// script declares now, in sysbench's layout.
pub(super) fn install_test_options(lua: &Lua) -> mlua::Result<()> {
    let native: mlua::Table = lua.globals().get("__enginebench")?;
    native.set(
        "test_options_text",
        lua.create_function(|lua, ()| {
            let options: mlua::Value = lua.load("return sysbench.cmdline.options").eval()?;
            let mut declared = Declared::default();
            if let mlua::Value::Table(options) = options {
                (declared.options, declared.option_types) = read_options(&options)?;
            }
            Ok(options_text(&declared))
        })?,
    )?;
    Ok(())
}

/// sysbench's options that 0.5's scripts read as globals and `sysbench.opt` does not hold
/// here (the deprecated spellings and switches enginebench has no use for), with
/// sysbench 1.0.20's defaults.
pub(super) const LEGACY_ONLY: [(&str, LegacyDefault); 12] = [
    ("num_threads", LegacyDefault::Number(1.0)),
    ("max_requests", LegacyDefault::Number(0.0)),
    ("max_time", LegacyDefault::Number(0.0)),
    ("tx_rate", LegacyDefault::Number(0.0)),
    ("thread_stack_size", LegacyDefault::Number(65536.0)),
    ("forced_shutdown", LegacyDefault::Text("off")),
    ("debug", LegacyDefault::Bool(false)),
    ("validate", LegacyDefault::Bool(false)),
    ("mysql_compression", LegacyDefault::Bool(false)),
    ("mysql_debug", LegacyDefault::Bool(false)),
    ("mysql_dry_run", LegacyDefault::Bool(false)),
    ("mysql_ssl", LegacyDefault::Bool(false)),
];

#[derive(Clone, Copy)]
pub(super) enum LegacyDefault {
    Number(f64),
    Text(&'static str),
    Bool(bool),
}

/// sysbench's legacy API: a script that declares no options sees every option as a global
/// too (those given as text, sysbench's own typed), set after its top-level code ran and
/// before any of its functions is called, as sysbench exports them; a name a function
/// holds by then is left alone.
pub(super) fn export_legacy_globals(
    lua: &Lua,
    options: &[(String, OptionValue)],
) -> mlua::Result<()> {
    let globals = lua.globals();
    let defaults = LEGACY_ONLY.iter().map(|(name, default)| {
        let value = match *default {
            LegacyDefault::Number(n) => OptionValue::Number(n),
            LegacyDefault::Text(text) => OptionValue::Text(text.into()),
            LegacyDefault::Bool(b) => OptionValue::Bool(b),
        };
        (name.to_string(), value)
    });
    let all = defaults
        .filter(|(name, _)| !options.iter().any(|(known, _)| known == name))
        .chain(options.iter().cloned());
    for (name, value) in all {
        if matches!(globals.get::<Value>(name.as_str())?, Value::Function(_)) {
            continue;
        }
        globals.set(name.as_str(), value.to_lua(lua)?)?;
    }
    Ok(())
}

pub(super) fn lua_quote(text: &str) -> String {
    format!("{text:?}")
}
