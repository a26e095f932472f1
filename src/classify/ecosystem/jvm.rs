//! The JVM program's own packages, guessed from the profile, so that a Java or Kotlin
//! program's code is user code without a `--user` flag, through the same mechanism as Go's
//! module ([`crate::classify::own_code`]; issue 29).
//!
//! A JVM frame names its method by class and package (`shop.ShopServer.handleQuote`,
//! `bench.MainKt$main$1.invoke`), but nothing in a name says which package is the program's.
//! Where a framework calls the program (Spark's executors, Netty's event loops, a servlet
//! container), the outermost frames that are not the JDK's are the framework's, so a vendor's
//! namespace must never be guessed (issue 53). The candidates are the frames of a package that
//! is neither the JDK's (`java.`, `jdk.`, `sun.`...) nor claimed by a preset (Kotlin's stdlib,
//! Netty, Spark...) nor under a namespace the presets list as a vendor's
//! ([`super::vendors`]: `org.apache.`, `scala.`, `com.google.`...). The signs, strongest
//! first ([`Strength`]):
//! 1. strong: the main class the recording names (JFR's `jdk.JVMInformation`, the command
//!    perf recorded; `spark-submit`'s `--class`), a sampled `main` method of a candidate class
//!    (`demo.app.Main.main`), a Kotlin `main` file's class (`MainKt`, in any of its lambdas);
//! 2. medium: the `run` (`call`) of the classes the JDK's threads and pools start
//!    (`java.lang.Thread.run` → `shop.Worker.run`): the program's tasks; else the package of
//!    the outermost candidate frames that code the presets know calls (a framework's handler,
//!    a JDK or VM frame), for the most weight. A package seen called from another candidate
//!    package that it never calls back is a dependency and never the guess.
//!
//! Outermost candidates that nothing known calls (stacks cut short, or run by a framework no
//! preset knows) are no guess: the header says so ([`DeclineReason::WeakEvidence`]) and
//! their weight stays unclassified.
//!
//! The guess claims the package's vendor prefix (`com.acme.` for `com.acme.shop.Main`: the
//! program's other packages, `com.acme.common`, are its code too; three segments for the
//! vendors of many products, as [`java_vendor`] names them), or the first segment
//! of a package under no domain (`shop.`, `bench.`), or a class of the default package
//! (`Main.`, `Main$`). Where a preset claims frames under that prefix, only the package itself
//! is claimed, so that a preset's owner is never taken for the program's code.

use super::row::Ecosystem;
use super::vendors;
use crate::classify::guess::{self, DeclineReason, Declined, Evidence, Guess, OwnCode};
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameId, Profile};
use rustc_hash::{FxHashMap, FxHashSet};

/// Package prefixes of the JDK itself, never the program's.
/// (Also never a vendor's: [`java_vendor`] names no unit for them.)
const JDK_PREFIXES: &[&str] = &["java.", "javax.", "jdk.", "sun.", "com.sun.", "jakarta."];

/// Methods the JDK's threads and executors call on the program's tasks.
const TASK_METHODS: &[&str] = &["run", "call"];

/// A JVM method name taken apart: `shop.ShopServer$1.run` → package `shop`, class
/// `ShopServer$1`, method `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JavaMethod<'a> {
    /// The package, dotted, empty for the default package.
    pub package: &'a str,
    pub class: &'a str,
    pub method: &'a str,
}

