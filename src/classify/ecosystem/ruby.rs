//! Ruby (MRI): the program's own files, guessed from the profile as Python's are, and gems as
//! third-party units (issue 57).
//!
//! rbspy names every Ruby frame with its source file (collapsed `name - /app/lib/x.rb:12`,
//! read by `names::rbspy_frame`; speedscope and pprof `file` fields); Ruby's C functions are
//! `(unknown) [c function]`, code of the VM's own Ruby `<internal:numeric>` (speedscope) or
//! `unknown` (collapsed). The program's own files are those the ruby preset does not claim
//! and that no gem holds: not the interpreter's library (`/usr/lib/ruby/3.1.0/...`), not a
//! gem's directory (`gems/rack-3.0.8/`, Debian's `rubygems-integration/.../gems/`,
//! `vendor_ruby/`, bundler's `bundler/gems/`).
//!
//! Templates are the program's code too, as Python's are: Tilt (Sinatra, Rails' views) compiles
//! a template into a method `__tilt_N` whose file is the template's (`views/page.erb`), so a
//! template of the program's tree is its code. rbspy's collapsed output loses that file
//! (`__tilt_1600 - unknown:21`); a compiled template without its file is then taken for the
//! program's, as templates almost always are (with their files, a gem's templates stay the
//! gem's).
//!
//! perf sees Ruby only as the VM's C code (`libruby.so`: `vm_exec_core`, `rb_*`): no method
//! and no file, so no own code can be found there; Ruby 3.3's `--yjit-perf` writes a perf map
//! of YJIT's code, which the perf map reader reads as a JIT's.

use super::row::{Ecosystem, Interpreter, Runtime};
use crate::classify::guess::{self, DeclineReason, Declined, Evidence, Guess, OwnCode};
use crate::classify::script_files;
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile};
use crate::names;
use std::collections::BTreeSet;

/// Ruby: `ruby.toml`, the program's files, gems by directory.
pub const ECOSYSTEM: Ecosystem = Ecosystem {
    interpreter: Some(Interpreter {
        runtime: Runtime::Ruby,
        is_module: is_ruby_module,
    }),
    ..Ecosystem::language(
        "ruby",
        include_str!("../../../rules/ruby.toml"),
        guesses,
        unit,
    )
};

/// The name prefixes of Tilt's compiled templates, in a method and in the blocks inside it.
const TEMPLATE_METHODS: &[&str] = &[
    "__tilt_",
    "block in __tilt_",
    "block (2 levels) in __tilt_",
    "block (3 levels) in __tilt_",
];

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    if let Some(code) = own_code(profiles, claimed_by_presets) {
        return vec![Guess::Found(code)];
    }
    // perf alone: the interpreter's C code, no Ruby method (see the module doc)
    let ruby_frames = (profiles.iter().flat_map(Profile::frames))
        .any(|f| f.file.as_deref().is_some_and(is_ruby_file));
    match guess::runtime_weight(profiles, &is_interpreter) {
        Some((runtime, weight, total)) if !ruby_frames => vec![Guess::Declined(Declined {
            unit: UnitKind::RubyFiles,
            reason: DeclineReason::NoLanguageFrames {
                runtime,
                weight,
                total,
            },
        })],
        _ => Vec::new(),
    }
}

/// A frame of the interpreter's native code: `libruby.so`, or a `ruby` executable.
fn is_interpreter(frame: &Frame) -> bool {
    frame.module.as_deref().is_some_and(is_ruby_module)
}

/// Whether `module` (a path or file name) is Ruby's interpreter: `libruby.so`, or a `ruby`
/// executable (`ruby`, Debian's `ruby3.1`).
pub fn is_ruby_module(module: &str) -> bool {
    let base = module.rsplit('/').next().unwrap_or(module);
    base.starts_with("libruby")
        || (base.strip_prefix("ruby"))
            .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

/// The program's Ruby files in `profiles`, or `None` when no frame is one.
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    let mut own: BTreeSet<&str> = BTreeSet::new();
    let mut others: BTreeSet<&str> = BTreeSet::new();
    for (frame, file) in script_files::frames_with_file(profiles, |_| true) {
        let script = frame.module.is_none() && is_script_without_extension(file);
        if frame.kind == FrameKind::Kernel || !(is_ruby_file(file) || script) {
            continue;
        }
        if claimed_by_presets(frame) || gem(file).is_some() {
            others.insert(file);
        } else {
            own.insert(file);
        }
    }
    let (dir, files, names) = script_files::own_files(&own, others)?;
    // a compiled template without its file (rbspy's collapsed `unknown`): by its name
    let templates = (profiles.iter().flat_map(Profile::frames)).any(|f| {
        is_template_method(&f.name) && f.file.as_deref().is_none_or(|file| file == "unknown")
    });
    let prefixes = match templates {
        true => TEMPLATE_METHODS.iter().map(|p| p.to_string()).collect(),
        false => Vec::new(),
    };
    Some(OwnCode {
        unit: UnitKind::RubyFiles,
        name: dir.clone(),
        prefixes,
        files,
        evidence: Evidence::RubyFiles {
            count: own.len(),
            dir,
            names: names.iter().map(|n| n.to_string()).collect(),
        },
        ..OwnCode::default()
    })
}

/// A method Tilt compiled from a template (`__tilt_1600`, `block in __tilt_1600`).
fn is_template_method(name: &str) -> bool {
    TEMPLATE_METHODS.iter().any(|p| name.starts_with(p))
}

