//! The HTML report as a reader uses it, in headless Chromium driven by chromedriver through
//! the W3C WebDriver protocol (no server needed: the pages come from saved runs): the
//! pointer really moves onto a point and its value appears in the tooltip, a click on a
//! legend entry really takes its series off the screen (counted in screenshots), and a run
//! on three profiles shows three small charts side by side.

use enginebench::report::html::page;
use enginebench::results::parse_record;
use enginebench::view::stats::figure;
use enginebench::view::{GroupKind, View};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// W3C WebDriver's key for an element reference in JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless Chromium session through a chromedriver this test started; both are ended,
/// and the browser profile removed, when it drops.
struct Browser {
    driver: Child,
    url: String,
    session: String,
    profile: PathBuf,
    /// Chromium's own TMPDIR.
    scratch: PathBuf,
}

impl Browser {
    fn start(name: &str) -> Browser {
        let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("chromedriver is not installed: run `scripts/setup --test` (or apt-get install chromium chromium-driver)");
        let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("chromium is not installed: run `scripts/setup --test` (or apt-get install chromium chromium-driver)");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let profile = std::env::temp_dir().join(format!(
            "enginebench-test-{name}-{}.chromium",
            std::process::id()
        ));
        // Chromium (started by chromedriver, with its environment) makes scratch
        // directories (org.chromium.Chromium.scoped_dir.*) in TMPDIR and may not have
        // removed them when the session ends: a TMPDIR of its own goes with the test. A
        // short one: chromium puts a unix socket in it, whose path may not pass 107 bytes.
        let scratch = PathBuf::from(format!("/tmp/ebcr.{}.{name}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();
        let driver = Command::new(chromedriver)
            .env("TMPDIR", &scratch)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let mut browser = Browser {
            driver,
            url,
            session: String::new(),
            profile,
            scratch,
        };
        let started = Instant::now();
        while ureq::get(&format!("{}/status", browser.url))
            .call()
            .is_err()
        {
            // A hang guard of minutes, not a speed claim: a loaded machine may take a
            // while to start chromedriver.
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "chromedriver did not answer on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                    "--window-size=1200,1600",
                    format!("--user-data-dir={}", browser.profile.display()),
                ],
            },
        }}});
        let session = browser.call("POST", "/session", Some(capabilities));
        browser.session = session["sessionId"].as_str().unwrap().to_string();
        browser
    }

    /// One WebDriver command; its `value`. A failing command fails the test with the
    /// driver's message.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.try_call(method, path, body)
            .unwrap_or_else(|message| panic!("{message}"))
    }

    /// One WebDriver command; its `value`, or the driver's message.
    fn try_call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let url = if path == "/session" {
            format!("{}{path}", self.url)
        } else {
            format!("{}/session/{}{path}", self.url, self.session)
        };
        let request = ureq::request(method, &url);
        let response = match body {
            Some(body) => request.send_json(body),
            None => request.call(),
        };
        match response {
            Ok(response) => Ok(response.into_json::<Value>().unwrap()["value"].take()),
            Err(ureq::Error::Status(code, response)) => Err(format!(
                "{method} {path}: {code} {}",
                response.into_string().unwrap_or_default()
            )),
            Err(error) => Err(format!("{method} {path}: {error}")),
        }
    }

    fn open(&self, file: &Path) {
        self.call(
            "POST",
            "/url",
            Some(json!({"url": format!("file://{}", file.display())})),
        );
    }

    /// Runs `script` in the page with `args`; what it returns (elements as references).
    fn execute(&self, script: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    fn find(&self, css: &str) -> Value {
        self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        )
    }

    fn element(&self, reference: &Value, what: &str) -> Value {
        let id = reference[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("not an element reference: {reference}"));
        self.call("GET", &format!("/element/{id}/{what}"), None)
    }

    fn click(&self, reference: &Value) {
        let id = reference[ELEMENT].as_str().expect("an element reference");
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    /// Moves the mouse pointer onto the middle of an element, as a reader's hand would.
    fn hover(&self, reference: &Value) {
        self.call(
            "POST",
            "/actions",
            Some(json!({"actions": [{
                "type": "pointer",
                "id": "mouse",
                "parameters": {"pointerType": "mouse"},
                "actions": [{"type": "pointerMove", "duration": 100, "origin": reference, "x": 0, "y": 0}],
            }]})),
        );
    }

    /// A screenshot of one element, as PNG. On a loaded machine the renderer can miss
    /// chromedriver's 10 s deadline for a frame ("Timed out receiving message from
    /// renderer", seen once in CI): the screenshot is asked again, twice at most.
    fn screenshot(&self, reference: &Value) -> Vec<u8> {
        use base64::Engine;
        let id = reference[ELEMENT].as_str().expect("an element reference");
        let path = format!("/element/{id}/screenshot");
        let mut attempts = 0;
        let encoded = loop {
            attempts += 1;
            match self.try_call("GET", &path, None) {
                Ok(encoded) => break encoded,
                Err(message)
                    if attempts < 3
                        && message.contains("Timed out receiving message from renderer") => {}
                Err(message) => panic!("{message}"),
            }
        };
        base64::engine::general_purpose::STANDARD
            .decode(encoded.as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            // Ends the browser; then the driver this test started, by its own handle.
            let _ = ureq::delete(&format!("{}/session/{}", self.url, self.session)).call();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Pixels of a PNG within a little of `wanted` (anti-aliasing blends edges).
fn count_pixels(png_bytes: &[u8], wanted: (u8, u8, u8)) -> usize {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    buffer[..info.buffer_size()]
        .chunks(channels)
        .filter(|px| {
            let close = |a: u8, b: u8| a.abs_diff(b) <= 12;
            close(px[0], wanted.0) && close(px[1], wanted.1) && close(px[2], wanted.2)
        })
        .count()
}

/// A report written where the browser can open it; removed when dropped, also when the test
/// fails.
struct Page(PathBuf);

impl Drop for Page {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The HTML report of a fixture, written where the browser can open it.
fn report_of(fixture: &str, name: &str) -> (Page, View) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let record = parse_record(&std::fs::read_to_string(&path).unwrap(), fixture).unwrap();
    let view = View::of(&record);
    let html = std::env::temp_dir().join(format!(
        "enginebench-test-{name}-{}.html",
        std::process::id()
    ));
    std::fs::write(
        &html,
        page(
            &view,
            fixture,
            enginebench::studies::layout_of(&view.record.kind),
        ),
    )
    .unwrap();
    (Page(html), view)
}

/// The figure whose title is `title`, scrolled to the middle of the window.
const FIGURE_TITLED: &str = "var f=[...document.querySelectorAll('figure')].find(f=>f.querySelector('h3').textContent===arguments[0]);f.scrollIntoView({block:'center'});return f;";

const BLUE: (u8, u8, u8) = (0, 114, 178);
const VERMILLION: (u8, u8, u8) = (213, 94, 0);

#[test]
fn hovering_a_point_shows_its_value_and_the_legend_hides_a_series() {
    let (html, view) = report_of("s2-small.json", "browser-hover");
    let browser = Browser::start("browser-hover");
    browser.open(&html.0);
    let phase = "simple (read-only point selects)";
    let title = format!("{phase}: statements per second");
    let chart = browser.execute(FIGURE_TITLED, json!([title]));

    // InnoDB (the legend's second entry) in the "1 MB buffers" chart, at 2 threads.
    let point = browser.execute(
        "return arguments[0].querySelectorAll('.panel')[1].querySelector('g.series[data-series=\"1\"] .hit')",
        json!([chart]),
    );
    let tip = browser.find("#tip");
    assert_eq!(browser.element(&tip, "displayed"), json!(false));
    browser.hover(&point);
    assert_eq!(
        browser.element(&tip, "displayed"),
        json!(true),
        "the tooltip shows once the pointer is on the point"
    );
    let shown = browser.element(&tip, "text");
    let group = view
        .groups_of(GroupKind::Cell)
        .find(|g| {
            g.phase == phase && g.setup.label() == "InnoDB (1 MB buffers)" && g.threads == Some(2)
        })
        .unwrap();
    let median = group.statements_summary.as_ref().unwrap().median;
    let expected = format!(
        "InnoDB (1 MB buffers)\n2 threads: {} statements/s",
        figure(median)
    );
    assert!(
        shown.as_str().unwrap().starts_with(&expected),
        "tooltip {shown} should start with {expected:?}"
    );
    // Off the point, the tooltip goes.
    browser.hover(&browser.execute("return arguments[0].querySelector('h3')", json!([chart])));
    assert_eq!(browser.element(&tip, "displayed"), json!(false));

    // InnoDB's vermillion is on screen in all three small latency charts; a click on its
    // legend entry takes it off, MyISAM's blue stays.
    let latency_title = format!("{phase}: event latency, 2 threads");
    let latency = browser.execute(FIGURE_TITLED, json!([latency_title]));
    let charts = |figure: &Value| {
        browser.screenshot(&browser.execute(
            "return arguments[0].querySelector('.panels')",
            json!([figure]),
        ))
    };
    let before = charts(&latency);
    let (vermillion, blue) = (
        count_pixels(&before, VERMILLION),
        count_pixels(&before, BLUE),
    );
    assert!(
        vermillion > 300 && blue > 300,
        "vermillion {vermillion} blue {blue}"
    );
    let entry = browser.execute(
        "return arguments[0].querySelector('.legend button[data-series=\"1\"]')",
        json!([latency]),
    );
    assert_eq!(browser.element(&entry, "text"), json!("●InnoDB"));
    browser.click(&entry);
    assert_eq!(
        browser.element(&entry, "attribute/aria-pressed"),
        json!("false")
    );
    let hidden = charts(&latency);
    assert_eq!(count_pixels(&hidden, VERMILLION), 0, "InnoDB is hidden");
    let blue_left = count_pixels(&hidden, BLUE);
    assert!(
        blue_left >= blue - blue / 20,
        "MyISAM stays (more of it where InnoDB covered it): blue {blue} then {blue_left}"
    );
    let hidden_point = browser.execute(
        "return arguments[0].querySelector('g.series[data-series=\"1\"] .hit')",
        json!([latency]),
    );
    assert_eq!(
        browser.element(&hidden_point, "displayed"),
        json!(false),
        "a hidden series' values are not hoverable"
    );
    // Other figures keep their InnoDB.
    let _ = browser.execute(FIGURE_TITLED, json!([title]));
    assert!(count_pixels(&charts(&chart), VERMILLION) > 30);
    // A second click brings it back.
    browser.click(&entry);
    let _ = browser.execute(FIGURE_TITLED, json!([latency_title]));
    let again = count_pixels(&charts(&latency), VERMILLION);
    assert!(
        again.abs_diff(vermillion) <= vermillion / 20,
        "vermillion {vermillion} then {again}"
    );
}

#[test]
fn a_run_on_three_profiles_shows_three_small_charts_side_by_side() {
    let (html, _) = report_of("s2-small.json", "browser-multiples");
    let browser = Browser::start("browser-multiples");
    browser.open(&html.0);
    // Per figure: its panels' profile names, where they are and how big their charts are.
    let figures = browser.execute(
        "return [...document.querySelectorAll('figure')].map(f=>[...f.querySelectorAll('.panel')].map(p=>{var r=p.querySelector('svg').getBoundingClientRect();return [p.querySelector('.profile').textContent,Math.round(r.top),Math.round(r.left),Math.round(r.width),Math.round(r.height)];}))",
        json!([]),
    );
    let figures = figures.as_array().unwrap();
    assert!(figures.len() >= 6, "{figures:?}");
    for panels in figures {
        let panels = panels.as_array().unwrap();
        let names: Vec<&str> = panels.iter().map(|p| p[0].as_str().unwrap()).collect();
        assert_eq!(names, ["ample memory", "1 MB buffers", "100 MB buffers"]);
        // One row: the same top, left to right, each chart drawn at full size.
        for pair in panels.windows(2) {
            assert_eq!(pair[0][1], pair[1][1], "{panels:?}");
            assert!(pair[0][2].as_i64() < pair[1][2].as_i64(), "{panels:?}");
        }
        for panel in panels {
            assert_eq!(
                (panel[3].as_i64(), panel[4].as_i64()),
                (Some(356), Some(300))
            );
        }
    }
}

/// The demo's report reads like a decision: at 1366×768 its first screen holds the
/// headline and the relative table, no warning lies above them, and nothing makes the
/// page scroll sideways.
#[test]
fn the_first_screen_of_the_demo_report_holds_the_answer() {
    let (html, _view) = report_of("s0-demo.json", "browser-first-screen");
    let browser = Browser::start("browser-first-screen");
    browser.call(
        "POST",
        "/window/rect",
        Some(json!({"width": 1366, "height": 768})),
    );
    browser.open(&html.0);
    let measured = browser.execute(
        "var s=document.getElementById('summary');\
         var head=s.querySelector('p').getBoundingClientRect();\
         var table=s.querySelector('table').getBoundingClientRect();\
         var warns=[...document.querySelectorAll('.warn')].filter(w=>w.offsetParent!==null)\
           .map(w=>w.getBoundingClientRect().top);\
         return {height:innerHeight,width:document.documentElement.clientWidth,\
           scroll:document.documentElement.scrollWidth,head:head.top,\
           table:table.bottom,headline:s.querySelector('p').textContent,warns:warns};",
        json!([]),
    );
    let number = |key: &str| measured[key].as_f64().unwrap();
    assert!(
        number("height") <= 768.0 && number("width") <= 1366.0,
        "{measured}"
    );
    assert!(
        measured["headline"]
            .as_str()
            .unwrap()
            .starts_with("Run InnoDB (durable)"),
        "{measured}"
    );
    assert!(
        number("table") <= number("height"),
        "the relative table ends below the first screen: {measured}"
    );
    for top in measured["warns"].as_array().unwrap() {
        assert!(
            top.as_f64().unwrap() > number("table"),
            "a warning above the answer: {measured}"
        );
    }
    assert!(
        number("scroll") <= number("width"),
        "the page scrolls sideways: {measured}"
    );
}