impl<'a> JavaMethod<'a> {
    /// The method a frame names, if its name is a JVM method's: lowercase package segments, a
    /// class that starts with a capital, one method segment after it, and none of what C++,
    /// Rust or kernel names have (`::`, spaces, slashes, parentheses before the signature).
    pub fn parse(name: &'a str) -> Option<JavaMethod<'a>> {
        // the head is the name up to its parameters; every byte of it lies in a segment
        // checked below or is a `.` between them, so a byte none of them allows (`::`, `/`, a
        // space) rejects the name in the same early-exit scan that finds the head: most names
        // of a Go or native profile end here (issue 24, `--each`)
        let allowed =
            |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'<' | b'>');
        let mut head_len = name.len();
        for (i, b) in name.bytes().enumerate() {
            if b == b'(' {
                head_len = i;
                break;
            }
            if !allowed(b) {
                return None;
            }
        }
        // (byte searches: the head is ASCII, and `rsplit_once` builds a searcher per call)
        let head = &name[..head_len];
        let last_dot = |text: &'a str| text.bytes().rposition(|b| b == b'.');
        let dot = last_dot(head)?;
        let (class_path, method) = (&head[..dot], &head[dot + 1..]);
        let (package, class) = match last_dot(class_path) {
            Some(dot) => (&class_path[..dot], &class_path[dot + 1..]),
            None => ("", class_path),
        };
        let identifier = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        };
        let lower = |s: &str| {
            s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        let method_ok = identifier(method) || method == "<init>" || method == "<clinit>";
        let class_ok = class.starts_with(|c: char| c.is_ascii_uppercase()) && identifier(class);
        let package_ok = package.is_empty() || package.split('.').all(lower);
        (method_ok && class_ok && package_ok).then_some(JavaMethod {
            package,
            class,
            method,
        })
    }

    /// The class a nested class or lambda belongs to: `MainKt$main$1` → `MainKt`.
    pub fn outer_class(&self) -> &'a str {
        self.class.split('$').next().unwrap_or(self.class)
    }
}

