//! The shape of the house, checked: the modules import one another without circles and
//! only downward through the layers of `src/lib.rs` (`LAYERS`, and `CROSSINGS` made on
//! purpose), the guide's layout (docs/guide/src/how-it-works/layers.md) names every stage and
//! only files that exist, no study is named outside its home (the scenario stage, its kind's
//! folder), and every module opens with a comment saying what it owns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// The layers, written once in `src/lib.rs`, with the imports against them made on purpose.
use enginebench::{CROSSINGS, LAYERS};

fn source_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    files.sort();
    files
}

/// The top-level module a file belongs to (`src/runner/cell.rs` → runner).
fn module_of(path: &Path) -> String {
    let relative = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    let name = first.to_string_lossy().trim_end_matches(".rs").to_string();
    if name == "main" {
        "lib".into()
    } else {
        name
    }
}

/// A file's code without its unit tests (they may reach anywhere): nothing of a file of
/// unit tests of its own (`tests.rs`, `*_tests.rs`, declared under `#[cfg(test)]`).
fn code_without_tests(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Which top-level modules each module uses (`crate::name`, also inside `use crate::{…}`).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in source_files() {
        let module = module_of(&file);
        let code = code_without_tests(&file);
        let used = graph.entry(module.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                group
                    .split(',')
                    .filter_map(|item| item.trim().split("::").next())
                    .collect()
            } else {
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .into_iter()
                    .collect()
            };
            for name in names {
                let name = name.trim();
                if !name.is_empty() && name != module && name != "self" {
                    used.insert(name.to_string());
                }
            }
        }
    }
    graph
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_module_has_a_place_in_the_stages() {
    for module in imports().keys() {
        assert!(
            layer_of(module).is_some(),
            "src/{module} is in no layer of LAYERS in src/lib.rs: give it its stage"
        );
    }
}

/// A crossing listed on purpose is one the code makes, against the layers: a stale one
/// would hide the next import that goes up.
#[test]
fn every_crossing_is_an_import_against_the_layers() {
    let graph = imports();
    for (from, to, why) in CROSSINGS {
        assert!(!why.is_empty(), "{from} → {to}: say why");
        assert!(
            graph.get(*from).is_some_and(|used| used.contains(*to)),
            "{from} → {to} is listed in CROSSINGS but {from} no longer uses {to}: remove it"
        );
        assert!(
            layer_of(to) > layer_of(from),
            "{from} → {to} goes down the layers: it needs no crossing"
        );
    }
}

