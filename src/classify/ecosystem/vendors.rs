//! The third-party namespaces the presets list in their `vendors` tables (issue 53): code
//! that is never the program's own, whatever a profile suggests. A framework calls the
//! program (executors, event loops, UDFs, route handlers), so its frames are outermost where
//! the program's are expected; the lists are what keeps the own-code guesses
//! ([`super::jvm`], [`super::python`]) from naming a framework as the user's code, and what
//! names a listed namespace's product as its owner ([`super::jvm::java_vendor`]).
//!
//! The lists are read from every shipped preset, whichever a profile loads: a namespace is a
//! vendor's in every program.

use super::ECOSYSTEMS;
use crate::classify::rules::{self, Vendors};
use rustc_hash::FxHashMap;
use std::sync::LazyLock;

/// Every preset's `vendors` table, merged. The presets are compiled in and checked by the
/// tests, so a table that does not parse is a build mistake: it is skipped rather than
/// failing a user's run.
pub fn shipped() -> &'static Vendors {
    static SHIPPED: LazyLock<Vendors> = LazyLock::new(|| {
        let mut all = Vendors::default();
        // only the presets that have the table are parsed (a whole preset's TOML is a few
        // milliseconds)
        let with_table = (ECOSYSTEMS.iter()).filter(|e| e.rules.contains("\n[vendors]"));
        for ecosystem in with_table {
            let origin = ecosystem.origin();
            if let Ok(v) = rules::parse_vendors(ecosystem.rules, &origin) {
                all.prefix.extend(v.prefix);
                all.products.extend(v.products);
                all.package.extend(v.package);
            }
        }
        all
    });
    &SHIPPED
}

/// The listed JVM namespaces by their first segment, each with whether it is a vendor of
/// many products: a name is looked up by its root, not against every namespace (the guesses
/// ask once per distinct frame, and a JVM profile has hundreds of thousands).
fn jvm_index() -> &'static FxHashMap<String, Vec<(String, bool)>> {
    static INDEX: LazyLock<FxHashMap<String, Vec<(String, bool)>>> = LazyLock::new(|| {
        let v = shipped();
        let mut index: FxHashMap<String, Vec<(String, bool)>> = FxHashMap::default();
        let listed =
            (v.prefix.iter().map(|p| (p, false))).chain(v.products.iter().map(|p| (p, true)));
        for (prefix, products) in listed {
            let root = prefix.split('.').next().unwrap_or("").to_string();
            index
                .entry(root)
                .or_default()
                .push((prefix.clone(), products));
        }
        // the longest first, so the first that matches is the most specific
        for list in index.values_mut() {
            list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        }
        index
    });
    &INDEX
}

/// The most specific listed namespace `name` is under, and whether it is a vendor of many
/// products.
fn listed(name: &str) -> Option<(&'static str, bool)> {
    let root = name.split('.').next()?;
    jvm_index()
        .get(root)?
        .iter()
        .find(|(p, _)| name.starts_with(p.as_str()))
        .map(|(p, products)| (p.as_str(), *products))
}

/// The product of a JVM name under a listed namespace: `io.netty` for
/// `io.netty.channel.nio.NioEventLoop.run`, `org.apache.kafka` for a name under
/// `org.apache.`; `None` for a name under no listed namespace, or one directly under a
/// vendor of many products (`org.apache.Foo.bar`: no product segment).
pub fn jvm_product(name: &str) -> Option<String> {
    let (prefix, products) = listed(name)?;
    if !products {
        return Some(prefix.trim_end_matches('.').to_string());
    }
    let rest = &name[prefix.len()..];
    let segment = rest.split('.').next()?;
    let package = !segment.is_empty()
        && rest.len() > segment.len()
        && segment
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    package.then(|| format!("{prefix}{segment}"))
}

/// Whether a JVM name is under a listed namespace: never the program's own.
pub fn is_jvm_vendor(name: &str) -> bool {
    listed(name).is_some()
}

/// Whether a Python file named relative to `sys.path` (`jinja2/environment.py`) or by a
/// dotted module (`jinja2.environment`) is in a listed top-level package.
pub fn is_python_vendor(relative: &str) -> bool {
    let top = relative.split(['/', '.', '\\']).next().unwrap_or("");
    shipped().package.iter().any(|p| p == top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presets_list_vendors_that_parse() {
        for e in ECOSYSTEMS {
            let name = e.name;
            rules::parse_vendors(e.rules, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let v = shipped();
        assert!(v.prefix.iter().any(|p| p == "io.netty."));
        assert!(v.products.iter().any(|p| p == "org.apache."));
        assert!(v.package.iter().any(|p| p == "jinja2"));
        // every listed JVM namespace ends at a package boundary
        for p in v.prefix.iter().chain(&v.products) {
            assert!(p.ends_with('.'), "{p}");
        }
    }

    #[test]
    fn products_under_their_vendor() {
        assert_eq!(
            jvm_product("io.netty.channel.nio.NioEventLoop.run").as_deref(),
            Some("io.netty")
        );
        assert_eq!(
            jvm_product("org.apache.kafka.clients.Producer.send").as_deref(),
            Some("org.apache.kafka")
        );
        assert_eq!(
            jvm_product("scala.collection.immutable.List.map").as_deref(),
            Some("scala")
        );
        assert_eq!(jvm_product("org.apache.Foo.bar"), None);
        assert_eq!(jvm_product("com.northwind.etl.Main.main"), None);
        assert!(is_jvm_vendor(
            "org.apache.spark.util.Utils$.tryOrIOException"
        ));
        assert!(!is_jvm_vendor("shop.ShopServer.handle"));
        assert!(is_python_vendor("jinja2/environment.py"));
        assert!(!is_python_vendor("bookshop/views.py"));
    }

    /// Every namespace the presets list, put where the own-code guesses look hardest (the
    /// entry point `main`, the outermost frames under a thread root, a script's files), is
    /// never guessed as the program's (issue 53).
    #[test]
    fn no_listed_vendor_is_ever_guessed_as_the_program() {
        use crate::classify::ecosystem::detectors;
        use crate::model::{Frame, FrameKind, Profile, SampleType};
        let nothing_claimed = |_: &Frame| false;
        let v = shipped();
        for prefix in v.prefix.iter().chain(&v.products) {
            // a product under a vendor of many, a package under one of one
            let package = format!("{prefix}engine.core");
            let mut p = Profile::new(vec![SampleType::samples()]);
            let names = [
                format!("{package}.Executor.runTask"),
                format!("{package}.Launcher.main"),
                "java.lang.Thread.run".to_string(),
            ];
            let ids: Vec<_> = names
                .iter()
                .map(|n| p.intern_frame(Frame::named(n.as_str(), FrameKind::Jit)))
                .collect();
            let stack = p.intern_stack(&ids);
            p.add_sample(stack, None, &[10]);
            let guess = detectors::jvm_own_code(&[p], &nothing_claimed);
            assert!(
                !matches!(guess, crate::classify::guess::Guess::Found(_)),
                "{prefix}: {guess:?}"
            );
        }
        for package in &v.package {
            let mut p = Profile::new(vec![SampleType::samples()]);
            for file in [format!("{package}/core.py"), "main.py".to_string()] {
                p.intern_frame(Frame {
                    file: Some(file.into()),
                    ..Frame::named("run", FrameKind::Interpreted)
                });
            }
            let code = detectors::python_own_code(&[p], &nothing_claimed).expect("main.py");
            assert_eq!(code.files, ["main.py"], "{package}");
        }
    }
}