/// A method of the JDK's own packages.
fn is_jdk(name: &str) -> bool {
    JDK_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The program's own package in `profiles` (see the module doc).
pub fn own_code(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Guess {
    let candidates: Vec<Candidates> = profiles
        .iter()
        .map(|p| Candidates::of(p, claimed_by_presets))
        .collect();
    let found = profiles
        .iter()
        .find_map(recorded_main_class)
        .or_else(|| candidates.iter().find_map(|c| c.entry_point()))
        .or_else(|| candidates.iter().find_map(|c| c.kotlin_main_file()))
        .or_else(|| candidates.iter().find_map(|c| c.thread_task()));
    let found = match found {
        Some(found) => found,
        None => match candidates.iter().find_map(|c| c.outermost()) {
            Some(Outermost::Confirmed(found)) => found,
            Some(Outermost::Weak(declined)) => return Guess::Declined(declined),
            None => return Guess::Nothing,
        },
    };
    let (package, name, evidence) = found;
    let prefixes = claim(&package, &name, profiles, claimed_by_presets);
    Guess::Found(OwnCode {
        unit: UnitKind::JvmPackage,
        name: if package.is_empty() {
            name.clone()
        } else {
            package.clone()
        },
        prefixes,
        files: Vec::new(),
        evidence,
        ..OwnCode::default()
    })
}

/// A package name of the program's own: neither the JDK's nor a listed vendor's.
fn is_candidate_package(qualified: &str) -> bool {
    !is_jdk(qualified) && !vendors::is_jvm_vendor(qualified)
}

/// The main class the recording names ([`crate::model::ProfileMeta::command`]), when it is
/// a candidate's: JFR's Java arguments (`com.acme.Main --port 80`) or the command perf
/// recorded (`java -cp app.jar com.acme.Main`), past a launcher of a vendor's that names the
/// program's class (`spark-submit`'s `org.apache.spark.deploy.SparkSubmit --class
/// com.acme.Job`).
fn recorded_main_class(profile: &Profile) -> Option<Found> {
    let command = profile.meta.command.as_deref()?;
    let class = main_class(command)?;
    let qualified = format!("{class}.main");
    let m = JavaMethod::parse(&qualified)?;
    if !is_candidate_package(&qualified) {
        return None;
    }
    Some((
        m.package.to_string(),
        m.outer_class().to_string(),
        Evidence::JvmMainClass { class },
    ))
}

/// JVM options that take the next word as their value.
const OPTIONS_WITH_VALUE: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--add-opens",
    "--add-exports",
    "--add-reads",
    "--limit-modules",
    "--patch-module",
    "--source",
];

/// The main class of a Java command line or of JFR's Java arguments (see
/// [`recorded_main_class`]); `None` for `-jar` (the class is in the jar's manifest) and for
/// anything that is not a Java class name.
pub fn main_class(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    // `spark-submit --class com.acme.Job app.jar` (perf recording the launcher script)
    let named_class = || {
        words
            .windows(2)
            .find(|w| w[0] == "--class")
            .map(|w| w[1])
            .filter(|c| JavaMethod::parse(&format!("{c}.main")).is_some())
            .map(str::to_string)
    };
    if !words.iter().any(|w| w.rsplit('/').next() == Some("java")) && named_class().is_some() {
        return named_class();
    }
    // past the launcher when the command names it (`/usr/bin/java`, `perf record -- java`)
    let start = words
        .iter()
        .position(|w| w.rsplit('/').next() == Some("java"))
        .map_or(0, |i| i + 1);
    let mut args = words[start..].iter();
    let mut class = None;
    while let Some(word) = args.next() {
        if OPTIONS_WITH_VALUE.contains(word) {
            args.next();
        } else if *word == "-jar" {
            return None;
        } else if *word == "-m" || *word == "--module" {
            class = args.next().and_then(|m| m.split_once('/')).map(|(_, c)| c);
            break;
        } else if !word.starts_with('-') {
            class = Some(*word);
            break;
        }
    }
    let class = class?;
    let is_class = JavaMethod::parse(&format!("{class}.main")).is_some();
    if !is_class {
        return None;
    }
    // a vendor's launcher that runs the program's class (`spark-submit --class`)
    if !is_candidate_package(&format!("{class}.")) {
        return named_class();
    }
    Some(class.to_string())
}

/// The prefixes the guess claims for a program whose package is `package` (`class` when it
/// is the default package): see the module doc.
fn claim(
    package: &str,
    class: &str,
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Vec<String> {
    if package.is_empty() {
        return vec![format!("{class}."), format!("{class}$")];
    }
    let segments: Vec<&str> = package.split('.').collect();
    let wide = match java_vendor(&format!("{package}.C.m")) {
        Some(vendor) => vendor,
        None => segments[0].to_string(),
    };
    let wide = format!("{wide}.");
    let exact = format!("{package}.");
    let overlaps_a_preset = wide != exact
        && profiles.iter().any(|p| {
            p.frames()
                .any(|f| f.name.starts_with(wide.as_str()) && claimed_by_presets(f))
        });
    vec![if overlaps_a_preset { exact } else { wide }]
}

/// One profile's candidate frames (see the module doc) and the weights the signs need.
struct Candidates<'a> {
    profile: &'a Profile,
    /// The parsed method of each candidate frame, by `FrameId`.
    method: Vec<Option<JavaMethod<'a>>>,
    /// Whether each frame is a method of the JDK, by `FrameId`: judged once per distinct
    /// frame, not once per stack it is in.
    jdk_method: Vec<bool>,
    /// Whether each frame is code the presets know (a framework, the JDK, the VM): a caller
    /// that confirms the candidate it calls is run by others, i.e. is the program's.
    known: Vec<bool>,
}

/// The outermost-candidates sign: confirmed by a known caller, or weak.
enum Outermost {
    Confirmed(Found),
    Weak(Declined),
}

/// A found package: (package, class, how it was found).
type Found = (String, String, Evidence);

impl<'a> Candidates<'a> {
    fn of(profile: &'a Profile, claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Candidates<'a> {
        let mut method = Vec::with_capacity(profile.frame_count());
        let mut jdk_method = Vec::with_capacity(profile.frame_count());
        let mut known = Vec::with_capacity(profile.frame_count());
        for f in profile.frames() {
            let parsed = JavaMethod::parse(&f.name);
            let jdk = is_jdk(&f.name);
            let claimed = claimed_by_presets(f);
            jdk_method.push(jdk && parsed.is_some());
            known.push(claimed || jdk);
            method.push(parsed.filter(|_| !claimed && is_candidate_package(&f.name)));
        }
        Candidates {
            profile,
            method,
            jdk_method,
            known,
        }
    }

    /// Each weighted stack, outermost frame first, as (its frames' ids, weight).
    fn stacks(&self) -> impl Iterator<Item = (impl Iterator<Item = usize> + '_, u128)> + '_ {
        let p = self.profile;
        p.rows().map(move |row| {
            let ids = p.stack(row.stack).iter().rev().map(|f| f.0 as usize);
            (ids, row.values[p.default_sample_type])
        })
    }

    /// Sign 1: the heaviest sampled `main` method of a candidate class.
    fn entry_point(&self) -> Option<Found> {
        self.heaviest_frame(|m| m.method == "main")
            .map(|(m, name)| {
                (
                    m.package.to_string(),
                    m.outer_class().to_string(),
                    Evidence::JvmEntryPoint {
                        method: name.to_string(),
                    },
                )
            })
    }

    /// Sign 2: the heaviest frame of a Kotlin `main` file's class.
    fn kotlin_main_file(&self) -> Option<Found> {
        self.heaviest_frame(|m| m.outer_class().ends_with("MainKt"))
            .map(|(m, name)| {
                (
                    m.package.to_string(),
                    m.outer_class().to_string(),
                    Evidence::JvmKotlinMain {
                        method: name.to_string(),
                    },
                )
            })
    }

    /// The candidate frame, among those `pick` accepts, on the most weight (inclusive), with
    /// its name; ties go to the first name.
    fn heaviest_frame(
        &self,
        pick: impl Fn(&JavaMethod) -> bool,
    ) -> Option<(JavaMethod<'a>, &'a str)> {
        let picked: FxHashSet<usize> = (self.method.iter().enumerate())
            .filter(|(_, m)| m.as_ref().is_some_and(&pick))
            .map(|(i, _)| i)
            .collect();
        if picked.is_empty() {
            return None;
        }
        let mut weight: FxHashMap<usize, u128> = FxHashMap::default();
        for (ids, w) in self.stacks() {
            let mut seen = FxHashSet::default();
            for id in ids.filter(|id| picked.contains(id)) {
                if seen.insert(id) {
                    *weight.entry(id).or_default() += w;
                }
            }
        }
        let name = |id: usize| &*self.profile.frame(FrameId(id as u32)).name;
        let mut ranked: Vec<(usize, u128)> = picked
            .iter()
            .map(|&id| (id, weight.get(&id).copied().unwrap_or(0)))
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| name(a.0).cmp(name(b.0))));
        let id = ranked.first()?.0;
        Some((self.method[id]?, name(id)))
    }

    /// Sign 3: the package whose task method (`run`, `call`) is the outermost candidate frame,
    /// called by a JDK frame, on the most weight.
    fn thread_task(&self) -> Option<Found> {
        let mut weight: FxHashMap<&str, (u128, usize)> = FxHashMap::default();
        let mut total = 0u128;
        for (ids, w) in self.stacks() {
            total += w;
            let mut caller_is_jdk = false;
            for id in ids {
                match self.method[id] {
                    Some(m) => {
                        if caller_is_jdk && TASK_METHODS.contains(&m.method) {
                            weight.entry(m.package).or_insert((0, id)).0 += w;
                        }
                        break;
                    }
                    None => caller_is_jdk = self.jdk_method[id],
                }
            }
        }
        let (package, (w, id)) = heaviest(weight)?;
        let m = self.method[id]?;
        let name = &self.profile.frame(FrameId(id as u32)).name;
        Some((
            package.to_string(),
            m.outer_class().to_string(),
            Evidence::JvmThreadTask {
                method: name.to_string(),
                weight: w,
                total,
            },
        ))
    }

    /// The last sign: the package of the outermost candidate frames on the most weight that
    /// a known frame calls (confirmed), never a package only ever called by other
    /// candidates; the heaviest unconfirmed one is declined as weak evidence.
    fn outermost(&self) -> Option<Outermost> {
        // per stack: the candidate packages from the outermost in, repeats folded, each with
        // its first frame and the frame that called it
        let mut rows: Vec<(Vec<Entry>, u128)> = Vec::new();
        let mut total = 0u128;
        for (ids, w) in self.stacks() {
            total += w;
            let mut packages: Vec<Entry> = Vec::new();
            let mut caller = None;
            for id in ids {
                match self.method[id] {
                    Some(m) if packages.last().map(|(p, _, _)| *p) != Some(m.package) => {
                        packages.push((m.package, id, caller));
                    }
                    _ => {}
                }
                caller = Some(id);
            }
            if !packages.is_empty() {
                rows.push((packages, w));
            }
        }
        let dependencies = dependencies(&rows);
        // (weight, its first frame, a known caller of it) per package; confirmed only
        let mut confirmed: FxHashMap<&str, (u128, usize)> = FxHashMap::default();
        let mut weak: FxHashMap<&str, (u128, usize)> = FxHashMap::default();
        let mut caller_of: FxHashMap<&str, usize> = FxHashMap::default();
        for (packages, w) in &rows {
            let Some((package, id, caller)) =
                packages.iter().find(|(p, _, _)| !dependencies.contains(p))
            else {
                continue;
            };
            match caller.filter(|&c| self.known[c]) {
                Some(c) => {
                    confirmed.entry(package).or_insert((0, *id)).0 += w;
                    caller_of.entry(package).or_insert(c);
                }
                None => weak.entry(package).or_insert((0, *id)).0 += w,
            }
        }
        let name = |id: usize| self.profile.frame(FrameId(id as u32)).name.to_string();
        if let Some((package, (w, id))) = heaviest(confirmed) {
            let m = self.method[id]?;
            return Some(Outermost::Confirmed((
                package.to_string(),
                m.outer_class().to_string(),
                Evidence::JvmOutermost {
                    method: name(id),
                    caller: name(caller_of[package]),
                    weight: w,
                    total,
                },
            )));
        }
        let (package, (w, id)) = heaviest(weak)?;
        Some(Outermost::Weak(Declined {
            unit: UnitKind::JvmPackage,
            reason: DeclineReason::WeakEvidence {
                heaviest: package.to_string(),
                method: name(id),
                weight: w,
                total,
            },
        }))
    }
}

/// One candidate package on a stack: its name, its first (outermost) frame there and the
/// frame that called it.
type Entry<'p> = (&'p str, usize, Option<usize>);

