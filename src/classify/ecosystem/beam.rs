//! Erlang and Elixir on the BEAM (issue 57): the program's own modules guessed from the
//! profile, as the JVM's packages are.
//!
//! perf sees Erlang code through the JIT's perf map (`+JPperf true`, OTP 24+), whose entries
//! `names::beam_map_name` reads as `Elixir.Shop.Orders:total/2` and `inventory_calc:run/3`
//! (kind `jit`, no module). OTP's modules, Elixir's standard library, the emulator and the
//! hex packages the preset knows are claimed by `rules/beam.toml`; the rest are the program's
//! or an unknown dependency's. A module's *root* is what an application's modules share: the
//! first segment of an Elixir module (`Elixir.Shop` of `Elixir.Shop.Orders`), the name before
//! the first `_` of an Erlang one (`inventory` of `inventory_calc`). The signs, strongest first:
//! - the module the recorded command starts (`erl -s inventory main`, `elixir -e
//!   'Shop.main()'`, `-run`, `-eval`): strong;
//! - else the root of the outermost unclaimed frames on the most weight, called from code the
//!   presets know (`proc_lib`, `gen_server`: the program's processes and callbacks), that no
//!   other root calls without being called back (a dependency is called by the program and
//!   never calls it): medium. Called by nothing the presets know, it is too weak a sign.
//!
//! The guess claims the chosen root and the roots whose names extend it or that it extends
//! (`Elixir.ShopWeb` and `Elixir.Shop`: a Phoenix program's web layer calls its core, which
//! would otherwise look like its dependency). A distribution's `beam.smp` is usually stripped and built without frame
//! pointers: its C code (BIFs, ETS, copying, GC, NIFs) is then the emulator's by module, and
//! the Erlang function that called it is not in the stack; the quality notices say so.

use super::row::{Ecosystem, Interpreter, Runtime};
use crate::classify::guess::{self, DeclineReason, Declined, Evidence, Guess, OwnCode};
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameId, FrameKind, Profile};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// Erlang and Elixir: `beam.toml`, the program's applications, Elixir dependencies by root.
pub const ECOSYSTEM: Ecosystem = Ecosystem {
    interpreter: Some(Interpreter {
        runtime: Runtime::Beam,
        is_module: is_emulator_module,
    }),
    ..Ecosystem::language(
        "beam",
        include_str!("../../../rules/beam.toml"),
        guesses,
        unit,
    )
};

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    vec![own_code(profiles, claimed_by_presets)]
}

/// The module of a BEAM function's name: `Elixir.Shop.Orders` of `Elixir.Shop.Orders:total/2`
/// and of `Elixir.Shop.Orders::codeHeader`, `lists` of `lists:foldl/3`.
pub fn module_of(name: &str) -> Option<&str> {
    let (module, rest) = name.split_once(':')?;
    let function = rest.strip_prefix(':').unwrap_or(rest);
    let shaped = match rest.starts_with(':') {
        true => {
            !function.is_empty()
                && function
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }
        false => function.rsplit_once('/').is_some_and(|(_, arity)| {
            !arity.is_empty() && arity.bytes().all(|b| b.is_ascii_digit())
        }),
    };
    let plain = !module.is_empty()
        && module
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'@');
    (shaped && plain).then_some(module)
}

/// The root an application's modules share (see the module doc).
pub fn root_of(module: &str) -> &str {
    match module.strip_prefix("Elixir.") {
        Some(rest) => {
            let first = rest.split('.').next().unwrap_or(rest);
            &module[..7 + first.len()]
        }
        None => module.split('_').next().unwrap_or(module),
    }
}

