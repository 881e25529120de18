//! The guide (docs/guide) and the README, checked as a reader would use them: every
//! `enginebench …` line of their shell blocks is accepted by the command line and, where
//! that is cheap, run (`run` and `replay` with `--dry-run`; `list`, `show`, `runs`,
//! `report`, `export`, `compare`, `server list`, `completions` and `man` as written, on a
//! store holding fixture runs); an output marked as checked equals the command's real
//! output; every internal link and anchor resolves, and every page is in the book.
//!
//! A block whose command lines name files or servers of the reader's own is marked
//! `<!-- illustrative: why -->` on the line before it: its lines are still parsed by the
//! command line, not run. Commands that start a server, fetch, listen or write outside
//! their directory (`sysbench`, `prepare`, `capture`, `merge`, `server start|get`,
//! `man --dir`) are parsed only.

use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::common;

const ILLUSTRATIVE: &str = "<!-- illustrative:";
const CHECKED_OUTPUT: &str = "<!-- checked output -->";
/// Few, so that what the guide shows is what runs.
const MOST_ILLUSTRATIVE_BLOCKS: usize = 6;
/// Set to 1 to write the checked outputs anew from the commands' real output.
const REGENERATE: &str = "ENGINEBENCH_WRITE_GUIDE";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn guide_src() -> PathBuf {
    repo().join("docs/guide/src")
}

/// Every page of the guide, and the README, as (path, text).
fn pages() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut paths = vec![repo().join("README.md")];
    walk(&guide_src(), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A fenced block: where it starts (its line and byte offset), its info string, its text,
/// and the marker on the line before it.
struct Block {
    line: usize,
    start: usize,
    info: String,
    code: String,
    marker: Option<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let before = text[..range.start].trim_end();
                let previous_line = before.lines().last().unwrap_or("").trim();
                let marker = (previous_line.starts_with(ILLUSTRATIVE)
                    || previous_line == CHECKED_OUTPUT)
                    .then(|| previous_line.to_string());
                open = Some(Block {
                    line: text[..range.start].lines().count() + 1,
                    start: range.start,
                    info: info.to_string(),
                    code: String::new(),
                    marker,
                });
            }
            Event::Text(code) => {
                if let Some(block) = open.as_mut() {
                    block.code.push_str(&code);
                }
            }
            Event::End(TagEnd::CodeBlock) => found.extend(open.take()),
            _ => {}
        }
    }
    found
}

/// One `enginebench …` command line of a block, split as a shell splits it.
struct CommandLine {
    line: usize,
    text: String,
    env: Vec<(String, String)>,
    words: Vec<String>,
    /// The output shown under it, in a `console` block.
    output: Vec<String>,
}