/// The packages that candidate packages call but that never call them back, over every
/// stack's `rows` (its candidate packages from the outermost in).
fn dependencies<'p>(rows: &[(Vec<Entry<'p>>, u128)]) -> FxHashSet<&'p str> {
    let names = rows.iter().map(|(packages, _)| {
        packages
            .iter()
            .map(|(name, _, _)| *name)
            .collect::<Vec<_>>()
    });
    guess::dependencies(names)
}

/// The entry of most weight; ties go to the first name.
fn heaviest(weight: FxHashMap<&str, (u128, usize)>) -> Option<(&str, (u128, usize))> {
    weight
        .into_iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then_with(|| b.0.cmp(a.0)))
}

/// `com.fasterxml.jackson.databind.ObjectMapper.readValue` → `com.fasterxml.jackson`;
/// `io.netty.channel.nio.NioEventLoop.run` → `io.netty`;
/// `kotlin.reflect.jvm.internal.KClassImpl.getMembers` → `kotlin.reflect`.
pub fn java_vendor(name: &str) -> Option<String> {
    // a JVM name has no spaces, `::`, `/` or parentheses before its method (a lambda's
    // `$$Lambda` and inner classes' `$` are part of the class)
    // a package, a class and a method: two dots at least (checked first, in the one pass
    // that finds the parameters, as most names asked are no Java method)
    let mut dots = 0;
    let head_len = name
        .bytes()
        .position(|b| {
            dots += usize::from(b == b'.');
            b == b'('
        })
        .unwrap_or(name.len());
    if dots < 2 {
        return None;
    }
    let head = &name[..head_len];
    if head.contains("::") || head.contains(['/', ' ']) {
        return None;
    }
    let segments: Vec<&str> = head.split('.').collect();
    // packages are lowercase identifiers up to the class, which starts with a capital
    let class = segments
        .iter()
        .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))?;
    if class + 1 >= segments.len() {
        return None; // no method after the class: not a method name
    }
    let packages = &segments[..class];
    let is_package = |s: &&str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if packages.is_empty()
        || !packages.iter().all(is_package)
        || JDK_PREFIXES.iter().any(|p| head.starts_with(p))
    {
        return None;
    }
    // a listed vendor's product, even one package deep (`scala.Option.map`); others need
    // two segments to be under a domain
    if let Some(product) = vendors::jvm_product(head) {
        return Some(product);
    }
    if packages.len() < 2 {
        return None;
    }
    let root = packages[0];
    let domain = root.len() == 2 || DOMAIN_ROOTS.contains(&root);
    domain.then(|| packages[..2].join("."))
}

