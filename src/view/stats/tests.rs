//! Unit tests of the view's statistics: summaries, intervals, sequential looks and warnings on
//! known samples.

use super::*;

#[test]
fn summaries_and_the_median_interval_follow_the_binomial() {
    let summary = summarise(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!(
        (summary.n, summary.min, summary.median, summary.max),
        (3, 1.0, 2.0, 3.0)
    );
    assert_eq!(summary.sd, Some(1.0));
    assert_eq!(summary.median_ci, None, "n = 3 cannot give 95%");
    // n = 6: P(B <= 0) = 1/64 <= 2.5%, P(B <= 1) = 7/64 > 2.5%: [x(1), x(6)].
    let six: Vec<f64> = (1..=6).map(f64::from).collect();
    assert_eq!(summarise(&six).unwrap().median_ci, Some((1.0, 6.0)));
    // n = 10: P(B <= 1) = 11/1024 <= 2.5%, P(B <= 2) = 56/1024 > 2.5%: [x(2), x(9)].
    let ten: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(summarise(&ten).unwrap().median_ci, Some((2.0, 9.0)));
    // n = 20: the textbook ranks are 6 and 15.
    let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(summarise(&twenty).unwrap().median_ci, Some((6.0, 15.0)));
    assert_eq!(summarise(&[]), None);
}

#[test]
fn a_clear_difference_has_an_interval_clear_of_one_and_noise_has_not() {
    let a = [100.0, 102.0, 98.0, 101.0, 99.0];
    let b = [150.0, 149.0, 152.0, 151.0, 148.0];
    let ratio = ratio_of_medians(&a, &b).unwrap();
    assert!((ratio.ratio - 1.5).abs() < 1e-9);
    assert!(ratio.low > 1.4 && ratio.high < 1.6, "{ratio:?}");
    let c = [99.0, 103.0, 97.0, 102.0, 100.0];
    let noise = ratio_of_medians(&a, &c).unwrap();
    assert!(noise.low <= 1.0 && noise.high >= 1.0, "{noise:?}");
    // Too few values: a ratio, but no interval.
    let few = ratio_of_medians(&[1.0, 2.0], &[3.0, 4.0]).unwrap();
    assert!(few.low.is_nan() && few.high.is_nan());
}

/// A standard normal draw (Box–Muller), so the simulation needs no other crate.
fn normal(rng: &mut SmallRng) -> f64 {
    let (u, v): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

const STUDIES: usize = 2_000;

/// `STUDIES` simulated studies of two set-ups whose true ratio B/A is `true_ratio`, each
/// repeat lognormal with spread `sigma` around its set-up's value and a drift per round
/// shared by both (what pairing cancels); per study, the answer of B over A at every
/// look from repeat 3 to 12 under `rule`.
fn simulate(true_ratio: f64, sigma: f64, rule: &DecisionRule) -> Vec<Vec<Answer>> {
    let mut rng = SmallRng::seed_from_u64(48);
    (0..STUDIES)
        .map(|_| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..DEFAULT_MAX_REPEATS {
                let drift = 0.1 * normal(&mut rng);
                a.push(1000.0 * (drift + sigma * normal(&mut rng)).exp());
                b.push(1000.0 * true_ratio * (drift + sigma * normal(&mut rng)).exp());
            }
            paired_looks(&paired_ratios(&a, &b), rule)
                .iter()
                .map(|interval| answer_of(interval, rule))
                .collect()
        })
        .collect()
}

/// The share of studies where some look said `answer` (B leads, equivalent).
fn share_ever(studies: &[Vec<Answer>], answer: Answer) -> f64 {
    studies
        .iter()
        .filter(|looks| looks.contains(&answer))
        .count() as f64
        / STUDIES as f64
}

fn share_at_last(studies: &[Vec<Answer>], answer: Answer) -> f64 {
    studies
        .iter()
        .filter(|looks| looks.last() == Some(&answer))
        .count() as f64
        / STUDIES as f64
}

/// No study's looks say both "leads" and "equivalent": the answers are absorbing.
fn never_both(studies: &[Vec<Answer>]) {
    for looks in studies {
        assert!(
            !(looks.contains(&Answer::Leads) && looks.contains(&Answer::Equivalent)),
            "{looks:?}"
        );
    }
}

#[test]
fn looking_after_every_repeat_keeps_false_leads_at_or_under_five_per_cent() {
    // Identical set-ups: a lead either way is false. The lead rule's own margin (1+T)
    // would hide a broken interval, so the interval is also checked with T = 0, where a
    // lead is the interval excluding 1.
    for tolerance_pct in [DEFAULT_TOLERANCE_PCT, 0.0] {
        let rule = DecisionRule::sequential(tolerance_pct, FIRST_LOOK_REPEATS, DEFAULT_MAX_REPEATS);
        let forward = simulate(1.0, 0.05, &rule);
        // B over A below 1/(1+T) is A leading.
        let mut rng = SmallRng::seed_from_u64(49);
        let backward: usize = (0..STUDIES)
            .filter(|_| {
                let ratios: Vec<f64> = (0..DEFAULT_MAX_REPEATS)
                    .map(|_| (0.05 * std::f64::consts::SQRT_2 * normal(&mut rng)).exp())
                    .collect();
                paired_looks(&ratios, &rule)
                    .iter()
                    .any(|i| i.high < 1.0 / (1.0 + rule.tolerance))
            })
            .count();
        let false_leads = share_ever(&forward, Answer::Leads) + backward as f64 / STUDIES as f64;
        println!(
            "identical set-ups, T = {tolerance_pct}%: false leads in {false_leads:.4} of studies"
        );
        assert!(false_leads <= 0.05, "T = {tolerance_pct}%: {false_leads}");
        never_both(&forward);
    }
    // The same looks with an unspent 95% interval each (and no intersection) lead
    // falsely far more often: the simulation can tell a rule that does not hold.
    let mut rng = SmallRng::seed_from_u64(50);
    let naive = (0..STUDIES)
        .filter(|_| {
            let logs: Vec<f64> = (0..DEFAULT_MAX_REPEATS)
                .map(|_| 0.05 * std::f64::consts::SQRT_2 * normal(&mut rng))
                .collect();
            (FIRST_LOOK_REPEATS..=DEFAULT_MAX_REPEATS).any(|k| {
                let (mean, sd) = mean_sd(&logs[..k]);
                mean.abs() > t_quantile(1.0 - CONFIDENCE, k) * sd / (k as f64).sqrt()
            })
        })
        .count() as f64
        / STUDIES as f64;
    println!("unspent 95% intervals at every look: false leads in {naive:.4} of studies");
    assert!(naive > 0.10, "{naive}");
}

#[test]
fn a_true_twenty_per_cent_lead_leads_and_a_one_per_cent_difference_is_equivalent() {
    let rule = DecisionRule::default();
    let lead = simulate(1.2, 0.05, &rule);
    let led = share_at_last(&lead, Answer::Leads);
    assert!(led >= 0.9, "{led}");
    assert_eq!(share_ever(&lead, Answer::Equivalent), 0.0);
    let close = simulate(1.01, 0.01, &rule);
    let equivalent = share_at_last(&close, Answer::Equivalent);
    println!("true 1.20: leads by repeat 12 in {led:.4}; true 1.01: equivalent in {equivalent:.4}");
    assert!(equivalent >= 0.9, "{equivalent}");
    assert_eq!(share_ever(&close, Answer::Leads), 0.0);
    never_both(&lead);
    never_both(&close);
}

#[test]
fn an_undecided_pair_says_how_many_repeats_more_would_decide() {
    let rule = DecisionRule::default();
    // Three rounds around 1.20 with a few per cent of spread: too wide yet at α/10.
    let ratios = [1.15, 1.25, 1.20];
    let decision = decide(&ratios, &rule).unwrap();
    assert_eq!(decision.pairs, 3);
    assert!(
        (decision.interval.ratio - 1.199).abs() < 0.01,
        "{decision:?}"
    );
    let Answer::Undecided {
        more_repeats: Some(more),
    } = decision.answer
    else {
        panic!("{decision:?}")
    };
    // The same rounds again until that many more: decided, as estimated.
    let longer: Vec<f64> = ratios
        .iter()
        .copied()
        .cycle()
        .take(3 + more as usize)
        .collect();
    assert_eq!(decide(&longer, &rule).unwrap().answer, Answer::Leads);
    // Right at the tolerance it never decides.
    let edge = [1.04, 1.06, 1.05 * 1.05 / 1.04 / 1.06 * 1.05];
    assert!(matches!(
        decide(&edge, &rule).unwrap().answer,
        Answer::Undecided { .. }
    ));
    assert_eq!(decide(&[1.1, 1.2], &rule), None, "no look before 3 repeats");
    // Pairs of the first min(n) rounds.
    assert_eq!(paired_ratios(&[1.0, 2.0, 4.0], &[2.0, 2.0]), vec![2.0, 1.0]);
}

#[test]
fn a_fixed_count_is_looked_at_once_with_the_whole_error_rate() {
    let fixed = DecisionRule::fixed(DEFAULT_TOLERANCE_PCT);
    let deciding = DecisionRule::default();
    // Three rounds around 1.20 with 2% of spread: a fixed count of three spends all of
    // α at its one look (t = 4.30) and decides; deciding-then-stopping spends α/10 at
    // repeat 3 (t = 14.09) and does not, yet.
    let ratios = [1.18, 1.22, 1.20];
    assert_eq!(paired_looks(&ratios, &fixed).len(), 1);
    assert_eq!(paired_looks(&ratios, &deciding).len(), 1);
    assert_eq!(decide(&ratios, &fixed).unwrap().answer, Answer::Leads);
    assert!(matches!(
        decide(&ratios, &deciding).unwrap().answer,
        Answer::Undecided {
            more_repeats: Some(_)
        }
    ));
    // Twelve rounds: one look for the fixed count, ten when deciding.
    let twelve: Vec<f64> = ratios.iter().copied().cycle().take(12).collect();
    assert_eq!(paired_looks(&twelve, &fixed).len(), 1);
    assert_eq!(paired_looks(&twelve, &deciding).len(), 10);
    // A fixed count's one look keeps the false-lead rate at α for identical set-ups.
    let studies = simulate(1.0, 0.05, &DecisionRule::fixed(0.0));
    let false_leads = share_ever(&studies, Answer::Leads);
    assert!(false_leads <= 0.05 / 2.0 + 0.01, "{false_leads}");
    // A later first look (a study whose own count is 5) spends over fewer looks.
    let from_five = DecisionRule::sequential(DEFAULT_TOLERANCE_PCT, 5, 12);
    assert!(paired_looks(&ratios, &from_five).is_empty());
    assert_eq!(paired_looks(&twelve, &from_five).len(), 8);
}

#[test]
fn warnings_name_the_cell_the_repeat_and_the_fix() {
    assert_eq!(
        too_few_warning(3).unwrap(),
        "3 repeats per cell are too few for a 95% interval of the median: use --repeat 6 or more"
    );
    assert_eq!(too_few_warning(1), None);
    assert_eq!(too_few_warning(6), None);
    let warnings = warnings("select InnoDB threads=5", &[100.0, 210.0, 101.0], false);
    assert_eq!(
            warnings[0],
            "select InnoDB threads=5: repeat 2 was 2.1× slower than the median: use --repeat 10 or a quieter machine"
        );
    assert!(
        warnings[1].contains("spread over 109% of the median"),
        "{warnings:?}"
    );
    // Throughput: a low repeat is the slow one.
    let throughput = super::warnings("x", &[1000.0, 400.0, 990.0, 1010.0, 1005.0, 995.0], true);
    assert_eq!(
        throughput,
        vec![
            "x: repeat 2 was 2.5× slower than the median: use --repeat 10 or a quieter machine",
            "x: repeats spread over 61% of the median (400 to 1010): the figure is not stable here"
        ]
    );
}