/// The command lines of a shell block (`sh`, `shell`, `bash`, or `console` with `$ `).
fn command_lines(block: &Block) -> Result<Vec<CommandLine>, String> {
    let console = block.info.starts_with("console");
    let mut logical: Vec<(usize, String, Vec<String>)> = Vec::new();
    let mut continued = false;
    for (index, raw) in block.code.lines().enumerate() {
        let line = block.line + 1 + index;
        if continued {
            let (_, text, _) = logical.last_mut().unwrap();
            text.push(' ');
            text.push_str(raw.trim_end_matches('\\').trim());
        } else if !console {
            logical.push((line, raw.trim_end_matches('\\').to_string(), Vec::new()));
        } else if let Some(command) = raw.strip_prefix("$ ") {
            logical.push((line, command.trim_end_matches('\\').to_string(), Vec::new()));
        } else if let Some((_, _, output)) = logical.last_mut() {
            output.push(raw.to_string());
        }
        continued = raw.ends_with('\\') && (!console || !logical.is_empty());
    }
    let mut commands = Vec::new();
    for (line, text, output) in logical {
        let words = shlex::split(&text)
            .ok_or_else(|| format!("line {line}: `{text}` cannot be split as a shell would"))?;
        let assignments = words
            .iter()
            .take_while(|w| w.split_once('=').is_some_and(|(name, _)| is_env_name(name)))
            .count();
        if words.get(assignments).map(String::as_str) != Some("enginebench") {
            continue;
        }
        let env = words[..assignments]
            .iter()
            .filter_map(|w| w.split_once('='))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        // The command's own words end where the shell's redirections and pipes begin.
        let words: Vec<String> = words[assignments..]
            .iter()
            .take_while(|w| {
                !["|", "||", "&&", ";", "&", "<"].contains(&w.as_str())
                    && !w.starts_with('>')
                    && !w.starts_with("2>")
            })
            .cloned()
            .collect();
        commands.push(CommandLine {
            line,
            text: text.trim().to_string(),
            env,
            words,
            output,
        });
    }
    Ok(commands)
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The values that name a file the command reads (a scenario, a script, a capture, a
/// record, a certificate, an option file), never one it writes.
fn input_files(words: &[String]) -> Vec<String> {
    const OUTPUTS: &[&str] = &[
        "--json",
        "--out",
        "-o",
        "--output",
        "--html",
        "--hlog",
        "--dir",
        "--write-cnf",
    ];
    const INPUTS: &[&str] = &[
        ".toml", ".lua", ".ebcap", ".json", ".cnf", ".pem", ".log", ".sql", ".yaml",
    ];
    let mut files = Vec::new();
    for (index, word) in words.iter().enumerate().skip(1) {
        let previous = words[index - 1].as_str();
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, value),
            _ if word.starts_with('-') => continue,
            _ => (previous, word.as_str()),
        };
        if OUTPUTS.contains(&flag) || value == "-" || value.contains("://") {
            continue;
        }
        if INPUTS.iter().any(|ext| value.ends_with(ext)) {
            files.push(value.to_string());
        }
    }
    files
}

/// How a command is checked beyond the command line's parse: run, with `--dry-run` added,
/// or not at all (it would start a server, fetch, listen or write outside its directory).
fn runs_as(words: &[String]) -> Option<Vec<String>> {
    let sub: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    match sub.as_slice() {
        ["run" | "replay", ..] if !sub.contains(&"--dry-run") => {
            let mut with = words.to_vec();
            with.push("--dry-run".into());
            Some(with)
        }
        ["run" | "replay", ..] | ["list" | "show" | "runs" | "report" | "export", ..] => {
            Some(words.to_vec())
        }
        ["compare" | "completions", ..] | ["server", "list"] => Some(words.to_vec()),
        ["man", rest @ ..] if !rest.contains(&"--dir") => Some(words.to_vec()),
        _ => None,
    }
}

/// A directory to run the guide's commands in: the repository's inputs beside it
/// (scenarios/, tests/), what they write kept out of the repository, and a store of
/// fixture runs for `report`, `export` and `compare` (runs 1 and 2: S0; 3: S2 with its
/// profiles).
fn workdir(tmp: &Path) -> PathBuf {
    let dir = tmp.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    // Runs 1, 2 and 3, whatever an earlier run of this test left.
    let _ = std::fs::remove_file(common::store_of(tmp));
    for name in ["scenarios", "tests", "schema", "bench"] {
        std::os::unix::fs::symlink(repo().join(name), dir.join(name)).unwrap();
    }
    for fixture in ["s0-small.json", "s0-scenario.json", "s2-small.json"] {
        let record =
            enginebench::results::read_record(&repo().join("tests/fixtures").join(fixture))
                .unwrap();
        enginebench::results::Store::open(&common::store_of(tmp))
            .unwrap()
            .save(&record)
            .unwrap();
    }
    dir
}

