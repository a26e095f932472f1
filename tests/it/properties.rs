//! Property tests: on random stacks and random rules, self and owner each add up to the total
//! exactly, and all three views agree with a naive recomputation written independently here.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use whose::{AggregateOptions, aggregate};
use whose::{Frame, FrameKind, Profile, SampleType};
use whose::{RuleOptions, RuleSet};

const NAMES: [&str; 8] = ["a.x", "a.y", "b.x", "b.y", "c.x", "d.x", "e.z", "f.z"];

/// Rules: for each prefix letter an owner (name = letter), transparent or not. Letters
/// without a rule stay unclassified.
fn rules_text(owners: &[(char, bool)]) -> String {
    let mut text = String::new();
    for (letter, transparent) in owners {
        text.push_str(&format!(
            "[[owner]]\nname = \"{letter}\"\ncategory = \"{}\"\ntransparent = {transparent}\nprefix = [\"{letter}.\"]\n\n",
            if *transparent { "runtime" } else { "library" }
        ));
    }
    text
}

/// The naive computation: per sample, straight from the definitions in docs/design.md.
fn naive(
    samples: &[(Vec<usize>, u64)],
    owners: &[(char, bool)],
) -> (BTreeMap<String, [u128; 3]>, u128) {
    let owner_of = |name: &str| -> (String, bool) {
        let letter = name.chars().next().unwrap();
        match owners.iter().find(|(l, _)| *l == letter) {
            Some((l, t)) => (l.to_string(), *t),
            None => ("unclassified".to_string(), false),
        }
    };
    let mut out: BTreeMap<String, [u128; 3]> = BTreeMap::new();
    let mut total = 0u128;
    for (stack, w) in samples {
        let w = *w as u128;
        total += w;
        let owners_on: Vec<(String, bool)> = stack.iter().map(|&i| owner_of(NAMES[i])).collect();
        out.entry(owners_on[0].0.clone()).or_default()[0] += w;
        let owner = owners_on
            .iter()
            .find(|(_, t)| !t)
            .unwrap_or(&owners_on[0])
            .0
            .clone();
        out.entry(owner).or_default()[1] += w;
        let distinct: BTreeSet<&String> = owners_on.iter().map(|(o, _)| o).collect();
        for o in distinct {
            out.entry(o.clone()).or_default()[2] += w;
        }
    }
    (out, total)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn views_add_up_and_match_a_naive_count(
        samples in prop::collection::vec(
            (prop::collection::vec(0usize..NAMES.len(), 1..6), 0u64..1_000_000), 1..40),
        owners in prop::collection::vec((prop::sample::select(vec!['a','b','c','d','e']), any::<bool>()), 0..5),
    ) {
        let mut owners = owners;
        owners.dedup_by_key(|(l, _)| *l);
        let mut seen = BTreeSet::new();
        owners.retain(|(l, _)| seen.insert(*l));

        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(rules_text(&owners).as_bytes()).unwrap();
        let mut profile = Profile::new(vec![SampleType::samples()]);
        for (stack, w) in &samples {
            let ids: Vec<_> = stack
                .iter()
                .map(|&i| profile.intern_frame(Frame::named(NAMES[i], FrameKind::Native)))
                .collect();
            let s = profile.intern_stack(&ids);
            profile.add_sample(s, None, &[*w as u128]);
        }
        let options = RuleOptions {
            rule_files: vec![file.path().to_path_buf()],
            no_presets: true,
            ..Default::default()
        };
        let rules = RuleSet::build(&options, std::slice::from_ref(&profile)).unwrap();
        let classes = rules.classify(&profile);
        let agg = aggregate(&profile, &rules, &classes, &AggregateOptions {
            metric: 0, types_as_frames: false, threads: false, top: 5, intervals: true,
            user_hint: true,
        });
        let (want, total) = naive(&samples, &owners);
        prop_assert_eq!(agg.all.total, total);
        let self_sum: u128 = agg.all.owners.iter().map(|w| w.self_).sum();
        let owner_sum: u128 = agg.all.owners.iter().map(|w| w.owner).sum();
        prop_assert_eq!(self_sum, total);
        prop_assert_eq!(owner_sum, total);
        let cat_self: u128 = agg.all.categories.iter().map(|w| w.self_).sum();
        prop_assert_eq!(cat_self, total);
        for (i, owner) in rules.owners().iter().enumerate() {
            let got = &agg.all.owners[i];
            let w = want.get(&owner.name).copied().unwrap_or([0; 3]);
            prop_assert_eq!([got.self_, got.owner, got.anywhere], w, "owner {}", owner.name);
        }
    }
}
