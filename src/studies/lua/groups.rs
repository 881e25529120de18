//! `--group NAME:THREADS[:RATE]=SCRIPT` for Lua studies: other scripts run beside the
//! study's own, on the same tables, each on its own connections and pacing, measured
//! apart (the driver's client groups). Owns reading each group's script (its declarations,
//! the study's options it takes). Must not know how the driver paces or measures a group.

use anyhow::bail;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::script::{Declared, Script, Settings};
use crate::studies::GroupArg;

/// One `--group`: its script, read and checked.
#[derive(Debug, Clone)]
pub struct LuaGroup {
    pub arg: GroupArg,
    pub settings: Arc<Settings>,
    pub declared: Arc<Declared>,
}

/// The `--group`s, each script found, loaded and checked to have an event(); it takes
/// the study's options it declares (and those no script declares: sysbench's own).
pub fn lua_groups(
    args: &[GroupArg],
    main: &Settings,
    main_declared: &Declared,
    main_name: &str,
) -> anyhow::Result<Vec<LuaGroup>> {
    GroupArg::check_names(args, main_name, "the study's own connections")?;
    let mut groups: Vec<LuaGroup> = Vec::new();
    for arg in args {
        let script = Script::find(&arg.script)
            .map_err(|err| err.context(format!("--group '{}'", arg.text)))?;
        let mut settings = Settings {
            script,
            command: "run".into(),
            given: BTreeMap::new(),
            global: main.global.clone(),
            print_to_stderr: true,
        };
        let declared = super::declarations(&settings)?;
        let declares = |declared: &Declared, name: &str| {
            declared.options.iter().any(|(option, _, _)| option == name)
        };
        settings.given = main
            .given
            .iter()
            .filter(|(name, _)| declares(&declared, name) || !declares(main_declared, name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        settings.options(&declared)?;
        if !declared.has_function("event") {
            bail!(
                "--group '{}': {} defines no event() function, so the group has nothing to run",
                arg.text,
                settings.script.name
            );
        }
        groups.push(LuaGroup {
            arg: arg.clone(),
            settings: Arc::new(settings),
            declared: Arc::new(declared),
        });
    }
    Ok(groups)
}