fn trimmed(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut lines: Vec<String> = lines
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Checks one command line; a problem is pushed to `problems`. Returns the command's real
/// output when it ran.
fn check_command(
    command: &CommandLine,
    illustrative: bool,
    work: &Path,
    tmp: &Path,
    problems: &mut Vec<String>,
) -> Option<Vec<String>> {
    let args: Vec<std::ffi::OsString> = command.words.iter().map(Into::into).collect();
    let (args, _) = enginebench::cli::split_script_options(args);
    if let Err(error) = enginebench::cli::command().try_get_matches_from(args) {
        problems.push(format!("the command line refuses it: {}", error.render()));
        return None;
    }
    if illustrative {
        return None;
    }
    for file in input_files(&command.words) {
        if file.starts_with('/') && !Path::new(&file).exists() {
            problems.push(format!(
                "it names {file}, which this machine lacks (a package's file: `make setup` \
                 and `scripts/setup --test` install what the guide's lines use)"
            ));
        } else if !repo().join(&file).exists() {
            problems.push(format!(
                "it names {file}, which is not in the repository: name a file of the \
                 repository (scenarios/, tests/fixtures/) or mark the block \
                 `{ILLUSTRATIVE} why -->`"
            ));
        }
    }
    let words = runs_as(&command.words)?;
    let mut process = common::enginebench(tmp);
    process
        .args(&words[1..])
        .current_dir(work)
        .envs(command.env.iter().cloned());
    let (status, stdout, stderr) = finish_within(process, tmp, std::time::Duration::from_secs(120));
    if !status.success() {
        problems.push(format!("`{}` failed ({status}): {stderr}", words.join(" ")));
        return None;
    }
    Some(trimmed(stdout.lines().map(String::from)))
}

/// Runs `process` with its output in files (a long output never blocks it on a pipe), and
/// kills it past `limit`, a guard against a hang only.
fn finish_within(
    mut process: std::process::Command,
    tmp: &Path,
    limit: std::time::Duration,
) -> (std::process::ExitStatus, String, String) {
    let (out, err) = (tmp.join("stdout"), tmp.join("stderr"));
    let mut child = process
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{process:?} did not end within {} s: it hangs. stderr:\n{}",
                limit.as_secs(),
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    (status, read(&out), read(&err))
}

#[test]
fn every_command_in_the_guide_is_accepted_and_the_cheap_ones_run() {
    let tmp = common::private_tmpdir("guide-commands");
    let work = workdir(&tmp);
    let mut problems = Vec::new();
    let (mut checked, mut ran, mut illustrative_blocks) = (0, 0, 0);
    for (path, text) in pages() {
        let mut rewritten = text.clone();
        for block in blocks(&text).into_iter().rev() {
            let shell = ["sh", "shell", "bash", "console"]
                .iter()
                .any(|lang| block.info.split_whitespace().next() == Some(lang));
            let at = format!("{}:{}", shown(&path), block.line);
            if !shell {
                if block.code.lines().any(|l| {
                    let l = l.trim_start().trim_start_matches("$ ");
                    l.starts_with("enginebench ") && !l.contains(": ")
                }) {
                    problems.push(format!(
                        "{at}: a block of command lines that is not marked as shell \
                         (```sh, or ```console with `$ `): mark it so it is checked"
                    ));
                }
                continue;
            }
            let illustrative = block
                .marker
                .as_deref()
                .is_some_and(|m| m.starts_with(ILLUSTRATIVE));
            illustrative_blocks += usize::from(illustrative);
            let commands = match command_lines(&block) {
                Ok(commands) => commands,
                Err(problem) => {
                    problems.push(format!("{at}: {problem}"));
                    continue;
                }
            };
            let check_output = block.marker.as_deref() == Some(CHECKED_OUTPUT);
            let mut regenerated = String::new();
            for command in &commands {
                checked += 1;
                let mut found = Vec::new();
                let real = check_command(command, illustrative, &work, &tmp, &mut found);
                ran += usize::from(real.is_some());
                problems.extend(found.into_iter().map(|problem| {
                    format!(
                        "{}:{}: `{}`: {problem}",
                        shown(&path),
                        command.line,
                        command.text
                    )
                }));
                if !check_output {
                    continue;
                }
                let real = real.unwrap_or_default();
                regenerated.push_str(&format!("$ {}\n", command.text));
                for line in &real {
                    regenerated.push_str(line);
                    regenerated.push('\n');
                }
                if trimmed(command.output.clone()) != real {
                    problems.push(format!(
                        "{}:{}: the output shown under `{}` is not what it prints now:\n{}\n\
                         write it anew with `scripts/regen-guide`",
                        shown(&path),
                        command.line,
                        command.text,
                        real.join("\n")
                    ));
                }
            }
            if check_output {
                let code_start = block.start + text[block.start..].find('\n').unwrap() + 1;
                rewritten.replace_range(code_start..code_start + block.code.len(), &regenerated);
            }
        }
        if std::env::var_os(REGENERATE).is_some_and(|v| v == "1") && rewritten != text {
            std::fs::write(&path, rewritten).unwrap();
        }
    }
    eprintln!("{checked} command lines checked, {ran} of them run");
    assert!(
        checked > 50,
        "the guide's command lines were not found: {checked}"
    );
    assert!(
        illustrative_blocks <= MOST_ILLUSTRATIVE_BLOCKS,
        "{illustrative_blocks} blocks are marked illustrative (at most \
         {MOST_ILLUSTRATIVE_BLOCKS}): show commands that run on the repository's own files"
    );
    let _ = std::fs::remove_dir_all(tmp.join("work"));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_file(common::store_of(&tmp));
}

/// The ids mdBook gives a page's headings (its `normalize_id`: letters, digits, `_` and
/// `-` kept and lowercased, spaces turned to `-`, the rest dropped; a repeated id gets
/// `-1`, `-2` …).
fn heading_ids(text: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let text = heading.take().unwrap_or_default();
                let id: String = text
                    .chars()
                    .filter_map(|c| {
                        if c.is_alphanumeric() || c == '_' || c == '-' {
                            Some(c.to_ascii_lowercase())
                        } else if c.is_whitespace() {
                            Some('-')
                        } else {
                            None
                        }
                    })
                    .collect();
                let repeats = ids
                    .iter()
                    .filter(|seen| **seen == id || seen.starts_with(&format!("{id}-")))
                    .count();
                ids.push(if repeats == 0 {
                    id.clone()
                } else {
                    format!("{id}-{repeats}")
                });
            }
            _ => {}
        }
    }
    ids
}