/// An Erlang root as its application names it: the longest `_`-separated prefix its
/// unclaimed `modules` share (`order_book` of `order_book_app`, `order_book_matcher`;
/// `inventory` of `inventory`, `inventory_calc`), so the guess claims no other `order_`
/// module. An Elixir root is its application's already.
fn application_of(root: &str, modules: &BTreeSet<&str>) -> String {
    if root.starts_with("Elixir.") {
        return root.to_string();
    }
    let mut shared: Option<Vec<&str>> = None;
    for module in modules.iter().filter(|m| root_of(m) == root) {
        let parts: Vec<&str> = module.split('_').collect();
        shared = Some(match shared {
            None => parts,
            Some(mut common) => {
                let same = (common.iter().zip(&parts))
                    .take_while(|(a, b)| a == b)
                    .count();
                common.truncate(same.max(1));
                common
            }
        });
    }
    shared.map_or_else(|| root.to_string(), |parts| parts.join("_"))
}

/// The match-key prefixes that claim every module of `root`.
fn prefixes(root: &str) -> [String; 2] {
    match root.starts_with("Elixir.") {
        true => [format!("{root}."), format!("{root}:")],
        false => [format!("{root}:"), format!("{root}_")],
    }
}

/// Whether `module` (a path or file name) is the emulator, `beam.smp` (the JIT build's one
/// name since OTP 24).
pub fn is_emulator_module(module: &str) -> bool {
    module.rsplit('/').next() == Some("beam.smp")
}

/// A BEAM function frame: the JIT's code, named `Module:function/arity`.
fn is_beam_function(frame: &Frame) -> bool {
    frame.kind == FrameKind::Jit && frame.module.is_none() && module_of(&frame.name).is_some()
}

/// The program's own modules in `profiles` (see the module doc).
pub fn own_code(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Guess {
    // the modules of the BEAM functions no rule claims, each once, and their roots
    let modules: BTreeSet<&str> = (profiles.iter().flat_map(Profile::frames))
        .filter(|f| is_beam_function(f) && !claimed_by_presets(f))
        .filter_map(|f| module_of(&f.name))
        .collect();
    let mut roots: Vec<&str> = modules.iter().map(|m| root_of(m)).collect();
    roots.sort_unstable();
    roots.dedup();
    if roots.is_empty() {
        return without_erlang_frames(profiles);
    }
    let found = (profiles.iter())
        .find_map(|p| recorded_root(p, &roots))
        .map(|(root, module)| (root, Evidence::BeamCommand { module }));
    let (root, evidence) = match found {
        Some(found) => found,
        None => match outermost(profiles, claimed_by_presets) {
            Ok(found) => found,
            Err(declined) => return Guess::Declined(declined),
        },
    };
    // the roots one names the other's (`Elixir.ShopWeb` and `Elixir.Shop`): one program's
    let mut claimed: Vec<String> = (roots.iter().copied())
        .filter(|r| r.starts_with(root.as_str()) || root.starts_with(r))
        .map(|r| application_of(r, &modules))
        .collect();
    claimed.sort_unstable();
    claimed.dedup();
    let shortest = claimed.iter().min_by_key(|r| r.len()).unwrap_or(&root);
    Guess::Found(OwnCode {
        unit: UnitKind::BeamApplication,
        name: shortest
            .strip_prefix("Elixir.")
            .unwrap_or(shortest)
            .to_string(),
        prefixes: claimed.iter().flat_map(|r| prefixes(r)).collect(),
        evidence,
        ..OwnCode::default()
    })
}

/// No Erlang function at all: recorded without `+JPperf true` (no JIT map), or the map not
/// given: the emulator's native code is all the stacks show, and no share of the program's
/// own can be read.
fn without_erlang_frames(profiles: &[Profile]) -> Guess {
    let any_erlang = (profiles.iter().flat_map(Profile::frames)).any(is_beam_function);
    let emulator = |f: &Frame| f.module.as_deref().is_some_and(is_emulator_module);
    match guess::runtime_weight(profiles, &emulator) {
        Some((runtime, weight, total)) if !any_erlang => Guess::Declined(Declined {
            unit: UnitKind::BeamApplication,
            reason: DeclineReason::NoLanguageFrames {
                runtime,
                weight,
                total,
            },
        }),
        _ => Guess::Nothing,
    }
}

/// The root of the module the recorded command starts, when it is one of `roots`: `-s MOD`,
/// `-run MOD`, or a module an `-eval`/`-e` expression calls (`Shop.main()`, `inventory:main()`).
fn recorded_root(profile: &Profile, roots: &[&str]) -> Option<(String, String)> {
    let command = profile.meta.command.as_deref()?;
    let words: Vec<&str> = command.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        let Some(next) = words.get(i + 1) else {
            break;
        };
        let module = match *word {
            "-s" | "-run" => Some(next.to_string()),
            "-eval" | "-e" => called_module(next.trim_matches(['\'', '"'])),
            _ => None,
        };
        if let Some(module) = module
            && roots.contains(&root_of(&module))
        {
            return Some((root_of(&module).to_string(), module));
        }
    }
    None
}