#[test]
fn imports_only_go_down_the_stages() {
    let mut wrong = Vec::new();
    for (module, used) in imports() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for target in used {
            let crossing = CROSSINGS
                .iter()
                .any(|(from, to, _)| *from == module && *to == target);
            match layer_of(&target) {
                Some(layer) if layer > own && !crossing => {
                    wrong.push(format!("{module} uses {target}"))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the stages: {wrong:?}");
}

/// The reports draw what the view and a kind's layout (data) say: they use no plan, no
/// runner and no kind, though the layers would let them, and no kind draws its own report
/// (`studies` sits below `report`).
#[test]
fn reports_read_the_view_only() {
    let graph = imports();
    let report = graph.get("report").expect("src/report");
    for module in ["plan", "runner", "studies"] {
        assert!(
            !report.contains(module),
            "src/report uses {module}: a report is drawn from the view and the layout a kind gives as data"
        );
    }
    assert!(
        layer_of("studies") < layer_of("report"),
        "LAYERS in src/lib.rs must keep studies below report: a kind gives its sections as data"
    );
}

/// A module's path inside src/ (`src/runner/cell.rs` → [runner, cell]; `mod.rs` is its
/// folder's module).
fn module_path(path: &Path) -> Vec<String> {
    let relative = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap()
        .with_extension("");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The deepest file that exists for a module path (`[runner, cell, measure]` →
/// src/runner/cell.rs).
fn file_for(parts: &[String]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    (1..=parts.len()).rev().find_map(|n| {
        let base = parts[..n]
            .iter()
            .fold(src.clone(), |dir, part| dir.join(part));
        [base.with_extension("rs"), base.join("mod.rs")]
            .into_iter()
            .find(|candidate| candidate.is_file())
    })
}

/// Every `crate::…` and `super::…` path in `code`, a `{a, b::c}` group expanded one level.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let starts_word = code[..at].chars().next_back().is_none_or(|c| !word(c));
        let head = ["crate::", "super::"]
            .into_iter()
            .find(|head| starts_word && rest.starts_with(head));
        let Some(head) = head else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // The path's segments up to its last `::`, then a name or a `{…}` group.
        let mut segments = vec![head.trim_end_matches("::").to_string()];
        let mut tail = &rest[head.len()..];
        loop {
            let name: String = tail.chars().take_while(|&c| word(c)).collect();
            if name.is_empty() {
                break;
            }
            let after = &tail[name.len()..];
            segments.push(name.clone());
            match after.strip_prefix("::") {
                Some(next) => tail = next,
                None => {
                    tail = after;
                    break;
                }
            }
        }
        if let Some(group) = tail.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let mut path = segments.clone();
                path.extend(
                    item.trim()
                        .split("::")
                        .filter(|p| !p.is_empty() && *p != "*" && *p != "self")
                        .map(|p| p.trim().to_string()),
                );
                paths.push(path);
            }
        } else {
            paths.push(segments);
        }
        at += head.len();
    }
    paths
}

/// Which files each file imports, its unit tests and comments left out.
fn file_imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let name = |path: &Path| path.strip_prefix(&src).unwrap().display().to_string();
    let mut graph = BTreeMap::new();
    for file in source_files() {
        let code: String = code_without_tests(&file)
            .lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let here = module_path(&file);
        let is_mod = ["mod.rs", "lib.rs", "main.rs"]
            .iter()
            .any(|m| file.file_name().is_some_and(|f| f == *m));
        let mut used = BTreeSet::new();
        for path in paths_in(&code) {
            let parts: Vec<String> = if path[0] == "crate" {
                path[1..].to_vec()
            } else {
                // super::super::x: up one module per `super`, from the file's own module.
                let ups = path.iter().take_while(|p| *p == "super").count();
                let mut base = if is_mod {
                    here.clone()
                } else {
                    here[..here.len().saturating_sub(1)].to_vec()
                };
                base.truncate(base.len().saturating_sub(ups - 1));
                base.extend(path[ups..].iter().cloned());
                base
            };
            if let Some(target) = file_for(&parts) {
                if target != file {
                    used.insert(name(&target));
                }
            }
        }
        graph.insert(name(&file), used);
    }
    graph
}

/// A circle in `graph`, named, if there is one.
fn circle_in(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search for a back edge, naming the circle it closes.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_circles() {
    if let Some(circle) = circle_in(&imports()) {
        panic!("import circle: {}", circle.join(" → "));
    }
}

/// Circles between files hide inside a module (two files of `server` using each other):
/// the same check, file by file.
#[test]
fn no_import_circles_between_files() {
    let graph = file_imports();
    // It sees `super::` paths and `crate::` paths, grouped or not.
    assert!(graph["server/topology.rs"].contains("server/shape.rs"));
    assert!(graph["server/topology.rs"].contains("server/throwaway/mod.rs"));
    assert!(graph["runner/mod.rs"].contains("plan/mod.rs"));
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    eprintln!("{} files, {edges} file imports", graph.len());
    if let Some(circle) = circle_in(&graph) {
        panic!("import circle between files: {}", circle.join(" → "));
    }
}

/// Where a study's name may be written: the built-in scenario files' in the scenario stage,
/// sysbench's workloads' in the sysbench kind's folder, and (frozen, for reading records of
/// schema 1 that knew a study only by its name) in the results' migration.
#[test]
fn no_study_is_named_outside_its_home() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut names: Vec<(String, Vec<PathBuf>)> = enginebench::scenario::BUILTIN_FILES
        .iter()
        .map(|(name, _)| (name.to_string(), vec![src.join("scenario")]))
        .collect();
    names.extend(
        enginebench::studies::sysbench::oltp::OltpKind::ALL
            .iter()
            .map(|kind| {
                (
                    kind.name().to_string(),
                    vec![src.join("studies/sysbench"), src.join("results/migrate.rs")],
                )
            }),
    );
    let mut found = Vec::new();
    for file in source_files() {
        let code = code_without_tests(&file);
        for (name, homes) in &names {
            if homes.iter().any(|home| file.starts_with(home)) {
                continue;
            }
            if code.contains(&format!("\"{name}\"")) {
                found.push(format!("{} names {name}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn every_module_says_what_it_owns() {
    for file in source_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("//!"),
            "{} does not open with a //! comment saying what it owns and what it must not know",
            file.display()
        );
    }
}

/// Files that may still pass the bound, each with why; none may grow past 800 lines.
const LONG_FILES_FOR_NOW: &[&str] = &[];

/// A file that holds several jobs is split by job: none in src/ is over 600 lines (the
/// ones listed above excepted, and they stay under 800).
#[test]
fn no_source_file_is_over_600_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long: Vec<String> = source_files()
        .into_iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            let name = file.strip_prefix(&src).unwrap().display().to_string();
            let bound = if LONG_FILES_FOR_NOW.contains(&name.as_str()) {
                800
            } else {
                600
            };
            (lines > bound).then(|| format!("{name} ({lines} lines)"))
        })
        .collect();
    assert!(long.is_empty(), "split these by job: {long:?}");
}