/// The text mdBook renders for a page: its `{{#include FILE}}` lines replaced by the file.
fn rendered(path: &Path, text: &str) -> String {
    text.lines()
        .map(|line| match line.trim().strip_prefix("{{#include ") {
            Some(rest) => {
                let file = path
                    .parent()
                    .unwrap()
                    .join(rest.trim_end_matches("}}").trim());
                std::fs::read_to_string(&file).unwrap_or_else(|_| {
                    panic!(
                        "{}: includes {}, which is missing",
                        shown(path),
                        file.display()
                    )
                })
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_link_and_anchor_in_the_guide_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (path, text) in pages() {
        let text = rendered(&path, &text);
        for event in Parser::new(&text) {
            let (Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. })) = event
            else {
                continue;
            };
            if dest_url.contains("://") || dest_url.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = dest_url.split_once('#').unwrap_or((&dest_url, ""));
            let target = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            if !target.exists() {
                problems.push(format!(
                    "{}: links to {dest_url}, which does not exist",
                    shown(&path)
                ));
                continue;
            }
            if anchor.is_empty() || target.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let target_text = rendered(&target, &std::fs::read_to_string(&target).unwrap());
            if !heading_ids(&target_text).iter().any(|id| id == anchor) {
                problems.push(format!(
                    "{}: links to {dest_url}, but {} has no heading with the id {anchor}",
                    shown(&path),
                    shown(&target.canonicalize().unwrap())
                ));
            }
        }
    }
    // Every page is in the book (a page SUMMARY.md does not list is not built).
    let summary = std::fs::read_to_string(guide_src().join("SUMMARY.md")).unwrap();
    for (path, _) in pages() {
        let Ok(relative) = path.strip_prefix(guide_src()) else {
            continue;
        };
        let relative = relative.display().to_string();
        if relative != "SUMMARY.md" && !summary.contains(&format!("({relative})")) {
            problems.push(format!(
                "docs/guide/src/{relative} is not listed in SUMMARY.md"
            ));
        }
    }
    assert!(checked > 20, "the guide's links were not found: {checked}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