/// Ruby source or a template, with a path: not the VM's pseudo-files (`<internal:numeric>`,
/// rbspy's `unknown`, `(eval)`).
fn is_ruby_file(file: &str) -> bool {
    !file.starts_with('<') && names::is_ruby_source(file)
}

/// A script named without an extension (`bin/worker`, `exe/tool`), as a Ruby frame with no
/// module names it: not the VM's pseudo-files (`unknown`, `(eval)`, `<internal:...>`).
fn is_script_without_extension(file: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    !base.is_empty()
        && !base.contains('.')
        && !file.starts_with(['<', '('])
        && file != "unknown"
        && file.contains('/')
}

/// The gem a file belongs to: `.../gems/rack-3.0.8/lib/rack.rb` → `rack` (rubygems, Debian's
/// `rubygems-integration/all/gems/`), `.../bundler/gems/rails-5f3a…/` → `rails` (a git
/// dependency), `/usr/lib/ruby/vendor_ruby/tilt/template.rb` → `tilt` (a Debian package
/// outside rubygems). Ruby's own `rubygems` and `bundler` in `vendor_ruby` are the VM's.
pub fn gem(path: &str) -> Option<String> {
    if let Some((_, rest)) = path.rsplit_once("/gems/") {
        let dir = rest.split('/').next()?;
        if rest.len() == dir.len() {
            return None; // a file directly in gems/: no gem's directory
        }
        let name = strip_version(dir)?;
        return is_gem_name(name).then(|| name.to_string());
    }
    let (_, rest) = path.rsplit_once("/vendor_ruby/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rb").unwrap_or(first);
    let vm = matches!(name, "rubygems" | "bundler");
    (is_gem_name(name) && !vm && !name.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .then(|| name.to_string())
}

/// `rack-3.0.8` → `rack`, `nokogiri-1.16.0-x86_64-linux` → `nokogiri`, `rails-5f3a9c1e2b3d` (a
/// bundler git checkout) → `rails`: the name is what comes before the first `-` followed by a
/// digit or by a hex revision.
fn strip_version(dir: &str) -> Option<&str> {
    let bytes = dir.as_bytes();
    let cut = (1..bytes.len()).find(|&i| {
        bytes[i - 1] == b'-'
            && (bytes[i].is_ascii_digit() || {
                let rest = &dir[i..];
                rest.len() >= 7 && rest.bytes().all(|b| b.is_ascii_hexdigit())
            })
    })?;
    Some(&dir[..cut - 1])
}

fn is_gem_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// A frame's gem, as an auto-owner's unit.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    let name = gem(frame.file.as_deref()?)?;
    Some(Unit {
        kind: UnitKind::RubyGem,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gems_by_directory() {
        let cases = [
            (
                "/srv/app/vendor/bundle/ruby/3.3.0/gems/rack-3.0.8/lib/rack.rb",
                Some("rack"),
            ),
            (
                "/usr/share/rubygems-integration/all/gems/rack-protection-3.0.5/lib/x.rb",
                Some("rack-protection"),
            ),
            (
                "/usr/lib/x86_64-linux-gnu/rubygems-integration/3.1.0/gems/puma-5.6.5/lib/puma/server.rb",
                Some("puma"),
            ),
            (
                "/gems/nokogiri-1.16.0-x86_64-linux/lib/n.rb",
                Some("nokogiri"),
            ),
            (
                "/b/ruby/3.3.0/bundler/gems/rails-5f3a9c1e2b3d/lib/r.rb",
                Some("rails"),
            ),
            ("/usr/lib/ruby/vendor_ruby/tilt/template.rb", Some("tilt")),
            ("/usr/lib/ruby/vendor_ruby/tilt.rb", Some("tilt")),
            ("/usr/lib/ruby/vendor_ruby/rubygems/specification.rb", None),
            ("/usr/lib/ruby/3.1.0/uri/rfc3986_parser.rb", None),
            ("/srv/app/lib/gems.rb", None),
            ("/tmp/app/app.rb", None),
        ];
        for (path, want) in cases {
            assert_eq!(gem(path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn program_files_templates_and_gems() {
        use crate::model::SampleType;
        let mut p = Profile::new(vec![SampleType::samples()]);
        let mut add = |name: &str, file: Option<&str>| {
            let f = p.intern_frame(Frame {
                file: file.map(Into::into),
                ..Frame::named(name, FrameKind::Interpreted)
            });
            let s = p.intern_stack(&[f]);
            p.add_sample(s, None, &[1]);
        };
        add("quote", Some("/srv/shop/lib/pricing.rb"));
        add("call", Some("/srv/shop/app.rb"));
        add(
            "route_eval",
            Some("/gems/sinatra-3.0.5/lib/sinatra/base.rb"),
        );
        add("parse", Some("/usr/lib/ruby/3.1.0/uri/rfc3986_parser.rb"));
        add("zero?", Some("<internal:numeric>"));
        add("block in __tilt_1600", Some("unknown"));
        let stdlib = |f: &Frame| {
            f.file
                .as_deref()
                .is_some_and(|f| f.starts_with("/usr/lib/ruby/"))
        };
        let code = own_code(&[p], &stdlib).expect("own files");
        assert_eq!(code.name, "/srv/shop");
        assert_eq!(code.files, ["/srv/shop/app.rb", "/srv/shop/lib/*"]);
        assert!(code.prefixes.iter().any(|p| p == "block in __tilt_"));
    }
}