/// The guide's layout (the first fenced block of docs/guide/src/how-it-works/layers.md)
/// names every stage of `LAYERS`, and every file or folder it names exists: a `src/…` path
/// as written, a bare `name.rs` or `name/` somewhere under the `src/` folder of its entry.
#[test]
fn the_guides_layout_names_every_stage_and_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/guide/src/how-it-works/layers.md")).unwrap();
    let start = page.find("```\n").expect("the layout block") + 4;
    let block = &page[start..start + page[start..].find("```").unwrap()];
    let mut wrong = Vec::new();
    for layer in LAYERS.iter().flat_map(|layer| layer.iter()) {
        let named = ["/", ".rs"]
            .iter()
            .any(|end| block.contains(&format!("src/{layer}{end}")));
        if !named && *layer != "main" {
            wrong.push(format!("the stage src/{layer} is not in the layout"));
        }
    }
    // Every name under `dir`, at any depth.
    fn names_under(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() {
                out.insert(format!("{name}/"));
                names_under(&entry.path(), out);
            } else {
                out.insert(name);
            }
        }
    }
    let mut entry_dir: Option<PathBuf> = None;
    for line in block.lines() {
        if !line.starts_with(' ') {
            let first = line.split_whitespace().next().unwrap_or("");
            entry_dir = first
                .strip_prefix("src/")
                .filter(|rest| rest.ends_with('/'))
                .map(|rest| root.join("src").join(rest));
        }
        let words = line.split(|c: char| !(c.is_alphanumeric() || "_./".contains(c)));
        for word in words.map(|w| w.trim_end_matches('.')) {
            if word.starts_with("src/") {
                if !root.join(word).exists() {
                    wrong.push(format!("{word} does not exist"));
                }
            } else if word.ends_with(".rs") || (word.ends_with('/') && !word.contains('.')) {
                let Some(dir) = &entry_dir else { continue };
                let bare = word.rsplit_once('/').map_or(word, |(_, last)| last);
                let bare = if bare.is_empty() { word } else { bare };
                let mut names = BTreeSet::new();
                names_under(dir, &mut names);
                // A module is `name.rs` or the folder `name/` with its mod.rs: either spelling
                // names it.
                let as_folder = bare.strip_suffix(".rs").map(|stem| format!("{stem}/"));
                let named =
                    names.contains(bare) || as_folder.is_some_and(|folder| names.contains(&folder));
                if !named && !root.join(word).exists() {
                    wrong.push(format!("{word} (under {}) does not exist", dir.display()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the guide's layout has drifted: {wrong:?}"
    );
}

/// A `#[path]` module hides a file from the module tree's layout (and made two files look
/// shorter than the modules they were): every module is a file or folder of its own name.
#[test]
fn no_module_is_taken_from_another_path() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let redirected: Vec<String> = source_files()
        .into_iter()
        .filter(|file| std::fs::read_to_string(file).unwrap().contains("#[path"))
        .map(|file| file.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    assert!(redirected.is_empty(), "#[path] modules: {redirected:?}");
}