/// First segments of reverse-domain package names that are not a two-letter country code:
/// generic top-level domains seen in Java packages.
const DOMAIN_ROOTS: &[&str] = &[
    "com", "org", "net", "io", "dev", "edu", "gov", "app", "info", "biz", "tech", "cloud", "xyz",
    "software",
];

/// A vendor's Java package, as an auto-owner's unit.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    java_vendor(&frame.name).map(|name| Unit {
        kind: UnitKind::JavaPackage,
        name,
    })
}

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    vec![own_code(profiles, claimed_by_presets)]
}

/// The JVM (Java, Scala, Kotlin's JVM code): `jvm.toml`, the program's packages guessed from
/// the recording's main class or its entry points, vendors' packages by namespace.
pub const ECOSYSTEM: Ecosystem = Ecosystem::language(
    "jvm",
    include_str!("../../../rules/jvm.toml"),
    guesses,
    unit,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrameKind, SampleType};

    /// Rows of leaf-first frame names and their weights.
    fn profile(rows: &[(&[&str], u128)]) -> Profile {
        let mut p = Profile::new(vec![SampleType::samples()]);
        for (frames, weight) in rows {
            let ids: Vec<_> = frames
                .iter()
                .map(|name| p.intern_frame(Frame::named(*name, FrameKind::Jit)))
                .collect();
            let stack = p.intern_stack(&ids);
            p.add_sample(stack, None, &[*weight]);
        }
        p
    }

    /// What the jvm and kotlin presets would claim here.
    fn presets(f: &Frame) -> bool {
        ["kotlin.", "kotlinx.", "io.netty.", "sun.net.httpserver."]
            .iter()
            .any(|p| f.name.starts_with(p))
    }

    fn guess(rows: &[(&[&str], u128)]) -> OwnCode {
        match own_code(&[profile(rows)], &presets) {
            Guess::Found(code) => code,
            other => panic!("{other:?}"),
        }
    }

    /// The method a guess names as its evidence.
    fn evidence_method(code: &OwnCode) -> &str {
        match &code.evidence {
            Evidence::JvmEntryPoint { method }
            | Evidence::JvmKotlinMain { method }
            | Evidence::JvmThreadTask { method, .. }
            | Evidence::JvmOutermost { method, .. } => method,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn method_names_are_taken_apart_and_other_names_are_not() {
        let m = JavaMethod::parse("bench.MainKt$main$1$2$9.invoke").unwrap();
        assert_eq!(
            (m.package, m.class, m.method),
            ("bench", "MainKt$main$1$2$9", "invoke")
        );
        assert_eq!(m.outer_class(), "MainKt");
        let m = JavaMethod::parse("Main.main([Ljava/lang/String;)V").unwrap();
        assert_eq!((m.package, m.class, m.method), ("", "Main", "main"));
        assert!(JavaMethod::parse("com.acme.Foo.<init>").is_some());
        for other in [
            "finish_task_switch.isra.0",
            "JavaThread::run",
            "std::vector<int>::push_back",
            "StubRoutines (2)",
            "Interpreter",
            "main",
            "py::crunch:/app/main.py",
        ] {
            assert_eq!(JavaMethod::parse(other), None, "{other}");
        }
    }

    #[test]
    fn the_entry_point_names_the_vendor_prefix() {
        let code = guess(&[
            (&["com.acme.util.Strings.pad", "com.acme.shop.Main.main"], 3),
            (
                &["org.example.lib.Parser.parse", "com.acme.shop.Worker.run"],
                9,
            ),
        ]);
        assert_eq!(code.name, "com.acme.shop");
        assert_eq!(code.prefixes, ["com.acme."]);
        assert_eq!(evidence_method(&code), "com.acme.shop.Main.main");
    }

    #[test]
    fn a_kotlin_main_file_in_a_lambda_names_its_package() {
        let code = guess(&[(
            &[
                "kotlin.reflect.jvm.internal.KClassImpl.toString",
                "bench.MainKt$main$1$2$9.invoke",
                "io.netty.channel.nio.NioEventLoop.run",
            ],
            5,
        )]);
        assert_eq!(code.prefixes, ["bench."]);
    }

    #[test]
    fn a_pool_threads_task_names_its_package() {
        let code = guess(&[
            (
                &[
                    "org.json.JSONObject.toString",
                    "shop.Pricing.quote",
                    "shop.Worker.run",
                    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                    "java.lang.Thread.run",
                ],
                4,
            ),
            // the library, outermost where the stack was cut
            (&["org.json.JSONObject.toString"], 6),
        ]);
        assert_eq!(code.prefixes, ["shop."]);
        assert_eq!(evidence_method(&code), "shop.Worker.run");
    }

    #[test]
    fn without_an_entry_point_the_outermost_package_that_is_no_dependency() {
        // handlers called by a framework a preset claims; `org.json` is called by the
        // program and never calls it back, so cut stacks that start in it do not make it
        // the program
        let code = guess(&[
            (
                &[
                    "org.json.JSONObject.toString",
                    "shop.ShopServer.handleQuote",
                    "sun.net.httpserver.ServerImpl$Exchange.run",
                ],
                3,
            ),
            (&["org.json.JSONObject.quote"], 5),
        ]);
        assert_eq!(code.name, "shop");
        assert_eq!(code.prefixes, ["shop."]);
        // 3 of 8
        let Evidence::JvmOutermost { weight, total, .. } = code.evidence else {
            panic!("{:?}", code.evidence);
        };
        assert_eq!((weight, total), (3, 8));
    }

    #[test]
    fn a_prefix_a_preset_claims_is_narrowed_to_the_package() {
        // the program is under the same vendor as a framework the presets know
        let claims = |f: &Frame| f.name.starts_with("com.acme.tools.");
        let p = profile(&[(&["com.acme.tools.Log.write", "com.acme.shop.Main.main"], 1)]);
        let Guess::Found(code) = own_code(&[p], &claims) else {
            panic!()
        };
        assert_eq!(code.prefixes, ["com.acme.shop."]);
    }

    #[test]
    fn the_main_class_of_a_command_line() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "perf record -F 499 -g -- java -XX:+PreserveFramePointer -cp classes:jars/* \
                 --add-opens java.base/java.nio=ALL-UNNAMED com.northwind.etl.Main 40",
                Some("com.northwind.etl.Main"),
            ),
            // JFR's Java arguments
            (
                "com.fernway.orders.ServerKt 8080",
                Some("com.fernway.orders.ServerKt"),
            ),
            (
                "org.apache.spark.deploy.SparkSubmit --master local[2] --class \
                 com.acme.Job app.jar",
                Some("com.acme.Job"),
            ),
            (
                "perf record -g -- spark-submit --class com.acme.Job app.jar",
                Some("com.acme.Job"),
            ),
            ("/usr/bin/java -jar app.jar", None),
            (
                "java -m com.acme.app/com.acme.app.Main",
                Some("com.acme.app.Main"),
            ),
            ("perf record -p 4242", None),
            ("Main", Some("Main")),
        ];
        for (command, want) in cases {
            assert_eq!(main_class(command).as_deref(), *want, "{command}");
        }
    }

    #[test]
    fn the_default_package_claims_the_class() {
        let code = guess(&[(&["Main$Worker.run", "Main.main"], 1)]);
        assert_eq!(code.prefixes, ["Main.", "Main$"]);
    }

    #[test]
    fn only_the_jdk_and_known_libraries_no_guess() {
        let p = profile(&[(
            &["java.lang.String.hashCode", "scala.collection.Seq.map"],
            1,
        )]);
        assert_eq!(own_code(&[p], &presets), Guess::Nothing);
    }
}