/// The module an expression calls first: `Shop.main()` → `Elixir.Shop`, `inventory:main()` →
/// `inventory`; the application it starts, `application:ensure_all_started(order_book)` →
/// `order_book`.
fn called_module(expr: &str) -> Option<String> {
    let (call, args) = expr.split_once('(').unwrap_or((expr, ""));
    let call = call.trim();
    if let Some((module, function)) = call.split_once(':') {
        let starts_app = module == "application"
            && matches!(function, "start" | "ensure_started" | "ensure_all_started");
        let app = args.split([',', ')']).next().unwrap_or("").trim();
        return Some(match starts_app && !app.is_empty() {
            true => app.to_string(),
            false => module.to_string(),
        });
    }
    let (module, _) = call.rsplit_once('.')?;
    module
        .starts_with(|c: char| c.is_ascii_uppercase())
        .then(|| format!("Elixir.{module}"))
}

/// Per root, the weight of the stacks it is outermost in, whether a frame the presets know
/// called it there, and one of its functions.
type Outermost = FxHashMap<String, (u128, bool, String)>;

/// The root of the outermost unclaimed frames on the most weight, called by a frame the
/// presets know, less the roots that are dependencies of others; or why no guess is made.
fn outermost(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Result<(String, Evidence), Declined> {
    let (weight, chains, total) = tally(profiles, claimed_by_presets);
    let chains_ref: Vec<Vec<&str>> = (chains.iter())
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let dependencies = guess::dependencies(chains_ref.iter());
    let mut ranked: Vec<(&String, &(u128, bool, String))> = (weight.iter())
        .filter(|(root, _)| !dependencies.contains(root.as_str()))
        .collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let weak = |heaviest: &str, method: &str, weight: u128| Declined {
        unit: UnitKind::BeamApplication,
        reason: DeclineReason::WeakEvidence {
            heaviest: heaviest.to_string(),
            method: method.to_string(),
            weight,
            total,
        },
    };
    let (root, (w, confirmed, function)) = ranked.first().ok_or_else(|| weak("", "", 0))?;
    if !confirmed {
        return Err(weak(root, function, *w));
    }
    Ok((
        root.to_string(),
        Evidence::BeamOutermost {
            function: function.clone(),
            weight: *w,
            total,
        },
    ))
}

/// Walks every stack once: the outermost unclaimed root of each ([`Outermost`]), the chain of
/// unclaimed roots from the outermost in (for the dependencies), and the total weight.
fn tally(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> (Outermost, Vec<Vec<String>>, u128) {
    let mut weight = Outermost::default();
    let mut chains: Vec<Vec<String>> = Vec::new();
    let mut total = 0u128;
    for profile in profiles {
        let candidate: Vec<Option<&str>> = (profile.frames())
            .map(|f| {
                (is_beam_function(f) && !claimed_by_presets(f))
                    .then(|| module_of(&f.name).map(root_of))
                    .flatten()
            })
            .collect();
        let known: Vec<bool> = profile.frames().map(claimed_by_presets).collect();
        for row in profile.rows() {
            let w = row.values[profile.default_sample_type];
            total += w;
            let ids: Vec<usize> = (profile.stack(row.stack).iter().rev())
                .map(|f| f.0 as usize)
                .collect();
            let Some(at) = ids.iter().position(|&i| candidate[i].is_some()) else {
                continue;
            };
            let entry = weight
                .entry(candidate[ids[at]].unwrap_or_default().to_string())
                .or_default();
            entry.0 += w;
            entry.1 |= at > 0 && known[ids[at - 1]];
            if entry.2.is_empty() {
                entry.2 = profile.frame(FrameId(ids[at] as u32)).name.to_string();
            }
            let mut chain: Vec<String> = Vec::new();
            for root in ids.iter().filter_map(|&i| candidate[i]) {
                if chain.last().map(String::as_str) != Some(root) {
                    chain.push(root.to_string());
                }
            }
            chains.push(chain);
        }
    }
    (weight, chains, total)
}

/// A dependency no rule names (`Elixir.Decimal.add/2`, `eredis_client:request/3`): its
/// root, as an auto-owner's unit (`Decimal`, `eredis`). The program's own modules are claimed
/// before any unit is asked; OTP's, Elixir's and the known packages' by the rules.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    if !is_beam_function(frame) {
        return None;
    }
    let root = root_of(module_of(&frame.name)?);
    Some(Unit {
        kind: UnitKind::BeamApplication,
        name: root.strip_prefix("Elixir.").unwrap_or(root).to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SampleType;

    #[test]
    fn modules_and_roots() {
        assert_eq!(
            module_of("Elixir.Shop.Orders:total/2"),
            Some("Elixir.Shop.Orders")
        );
        assert_eq!(
            module_of("Elixir.Shop.Orders::codeHeader"),
            Some("Elixir.Shop.Orders")
        );
        assert_eq!(module_of("lists:foldl/3"), Some("lists"));
        assert_eq!(
            module_of("Elixir.Enum:'-map/2-lists^map/1-0-'/2"),
            Some("Elixir.Enum")
        );
        assert_eq!(module_of("std::vector::push"), None);
        assert_eq!(module_of("com.acme.Main.main"), None);
        assert_eq!(root_of("Elixir.Shop.Orders"), "Elixir.Shop");
        assert_eq!(root_of("Elixir.ShopWeb"), "Elixir.ShopWeb");
        assert_eq!(root_of("inventory_calc"), "inventory");
        assert_eq!(root_of("inventory"), "inventory");
        assert_eq!(called_module("Shop.main()"), Some("Elixir.Shop".into()));
        assert_eq!(called_module("inventory:main()"), Some("inventory".into()));
        assert_eq!(
            called_module("application:ensure_all_started(order_book)"),
            Some("order_book".into())
        );
    }

    /// `proc_lib → Shop.Pricing → Decimal`, `proc_lib → ShopWeb.Router → Shop.Pricing`: the
    /// program is Shop and ShopWeb (Decimal is their dependency).
    #[test]
    fn the_outermost_root_called_from_otp_less_its_dependencies() {
        let mut p = Profile::new(vec![SampleType::samples()]);
        let mut f = |name: &str| p.intern_frame(Frame::named(name, FrameKind::Jit));
        let (otp, pricing, decimal, router) = (
            f("proc_lib:init_p_do_apply/3"),
            f("Elixir.Shop.Pricing:quote/2"),
            f("Elixir.Decimal:add/2"),
            f("Elixir.ShopWeb.Router:call/2"),
        );
        let s1 = p.intern_stack(&[decimal, pricing, otp]);
        let s2 = p.intern_stack(&[pricing, router, otp]);
        p.add_sample(s1, None, &[30]);
        p.add_sample(s2, None, &[10]);
        let otp_known = |f: &Frame| f.name.starts_with("proc_lib:");
        let Guess::Found(code) = own_code(&[p], &otp_known) else {
            panic!("no guess");
        };
        assert_eq!(code.name, "Shop");
        assert_eq!(
            code.prefixes,
            [
                "Elixir.Shop.",
                "Elixir.Shop:",
                "Elixir.ShopWeb.",
                "Elixir.ShopWeb:"
            ]
        );
        // Shop is called by ShopWeb and never calls it back: ShopWeb is outermost
        assert!(matches!(
            code.evidence,
            Evidence::BeamOutermost {
                weight: 10,
                total: 40,
                ..
            }
        ));
    }
}
