//! Name normalisation shared by every reader (docs/design.md "Frame names"), so that one rule works
//! for every input of an ecosystem: a Java method reads `io.ktor.server.Foo.bar` whether it
//! came from async-profiler, a perf map or a perf script dump; a C++ function reads
//! `idx::Index::add` without its return type and parameters; a py-spy frame reads
//! `json.decoder.JSONDecoder.raw_decode`.
//!
//! Each function here is pure and runs once per distinct raw name (readers cache), so clarity
//! wins over micro-optimisation. The module works on text alone and uses no other module of
//! the crate: it sits at the bottom of the layering with the model, and the readers and the
//! symboliser above both call it.

use std::borrow::Cow;

/// async-profiler's frame-type suffixes, also written by inferno's collapsers for kernel and
/// JIT frames. What each says about the frame is the reader's to decide (`input::folded` maps
/// them to frame kinds); in allocation profiles `_[i]` and `_[k]` mark the allocated class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeSuffix {
    /// `_[j]`: JIT-compiled (C2).
    Jit,
    /// `_[1]`: C1-compiled.
    C1,
    /// `_[i]`: inlined; on an allocated class, allocated in a new TLAB.
    Inlined,
    /// `_[k]`: kernel; on an allocated class, allocated outside a TLAB.
    Kernel,
    /// `_[0]`: interpreted.
    Interpreted,
}

/// Returns the name without its async-profiler type suffix and the suffix it had.
pub fn split_type_suffix(name: &str) -> (&str, Option<TypeSuffix>) {
    let bytes = name.as_bytes();
    if bytes.len() >= 4 && bytes[bytes.len() - 4] == b'_' && bytes[bytes.len() - 3] == b'[' {
        if bytes[bytes.len() - 1] != b']' {
            return (name, None);
        }
        let suffix = match bytes[bytes.len() - 2] {
            b'j' => TypeSuffix::Jit,
            b'1' => TypeSuffix::C1,
            b'i' => TypeSuffix::Inlined,
            b'k' => TypeSuffix::Kernel,
            b'0' => TypeSuffix::Interpreted,
            _ => return (name, None),
        };
        return (&name[..name.len() - 4], Some(suffix));
    }
    (name, None)
}

/// Whether an async-profiler frame is the allocated-class leaf of an allocation profile:
/// written with dots and suffixed `_[i]` (new TLAB) or `_[k]` (outside TLAB), e.g. `byte[]_[i]`,
/// `java.lang.String_[k]`. Method frames use slashes, and kernel frames such as
/// `finish_task_switch.isra.0_[k]` are not class names.
pub fn is_alloc_type(raw: &str) -> bool {
    let (base, suffix) = split_type_suffix(raw);
    if !matches!(suffix, Some(TypeSuffix::Inlined | TypeSuffix::Kernel)) {
        return false;
    }
    if base.contains('/') || base.contains(' ') {
        return false;
    }
    base.ends_with("[]")
        || base
            .rsplit_once('.')
            .is_some_and(|(_, last)| last.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// `io/ktor/server/Foo.bar` → `io.ktor.server.Foo.bar`. Only names that look like JVM class
/// paths are touched: Go's `net/http.(*conn).serve` and `github.com/x/y.F` keep their slashes
/// (their last path segment is a lower-case package name), and paths (`/usr/lib/...`) and
/// pseudo-frames (`[vdso]`) are left alone.
pub fn java_slashes_to_dots(name: &str) -> Option<String> {
    if !name.contains('/') || name.starts_with(['/', '[']) || name.contains([' ', '(', '*']) {
        return None;
    }
    let last = name.rsplit('/').next().unwrap_or(name);
    let first = name.split('/').next().unwrap_or(name);
    if first.contains('.') || !last.contains('.') {
        return None;
    }
    if !last.starts_with(|c: char| c.is_ascii_uppercase() || c == '$' || c == '_') {
        return None;
    }
    Some(name.replace('/', "."))
}

/// JVM names as perf maps and JVMTI agents write them:
/// `void shop.ShopServer.reply(com.sun.net.httpserver.HttpExchange, int)` (DumpPerfMapAtExit),
/// `Lio/ktor/Foo;::bar` and `io.ktor.Foo::bar` (perf-map-agent) all become `shop.ShopServer.reply`
/// / `io.ktor.Foo.bar`. VM stubs (`Interpreter`, `StubRoutines (1)`) are returned unchanged.
pub fn java_perf_map_name(sym: &str) -> String {
    java_name(sym).unwrap_or_else(|| sym.to_string())
}

/// The language of a perf map entry that is not the JVM's (issue 29): the same
/// `perf-PID.map` (and jitdump image) holds what node `--perf-basic-prof` and CPython 3.12+
/// `-X perf` / `-X perf_jit` write, which name a script's function with its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapLanguage {
    /// A JavaScript function (`JS:*name /app/a.js:12:3`, node before 12: `LazyCompile:`).
    JavaScript,
    /// V8's own code in the map: `Builtin:`, `BytecodeHandler:`, `Stub:`, `RegExp:`... stubs.
    V8Stub,
    /// A Python function through CPython's perf trampoline (`py::func:/app/app.py`).
    Python,
    /// A Ruby method YJIT compiled (Ruby 3.3+ `--yjit-perf`): `[JIT] label@path:line`
    /// ([`yjit_map_entry`]).
    Ruby,
    /// An Erlang or Elixir function of the BEAM's JIT (`+JPperf true`, OTP 24+):
    /// `$'Elixir.Shop.Orders':total/2` → `Elixir.Shop.Orders:total/2` ([`beam_map_name`]).
    Erlang,
}

/// A perf map entry of JavaScript or Python code, as whose names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    pub language: MapLanguage,
    /// JavaScript: the function (`(anonymous)` when V8 gives none); Python:
    /// `<module>.<function>` as py-spy frames are named; V8 stubs: the entry unchanged.
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// The C function a cgo stub stands for (issue 53): `main._Cfunc_sqlite3_step` (Go's side,
/// `.abi0` in perf), `github.com/mattn/go-sqlite3._Cfunc_sqlite3_exec`, `_C2func_` (calls that
/// return errno) and `_cgo_4a3b…_Cfunc_sqlite3_step` (the C side) → `sqlite3_step`; cgo's own
/// allocation helper `_Cfunc__CMalloc` → `malloc`. A Go CPU profile has no C frames, so the
/// stub is all it shows of the call: its owner is the C function's.
pub fn cgo_callee(name: &str) -> Option<&str> {
    let at = name.find("_Cfunc_").or_else(|| name.find("_C2func_"))?;
    let before = &name[..at];
    // the Go side ends its package with `.`; the C side is `_cgo_<hex>`
    let stub = before.ends_with('.')
        || before
            .strip_prefix("_cgo_")
            .is_some_and(|hex| hex.chars().all(|c| c.is_ascii_hexdigit()));
    if !stub {
        return None;
    }
    let rest = &name[at..];
    let rest = &rest[rest.find("func_")? + "func_".len()..];
    let callee = rest.strip_suffix(".abi0").unwrap_or(rest);
    if callee == "_CMalloc" {
        return Some("malloc");
    }
    let plain = !callee.is_empty()
        && !callee.starts_with('_')
        && callee
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then_some(callee)
}

/// V8's code tags in perf maps (`CodeEventListener` log names) for a script's functions.
const V8_FUNCTION_TAGS: &[&str] = &["JS", "LazyCompile", "Function", "Script", "Eval"];

/// V8's tags for its own generated code in perf maps.
const V8_STUB_TAGS: &[&str] = &[
    "Builtin",
    "BytecodeHandler",
    "Stub",
    "Handler",
    "RegExp",
    "KeyedLoadIC",
    "KeyedStoreIC",
    "LoadIC",
    "StoreIC",
    "LoadGlobalIC",
    "StoreGlobalIC",
    "Callback",
    "Interpreter",
    "Baseline",
    "Maglev",
    "Turbofan",
];

/// A perf map symbol written by node or CPython, or `None` (a JVM's, or anything else): the
/// JIT-map readers try this before [`java_perf_map_name`].
///
/// - node: `TAG:MARKname LOCATION` where TAG is one of [`V8_FUNCTION_TAGS`], MARK the tier
///   (`*` optimised, `~` interpreted, `^` baseline, `+` Maglev) and LOCATION `FILE:LINE:COL`
///   (`FILE:LINE` before node 12), FILE a path, `file://` URL or `node:` builtin module;
/// - CPython: `py::QUALNAME:FILE`.
pub fn perf_map_entry(sym: &str) -> Option<MapEntry> {
    if let Some(entry) = yjit_map_entry(sym) {
        return Some(entry);
    }
    if let Some(name) = beam_map_name(sym) {
        return Some(MapEntry {
            language: MapLanguage::Erlang,
            name,
            file: None,
            line: None,
        });
    }
    if let Some(rest) = sym.strip_prefix("py::") {
        let (func, file) = rest.rsplit_once(':').filter(|(f, _)| !f.is_empty())?;
        return Some(MapEntry {
            language: MapLanguage::Python,
            name: format!("{}.{}", python_module(file), func),
            file: Some(file.to_string()),
            line: None,
        });
    }
    let (tag, rest) = sym.split_once(':')?;
    if V8_STUB_TAGS.contains(&tag) {
        return Some(MapEntry {
            language: MapLanguage::V8Stub,
            name: sym.to_string(),
            file: None,
            line: None,
        });
    }
    if !V8_FUNCTION_TAGS.contains(&tag) {
        return None;
    }
    let rest = rest.trim_start_matches(['*', '~', '^', '+']);
    // the location is the last space-separated word (function names may hold spaces:
    // `get size`), when it looks like one
    let (name, location) = match rest.rsplit_once(' ') {
        Some((name, loc)) if looks_like_js_location(loc) => (name.trim(), Some(loc)),
        _ if looks_like_js_location(rest) && !rest.contains(' ') => ("", Some(rest)),
        _ => (rest.trim(), None),
    };
    let (file, line) = match location {
        None => (None, None),
        Some(loc) => {
            let (file, line) = split_js_location(loc);
            let file = file.strip_prefix("file://").unwrap_or(file);
            (Some(file.to_string()), line)
        }
    };
    Some(MapEntry {
        language: MapLanguage::JavaScript,
        name: if name.is_empty() { "(anonymous)" } else { name }.to_string(),
        file,
        line,
    })
}

/// A YJIT perf map entry (Ruby 3.3+ `--yjit-perf`, the default `iseq` map): YJIT names each
/// block of a method it compiled `[JIT] ` and the method's location as `rb_iseq` describes it,
/// `LABEL@PATH:LINE` (`[JIT] block in quote@/app/lib/pricing.rb:21`, `[JIT]
/// Integer#times@<internal:numeric>:237`): the method with its file, as rbspy names it. A
/// codegen map (`--yjit-perf=codegen`) names YJIT's own code generators (`[JIT] opt_plus`),
/// which are the VM's: kept as written. Read from the documented format; no Ruby with YJIT
/// perf maps could be recorded on this project's machine.
fn yjit_map_entry(sym: &str) -> Option<MapEntry> {
    let rest = sym.strip_prefix("[JIT] ")?;
    let located = rest.rsplit_once('@').and_then(|(label, location)| {
        let (file, line) = location.rsplit_once(':')?;
        let line: u32 = line.parse().ok()?;
        (!label.is_empty() && !file.is_empty()).then_some((label, file, line))
    });
    Some(match located {
        Some((label, file, line)) => MapEntry {
            language: MapLanguage::Ruby,
            name: label.to_string(),
            file: Some(file.to_string()),
            line: Some(line),
        },
        None => MapEntry {
            language: MapLanguage::Ruby,
            name: sym.to_string(),
            file: None,
            line: None,
        },
    })
}

/// The name of a BEAM JIT perf map entry (OTP 24+ with `+JPperf true`), or `None` for what is
/// not one. The map writes `$MODULE:FUNCTION/ARITY` with the module (and odd function names)
/// quoted as Erlang atoms: `$'Elixir.Shop.Orders':total/2`, `$lists:foldl/3`,
/// `$'Elixir.Enum':'-map/2-lists^map/1-0-'/2`; a function's entry as a second symbol with a
/// `-CodeInfoPrologue` suffix; a module's own code as `$Elixir.Shop.Parser::codeHeader`
/// (unquoted), and the emulator's shared stubs as `$global::call_light_bif_shared`. whose names
/// them `Elixir.Shop.Orders:total/2` (the module unquoted, so that one prefix rule claims a
/// module in every form), the prologue as its function, `Elixir.Shop.Parser::codeHeader` and
/// `global::call_light_bif_shared` as written.
pub fn beam_map_name(sym: &str) -> Option<String> {
    let rest = sym.strip_prefix('$')?;
    let (module, after) = match rest.strip_prefix('\'') {
        Some(quoted) => {
            let end = quoted.find('\'')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = rest.find(':')?;
            (&rest[..end], &rest[end..])
        }
    };
    if module.is_empty() || module.contains([' ', '(', '/']) {
        return None;
    }
    if let Some(label) = after.strip_prefix("::") {
        let plain = !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        return plain.then(|| format!("{module}::{label}"));
    }
    let function = after.strip_prefix(':')?;
    let function = function
        .strip_suffix("-CodeInfoPrologue")
        .unwrap_or(function);
    let (_, arity) = function.rsplit_once('/')?;
    let arity_ok =
        !arity.is_empty() && arity.len() <= 3 && arity.bytes().all(|b| b.is_ascii_digit());
    arity_ok.then(|| format!("{module}:{function}"))
}

/// A script location as V8 writes it: a path, URL or `node:` module, with `:LINE[:COL]`.
fn looks_like_js_location(s: &str) -> bool {
    let (file, _) = split_js_location(s);
    !file.is_empty()
        && (file.contains('/')
            || file.starts_with("node:")
            || file.ends_with(".js")
            || file.ends_with(".mjs")
            || file.ends_with(".cjs"))
}

/// `FILE:LINE:COL` → (FILE, LINE); `FILE:LINE` → (FILE, LINE); `FILE` → (FILE, None).
fn split_js_location(s: &str) -> (&str, Option<u32>) {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let Some((head, last)) = s.rsplit_once(':').filter(|(_, l)| digits(l)) else {
        return (s, None);
    };
    match head.rsplit_once(':').filter(|(_, l)| digits(l)) {
        Some((file, line)) => (file, line.parse().ok()),
        None => (head, last.parse().ok()),
    }
}

/// The Java ecosystem's normaliser: every JVM method name form in the wild read as
/// `pkg.Cls.method` (docs/design.md "Frame names"), or `None` when `sym` is not a Java name.
///
/// - type descriptors from perf maps: `Lio/netty/Foo;::bar`, `Lio/netty/Foo;.bar`,
///   `Lio/netty/Foo;.bar(Ljava/lang/String;)V`, and signature-only `Lorg/x/gen/File__123;`
///   (a generated class, read as `org.x.gen.File__123`: a class name, not a VM stub);
/// - the same after stackcollapse-perf/inferno tidied them (`;` → `:`, leading `L` dropped for
///   `java` processes): `Lio/netty/X:::run`, `io/netty/Baz:::qux`, `pkg/Foo:.bar`;
/// - async-profiler's `io/ktor/Foo.bar`, perf-map-agent's `io.ktor.Foo::bar` and
///   DumpPerfMapAtExit's `void shop.A.b(int)`.
///
/// C++ names (`Thread::call_run`, `std::vector<int>::push_back`) are not Java: only a class
/// written as a JVM path (slashes, or dots between Java identifiers) qualifies.
pub fn java_name(sym: &str) -> Option<String> {
    java_descriptor_name(sym)
        .or_else(|| java_slashes_to_dots(sym))
        .or_else(|| java_agent_name(sym))
        .or_else(|| java_signature_name(sym))
}

/// A Java identifier as the JVM spells class and method names (hidden classes add `+0x..`,
/// lambdas `$`, constructors `<init>`).
fn is_java_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '<' | '>' | '+'))
}

/// `Lpkg/Cls;` + (`::m` | `.m` | nothing) + optional descriptor, as perf maps write it, and
/// the stackcollapse forms where `;` became `:` and the `L` may be gone.
fn java_descriptor_name(sym: &str) -> Option<String> {
    let (class, rest) = match sym.split_once(';') {
        Some((class, rest)) => (class.strip_prefix('L')?, rest),
        None => {
            // collapsed: `[L]pkg/Cls:` + `::m` | `.m` | end; the class needs a slash
            let colon = sym.find(':')?;
            let class = &sym[..colon];
            let class = class
                .strip_prefix('L')
                .filter(|c| c.contains('/'))
                .unwrap_or(class);
            if !class.contains('/') {
                return None;
            }
            (class, &sym[colon + 1..])
        }
    };
    // `<>` only in method names (`<init>`): a C++ template argument with a slash is no class
    if !class
        .split('/')
        .all(|c| is_java_ident(c) && !c.contains(['<', '>']))
    {
        return None;
    }
    let class = class.replace('/', ".");
    let method = match rest.strip_prefix("::").or_else(|| rest.strip_prefix('.')) {
        Some(m) => m.split('(').next().unwrap_or(m),
        None if rest.is_empty() => return Some(class),
        None => return None,
    };
    is_java_ident(method).then(|| format!("{class}.{method}"))
}

/// perf-map-agent: `pkg.Cls::method` (optionally with a descriptor); every dotted segment a
/// Java identifier, so a module-prefixed C++ name (`libjvm.so.Thread::call_run`) is not one.
fn java_agent_name(sym: &str) -> Option<String> {
    let (class, method) = sym.split_once("::")?;
    if !class.contains('.') || split_module_prefix(sym).is_some() {
        return None;
    }
    let method = method.split('(').next().unwrap_or(method);
    (class.split('.').all(is_java_ident) && is_java_ident(method))
        .then(|| format!("{class}.{method}"))
}

/// DumpPerfMapAtExit: `<return type> <qualified.method>(<params>)`, and the same without its
/// parameters as stackcollapse-perf writes it (`void orders.MainKt.main`,
/// `java.util.List orders.MainKt.makeLines`), where the return type must then read as a Java
/// type by itself (a primitive or a qualified class), so that no C declaration passes.
fn java_signature_name(sym: &str) -> Option<String> {
    let head = match sym.split_once('(') {
        Some((head, _params)) => head,
        None => {
            let (ret, _) = sym.rsplit_once(' ')?;
            const PRIMITIVES: &[&str] = &[
                "void", "boolean", "byte", "char", "short", "int", "long", "float", "double",
            ];
            let element = ret.trim_end_matches("[]");
            if !PRIMITIVES.contains(&element) && !element.contains('.') {
                return None;
            }
            sym
        }
    };
    let (ret, method) = head.rsplit_once(' ')?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '[' | ']' | '<' | '>')
            })
    };
    // hidden classes (lambdas, LambdaForms) carry `/0x<address>` in their name:
    // `shop.Pricing$$Lambda$43/0x00007f1044014f20.test`
    let method_ok = plain(&method.replace('/', ""));
    (plain(ret) && method_ok && method.contains('.') && !method.contains("::"))
        .then(|| method.to_string())
}

/// perf-map-agent's inline chains, `Lio/netty/Foo;::read->Ljava/io/PrintStream;::print`: the
/// physical caller first, then the methods inlined into it, innermost last — split at each
/// `->` as stackcollapse-perf and inferno do. A C++ `operator->` and Rust's `fn() -> T` are no
/// chain: only a `->` outside brackets with no space around it splits. `None` for one frame.
pub fn split_inline_chain(sym: &str) -> Option<Vec<&str>> {
    if !sym.contains("->") {
        return None;
    }
    let bytes = sym.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'>' if i == 0 || bytes[i - 1] != b'-' => depth -= 1,
            b'-' if depth == 0
                && bytes.get(i + 1) == Some(&b'>')
                && i > start
                && !sym[start..i].ends_with([' ', '-'])
                && !sym[..i].ends_with("operator")
                && bytes.get(i + 2).is_some_and(|&b| b != b' ') =>
            {
                parts.push(&sym[start..i]);
                start = i + 2;
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if parts.is_empty() {
        return None;
    }
    parts.push(&sym[start..]);
    Some(parts)
}

/// A name prefixed with the shared object it lives in, as some collapsers write native frames
/// of a JVM: `libjvm.so.Thread::call_run` → (`libjvm.so`, `Thread::call_run`),
/// `libc.so.6.malloc` → (`libc.so.6`, `malloc`). The name part must not be empty.
pub fn split_module_prefix(sym: &str) -> Option<(&str, &str)> {
    let at = find_bytes(sym, b".so.")?;
    let module_end = at + ".so".len();
    if at == 0 || sym[..at].contains([' ', '(', '<', ':', '/']) {
        return None;
    }
    // version numbers after `.so` belong to the module: `libc.so.6.malloc`
    let mut end = module_end;
    while let Some(rest) = sym[end..].strip_prefix('.') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || !rest[digits..].starts_with('.') {
            break;
        }
        end += 1 + digits;
    }
    let name = &sym[end + 1..];
    name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        .then(|| (&sym[..end], name))
}

/// Kotlin/Native: `kfun:io.ktor.utils.io.ByteChannel#readByte(){}kotlin.Byte` →
/// `io.ktor.utils.io.ByteChannel.readByte`, so Kotlin prefix rules work on JVM and native alike.
pub fn kotlin_native_name(sym: &str) -> Option<String> {
    let rest = sym
        .strip_prefix("kfun:")
        .or_else(|| sym.strip_prefix("kclass:"))?;
    let rest = rest.split(['(', '{']).next().unwrap_or(rest);
    let name = rest.trim_start_matches('#').replace('#', ".");
    Some(if name.is_empty() {
        rest.to_string()
    } else {
        name
    })
}

/// Strips a C++ function's parameter list and cv-qualifiers as perf prints them
/// (`idx::Index::add(std::string const&) const` → `idx::Index::add`,
/// `thread_entry(JavaThread*, Thread*)` → `thread_entry`), and a leading return type when a
/// demangler left one (`void idx::Index::add(...)`). Names without a parameter list are
/// returned unchanged.
pub fn strip_cpp_signature(name: &str) -> &str {
    let trimmed = name
        .trim_end_matches(" const")
        .trim_end_matches(" volatile")
        .trim_end_matches(" &&")
        .trim_end_matches(" &");
    if !trimmed.ends_with(')') {
        return name;
    }
    let Some(open) = matching_open_paren(trimmed) else {
        return name;
    };
    let head = &trimmed[..open];
    if head.is_empty() || head.ends_with("operator") || head.ends_with("anonymous namespace") {
        return name;
    }
    // without `::`, only a plain C identifier right before the list: `thread_entry(...)`,
    // not a VM stub such as `StubRoutines (1)` nor Go's `main.(*T).m`
    let plain_function = head.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && head.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    if !name.contains("::") && !plain_function {
        return name;
    }
    strip_return_type(head)
}

/// Finds the `(` that opens the last top-level parenthesised group of `s` (which ends in `)`).
fn matching_open_paren(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' | '>' | ']' => depth += 1,
            '(' | '<' | '[' => {
                depth -= 1;
                if depth == 0 && c == '(' {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `void ns::f` → `ns::f`; `std::vector<int> ns::g` → `ns::g`: the name is what follows the
/// last space outside template brackets, unless that space belongs to `operator new` & co.
fn strip_return_type(head: &str) -> &str {
    let mut depth = 0i32;
    let mut cut = None;
    for (i, c) in head.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ' ' if depth == 0 => cut = Some(i),
            _ => {}
        }
    }
    match cut {
        Some(i) if !head[..i].ends_with("operator") && !head[i + 1..].is_empty() => {
            let rest = &head[i + 1..];
            // `foo::operator new` must keep its `operator` word
            if head[..i].ends_with("::operator") {
                head
            } else {
                rest
            }
        }
        _ => head,
    }
}

/// The Rust ecosystem's normaliser: mangled symbols (legacy `_ZN..17h<hash>E` and v0 `_R..`)
/// demangled with the hash dropped, and legacy symbols that perf left half-demangled
/// (`_$LT$core..option..Option$LT$T$GT$$GT$::map`) decoded to `<core::option::Option<T>>::map`.
/// A linker suffix (`@plt`) is kept. `None` when `sym` is no Rust symbol.
pub fn rust_name(sym: &str) -> Option<String> {
    let (core, suffix) = split_linker_suffix(sym);
    if let Ok(d) = rustc_demangle::try_demangle(core) {
        return Some(format!("{d:#}{suffix}"));
    }
    rust_half_demangled(core).map(|d| d + suffix)
}

/// The escapes of legacy Rust mangling (`$LT$` = `<`, `$u20$` = space...) that mark a name
/// perf printed half-demangled.
const RUST_LEGACY_ESCAPES: &[&str] = &[
    "$LT$", "$GT$", "$C$", "$RF$", "$BP$", "$SP$", "$LP$", "$RP$", "$u20$", "$u27$", "$u5b$",
    "$u5d$", "$u7b$", "$u7d$", "$u7e$", "$u3b$", "$u2b$", "$u21$", "$u22$", "$u3d$",
];

/// Whether `sym` holds one of [`RUST_LEGACY_ESCAPES`]: each starts with `$`, so only the
/// places of a `$` are tried (JVM names have `$` in lambdas and inner classes, and twenty
/// substring searches a name were most of the time `--each` spent normalising).
fn has_legacy_escape(sym: &str) -> bool {
    memchr::memchr_iter(b'$', sym.as_bytes()).any(|at| {
        let rest = &sym.as_bytes()[at..];
        RUST_LEGACY_ESCAPES
            .iter()
            .any(|e| rest.starts_with(e.as_bytes()))
    })
}

/// Where `needle` first is in `hay`: a window scan, for the short needles and names here
/// (`str::find` builds a substring searcher per call).
fn find_bytes(hay: &str, needle: &[u8]) -> Option<usize> {
    hay.as_bytes()
        .windows(needle.len())
        .position(|w| w == needle)
}

/// Re-encodes a half-demangled legacy name (`::` between path segments, `..` and `$..$`
/// escapes inside them) as the `_ZN<len><segment>...E` symbol it came from and lets
/// rustc-demangle decode it, so every escape it knows is decoded exactly as it decodes it.
/// Names without an escape are left alone (Go's `type..eq.main.T` has `..` too), and a decoded
/// name that still holds a `$` was not Rust after all.
fn rust_half_demangled(sym: &str) -> Option<String> {
    let escaped = has_legacy_escape(sym)
        || (find_bytes(sym, b"..").is_some()
            && find_bytes(sym, b"::").is_some()
            && !sym.contains(['<', ' ']));
    if !escaped || sym.contains([' ', '(', '<', '>', ',', ';']) {
        return None;
    }
    let mut mangled = String::with_capacity(sym.len() + 16);
    mangled.push_str("_ZN");
    for segment in sym.split("::") {
        if segment.is_empty() {
            return None;
        }
        mangled.push_str(&segment.len().to_string());
        mangled.push_str(segment);
    }
    mangled.push('E');
    let decoded = format!("{:#}", rustc_demangle::try_demangle(&mangled).ok()?);
    (!decoded.contains('$')).then_some(decoded)
}

/// `malloc@plt` → (`malloc`, `@plt`); `memcpy@@GLIBC_2.14` → (`memcpy`, `@@GLIBC_2.14`): the
/// linker's suffixes, which demanglers do not accept and which say where the frame is (a PLT
/// stub), so they are split off before demangling and put back after.
fn split_linker_suffix(sym: &str) -> (&str, &str) {
    match sym.find('@') {
        Some(at) if at > 0 && !sym[at..].contains([' ', '(', ')', '<', '>']) => {
            (&sym[..at], &sym[at..])
        }
        _ => (sym, ""),
    }
}

/// The C++ ecosystem's normaliser for mangled (Itanium) symbols: demangled without return
/// type and parameters (as perf prints them), a linker suffix (`@plt`) kept. Where
/// cpp_demangle rejects the whole symbol — it does not parse GCC's `sr St <name>` template
/// expressions, found in libstdc++'s `enable_if` return types
/// (`_ZSt14__relocate_a_1IN3idx7PostingES1_ENSt9enable_ifIXsrSt24__is_bitwise_relocatable...`)
/// — the function's name is demangled on its own, since return type and parameters are
/// dropped anyway. `None` when `sym` is not mangled or cannot be read either way (see
/// [`is_still_mangled`]).
pub fn cpp_mangled_name(sym: &str) -> Option<String> {
    let (core, suffix) = split_linker_suffix(sym);
    // the C++ demangler has had stack-overflow bugs on hostile input: long names stay as is
    if !core.starts_with("_Z") || core.len() >= 4096 {
        return None;
    }
    let options = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    let name_of = |mangled: &str| {
        cpp_demangle::Symbol::new(mangled)
            .ok()?
            .demangle_with_options(&options)
            .ok()
    };
    let demangled = name_of(core).or_else(|| {
        // `_Z <name> <types>`: the longest prefix that reads as `_Z <name>` of a `void`
        // function names the function; bounded so a hostile name costs little
        if core.len() > 1024 {
            return None;
        }
        (4..core.len()).rev().find_map(|end| {
            core.is_char_boundary(end)
                .then(|| name_of(&format!("{}v", &core[..end])))
                .flatten()
        })
    })?;
    Some(demangled + suffix)
}

/// Whether a normalised name is still a mangled C++ or Rust symbol: the demanglers gave up on
/// it, so no name rule can match it. Readers count such frames and warn.
pub fn is_still_mangled(name: &str) -> bool {
    let (core, _) = split_linker_suffix(name);
    let bytes = core.as_bytes();
    (core.starts_with("_Z") || core.starts_with("_R"))
        && bytes.len() > 3
        && bytes[2].is_ascii_alphanumeric()
        && core
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$'))
}

/// The C++ ecosystem's normaliser for printed names: a parameter list and return type dropped
/// (`void idx::Index::add(std::string const&) const` → `idx::Index::add`), also on a plain
/// function with C++ parameters (`thread_entry(JavaThread*, Thread*)` → `thread_entry`), and
/// a shared-object prefix dropped (`libjvm.so.Thread::call_run` → `Thread::call_run`).
pub fn cpp_printed_name(sym: &str) -> &str {
    let name = split_module_prefix(sym).map_or(sym, |(_, name)| name);
    strip_cpp_signature(name)
}

/// The normalised name of a symbol of unknown origin (perf script, folded text, ELF symbol
/// tables): one ecosystem normaliser after the other, the unambiguous forms first — mangled
/// Rust and C++, Kotlin/Native, Java — then printed C++ signatures, then Rust hashes.
pub fn normalize_symbol(sym: &str) -> Cow<'_, str> {
    if is_plain_symbol(sym) {
        // borrowed: a short name then goes into a frame without an allocation
        return Cow::Borrowed(sym);
    }
    Cow::Owned(normalize_any_symbol(sym))
}

/// Whether no normaliser below would change `sym`: letters, digits, `_` and `.` only (no
/// `:`, `/`, `(`, ` `, `$`, `;`, `@` that a Java, C++, Kotlin or linker form needs), not a
/// shared object prefix (`.so.`), and not starting as a mangled name may (`_Z`, `ZN`, `_R`,
/// `R`). Most frames of C, Go and Python read this way, and a profile of a million distinct
/// frames then pays a byte scan for each, not a search for every form (issue 24).
pub fn is_plain_symbol(sym: &str) -> bool {
    let bytes = sym.as_bytes();
    if sym.starts_with(['_', 'Z', 'R']) {
        return false;
    }
    // one pass, `.so.` looked for at each dot only (a window scan cost as much again, and
    // `str::contains` builds a substring searcher per call)
    bytes.iter().enumerate().all(|(i, &b)| match b {
        b'.' => !bytes[i + 1..].starts_with(b"so."),
        _ => b.is_ascii_alphanumeric() || b == b'_',
    })
}

/// [`normalize_symbol`] without its shortcut: every normaliser in turn.
fn normalize_any_symbol(sym: &str) -> String {
    if let Some(d) = rust_name(sym).or_else(|| cpp_mangled_name(sym)) {
        return d;
    }
    if let Some(k) = kotlin_native_name(sym) {
        return k;
    }
    if let Some(j) = java_name(sym) {
        return j;
    }
    strip_rust_hash(cpp_printed_name(sym)).to_string()
}

/// `logcrunch::worker::h0123456789abcdef` → `logcrunch::worker` (already-demangled legacy
/// names as some tools print them).
pub fn strip_rust_hash(name: &str) -> &str {
    if let Some((head, hash)) = name.rsplit_once("::h")
        && hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return head;
    }
    name
}

/// What a py-spy frame is: Python code, or (with `--native`) machine code, symbolised or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyFrameKind {
    /// `func (path/mod.py:line)`: a Python function.
    Python,
    /// `deflate (libz.so.1.2.13)` or, with debug info, `encoder_call (_json.c:1305)`.
    Native,
    /// `0x7fc4974c324a (libc.so.6)`: an address py-spy found no symbol for.
    Unresolved,
}

/// A py-spy frame split into its parts. Python frames are named `module.func` with their
/// file and line; native frames keep their (normalised) symbol, with the library as module
/// or the C source file as file.
#[derive(Debug)]
pub struct PyFrame {
    pub kind: PyFrameKind,
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub module: Option<String>,
}

/// A Ruby source or template file, by its name: `.rb`, `config.ru`, `.rake`, ERB, Haml, Slim
/// and the other templates Tilt compiles, `Rakefile`, `Gemfile`. The one list the rbspy
/// frame reader and the ruby ecosystem's own-code guess share.
pub fn is_ruby_source(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".rb",
        ".ru",
        ".rake",
        ".erb",
        ".haml",
        ".slim",
        ".builder",
        ".jbuilder",
        ".liquid",
        ".mustache",
    ];
    let base = file.rsplit('/').next().unwrap_or(file);
    EXTENSIONS.iter().any(|e| base.ends_with(e)) || matches!(base, "Rakefile" | "Gemfile")
}

/// A Ruby frame as rbspy's collapsed output writes it (`--format collapsed`, issue 57):
/// `NAME - FILE:LINE`, `block in quote - /app/lib/pricing.rb:21`; the VM's C functions
/// `(unknown) [c function] - (unknown)`, the VM's own Ruby (`<internal:...>` code) and eval'd
/// code `zero? - unknown:229`. Returns the name, the file (none for `(unknown)`) and the line;
/// `None` where the text after the last ` - ` is no Ruby location, so other names holding
/// ` - ` keep their meaning.
pub fn rbspy_frame(raw: &str) -> Option<(&str, Option<&str>, Option<u32>)> {
    let (name, location) = raw.rsplit_once(" - ")?;
    if name.is_empty() {
        return None;
    }
    if location == "(unknown)" {
        return Some((name, None, None));
    }
    // rbspy always writes a line; a location without one is taken when it names a Ruby file
    let (file, line) = match location.rsplit_once(':') {
        Some((file, line)) if line.bytes().all(|b| b.is_ascii_digit()) => (file, line.parse().ok()),
        _ => (location, None),
    };
    let base = file.rsplit('/').next().unwrap_or(file);
    let ruby = is_ruby_source(file)
        || file == "unknown"
        || file == "(eval)"
        || file.starts_with("<internal:")
        // a script without an extension (`bin/worker`), with its line
        || (file.contains('/') && line.is_some() && !base.contains('.') && !file.contains(' '));
    let vague = matches!(file, "unknown" | "(eval)");
    (ruby && (line.is_some() || !vague)).then_some((name, Some(file), line))
}

/// Parses one frame of py-spy's output, `NAME (LOCATION)` where LOCATION is `FILE:LINE` or a
/// bare `FILE`. py-spy prints every frame this way, Python or native (`--native`), so the
/// location says which it is: a Python source file (`.py`, `<frozen ...>`, `<string>`) or a
/// file with a line that is not C-like source is Python; a C/C++/Rust/Cython source file is
/// native code with debug info; anything else is the library the native frame lives in (`?`
/// when py-spy did not know). A speedscope file gives native frames line 0, which means none.
pub fn pyspy_frame(raw: &str) -> Option<PyFrame> {
    let body = raw.strip_suffix(')')?;
    let open = body.rfind(" (")?;
    let (func, location) = (&body[..open], &body[open + 2..]);
    if location.contains(['(', ')']) {
        return None;
    }
    let (file, line) = match location.rsplit_once(':') {
        Some((f, l)) if l.bytes().all(|b| b.is_ascii_digit()) && !l.is_empty() => {
            (f, l.parse::<u32>().ok())
        }
        _ => (location, None),
    };
    let real_line = line.filter(|&l| l > 0);
    let module = (file != "?" && !file.is_empty()).then(|| file.to_string());
    if is_hex_address(func) && !is_python_source(file) {
        return Some(PyFrame {
            kind: PyFrameKind::Unresolved,
            // `model::UNKNOWN`'s text: `names` sits beside `model` in the layers, not above it
            name: "[unknown]".to_string(),
            file: None,
            line: None,
            module,
        });
    }
    if is_native_source(file) {
        return Some(PyFrame {
            kind: PyFrameKind::Native,
            name: normalize_symbol(func).into_owned(),
            file: Some(file.to_string()),
            line: real_line,
            module: None,
        });
    }
    if is_python_source(file) || real_line.is_some() {
        return Some(PyFrame {
            kind: PyFrameKind::Python,
            name: format!("{}.{}", python_module(file), func),
            file: Some(file.to_string()),
            line,
            module: None,
        });
    }
    Some(PyFrame {
        kind: PyFrameKind::Native,
        name: normalize_symbol(func).into_owned(),
        file: None,
        line: None,
        module,
    })
}

/// `0x7fc4974c324a`: how py-spy names a native frame it has no symbol for.
fn is_hex_address(name: &str) -> bool {
    name.strip_prefix("0x")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A source file py-spy's `func (FILE:LINE)` form can name: Python code or compiled code with
/// debug info. The folded reader takes such a frame as py-spy's in any folded file, so that
/// `convert --to folded` can write a frame's source file (which rules match on) and get it back.
pub fn is_source_file(file: &str) -> bool {
    is_python_source(file) || is_native_source(file)
}

/// A file py-spy names for Python code: a source file, or CPython's pseudo-files
/// (`<frozen importlib._bootstrap>`, `<string>`, `<stdin>`).
fn is_python_source(file: &str) -> bool {
    file.starts_with('<') || [".py", ".pyw"].iter().any(|ext| file.ends_with(ext))
}

/// A source file of compiled code, as DWARF names it for a `--native` frame with debug info
/// (`_json.c`, `_hashopenssl.c.h`, `object.h`, `lib.rs`, Cython's `.pyx`).
fn is_native_source(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "inc", "inl", "ipp", "tcc", "rs",
        "s", "S", "asm", "pyx", "pxd", "pxi", "f", "f90", "cu", "m", "mm", "go", "zig",
    ];
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    base.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext))
}

/// The Python module a source file belongs to: `json/decoder.py` → `json.decoder`,
/// `/usr/lib/python3.11/json/__init__.py` → `json`, `<frozen importlib._bootstrap>` →
/// `importlib._bootstrap`, `/srv/app/app.py` (outside the stdlib and site-packages) → `app`.
pub fn python_module(path: &str) -> String {
    if let Some(inner) = path
        .strip_prefix("<frozen ")
        .and_then(|p| p.strip_suffix('>'))
    {
        return inner.to_string();
    }
    let stripped = if let Some((_, after)) = path.rsplit_once("site-packages/") {
        after.to_string()
    } else if let Some((_, after)) = path.rsplit_once("dist-packages/") {
        after.to_string()
    } else {
        strip_python_lib(path)
    };
    let stripped = if stripped == path && path.starts_with('/') {
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        if parts.last() == Some(&"__init__.py") && parts.len() >= 2 {
            parts[parts.len() - 2..].join("/")
        } else {
            parts.last().copied().unwrap_or(path).to_string()
        }
    } else {
        stripped
    };
    let no_ext = stripped.strip_suffix(".py").unwrap_or(&stripped);
    let module = no_ext.trim_matches('/').replace('/', ".");
    module
        .strip_suffix(".__init__")
        .map(str::to_string)
        .unwrap_or(module)
}

/// Drops everything up to `lib/pythonX.Y/` (the stdlib root).
fn strip_python_lib(path: &str) -> String {
    let mut search = 0;
    while let Some(pos) = path[search..].find("lib/python") {
        let start = search + pos;
        let after = &path[start + "lib/python".len()..];
        let version_len = after
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if version_len > 0 && after[version_len..].starts_with('/') {
            let preceded_ok = start == 0 || path.as_bytes()[start - 1] == b'/';
            if preceded_ok {
                return after[version_len + 1..].to_string();
            }
        }
        search = start + 1;
    }
    path.to_string()
}

#[cfg(test)]
mod tests {

    /// The BEAM JIT's map entries as OTP 25 wrote them for the eco57 fixtures.
    #[test]
    fn perf_map_entries_of_the_beam() {
        let cases = [
            (
                "$'Elixir.Shop.Pricing':handle_call/3",
                Some("Elixir.Shop.Pricing:handle_call/3"),
            ),
            (
                "$'Elixir.Shop.Catalog':lookup/1-CodeInfoPrologue",
                Some("Elixir.Shop.Catalog:lookup/1"),
            ),
            (
                "$'Elixir.Enum':'-map/2-lists^map/1-0-'/2",
                Some("Elixir.Enum:'-map/2-lists^map/1-0-'/2"),
            ),
            (
                "$inventory_calc:reorder_point/3",
                Some("inventory_calc:reorder_point/3"),
            ),
            (
                "$Elixir.Shop.Risk::codeHeader",
                Some("Elixir.Shop.Risk::codeHeader"),
            ),
            (
                "$global::call_light_bif_shared",
                Some("global::call_light_bif_shared"),
            ),
            (
                "$erts_beamasm:normal_exit/0",
                Some("erts_beamasm:normal_exit/0"),
            ),
            // not the BEAM's: a JVM's or V8's, or a shell variable
            ("Lcom/acme/Main;::main", None),
            ("JS:*handler /app/a.js:3", None),
            ("$HOME", None),
            ("$x:y", None),
        ];
        for (sym, want) in cases {
            assert_eq!(beam_map_name(sym).as_deref(), want, "{sym}");
        }
        let entry = perf_map_entry("$lists:foldl/3").unwrap();
        assert_eq!(entry.language, MapLanguage::Erlang);
    }

    /// YJIT's map entries in the documented `iseq` form, and a codegen map's.
    #[test]
    fn perf_map_entries_of_yjit() {
        let e = perf_map_entry("[JIT] block in quote@/app/lib/pricing.rb:21").unwrap();
        assert_eq!(e.language, MapLanguage::Ruby);
        assert_eq!(e.name, "block in quote");
        assert_eq!(e.file.as_deref(), Some("/app/lib/pricing.rb"));
        assert_eq!(e.line, Some(21));
        let e = perf_map_entry("[JIT] Integer#times@<internal:numeric>:237").unwrap();
        assert_eq!(
            (e.name.as_str(), e.file.as_deref()),
            ("Integer#times", Some("<internal:numeric>"))
        );
        let e = perf_map_entry("[JIT] opt_plus").unwrap();
        assert_eq!((e.name.as_str(), e.file), ("[JIT] opt_plus", None));
    }

    /// rbspy 0.55's collapsed frames (Ruby 3.1).
    #[test]
    fn rbspy_collapsed_frames() {
        let cases = [
            (
                "block in quote - /tmp/app/lib/pricing.rb:21",
                Some(("block in quote", Some("/tmp/app/lib/pricing.rb"), Some(21))),
            ),
            (
                "(unknown) [c function] - (unknown)",
                Some(("(unknown) [c function]", None, None)),
            ),
            (
                "zero? - unknown:229",
                Some(("zero?", Some("unknown"), Some(229))),
            ),
            (
                "__tilt_1600 - unknown:21",
                Some(("__tilt_1600", Some("unknown"), Some(21))),
            ),
            (
                "render - /app/views/page.erb:3",
                Some(("render", Some("/app/views/page.erb"), Some(3))),
            ),
            // other names that hold ` - `
            ("a - b", None),
            ("step - /app/x.py:3", None),
            ("main - (unknown)", Some(("main", None, None))),
            (
                "run - /app/worker.rb",
                Some(("run", Some("/app/worker.rb"), None)),
            ),
            ("run - unknown", None),
            (
                "<main> - /srv/app/bin/worker:12",
                Some(("<main>", Some("/srv/app/bin/worker"), Some(12))),
            ),
            ("f - /usr/lib/libx.so:3", None),
        ];
        for (raw, want) in cases {
            assert_eq!(rbspy_frame(raw), want, "{raw}");
        }
    }

    #[test]
    fn perf_map_entries_of_node_and_cpython() {
        let e = perf_map_entry("JS:*countPrimes /tmp/app/src/primes.js:4:21").unwrap();
        assert_eq!(e.language, MapLanguage::JavaScript);
        assert_eq!(e.name, "countPrimes");
        assert_eq!(e.file.as_deref(), Some("/tmp/app/src/primes.js"));
        assert_eq!(e.line, Some(4));
        let e = perf_map_entry("JS:~ node:internal/main/run_main_module:1:1").unwrap();
        assert_eq!(
            (e.name.as_str(), e.file.as_deref()),
            ("(anonymous)", Some("node:internal/main/run_main_module"))
        );
        let e = perf_map_entry("LazyCompile:*handle /srv/app.js:12").unwrap();
        assert_eq!((e.name.as_str(), e.line), ("handle", Some(12)));
        let e = perf_map_entry("JS:^get size file:///srv/m.mjs:3:9").unwrap();
        assert_eq!(
            (e.name.as_str(), e.file.as_deref()),
            ("get size", Some("/srv/m.mjs"))
        );
        let e = perf_map_entry("Builtin:ArrayPrototypePush").unwrap();
        assert_eq!(e.language, MapLanguage::V8Stub);
        assert_eq!(e.name, "Builtin:ArrayPrototypePush");
        let e = perf_map_entry("py::compute:/srv/app/app.py").unwrap();
        assert_eq!(e.language, MapLanguage::Python);
        assert_eq!(e.name, "app.compute");
        assert_eq!(e.file.as_deref(), Some("/srv/app/app.py"));
        let e =
            perf_map_entry("py::JSONEncoder.encode:/usr/lib/python3.12/json/encoder.py").unwrap();
        assert_eq!(e.name, "json.encoder.JSONEncoder.encode");
        // the JVM's entries are not these
        assert_eq!(perf_map_entry("void shop.A.b(int)"), None);
        // stackcollapse-perf drops the parameters of DumpPerfMapAtExit's names
        for (input, want) in [
            ("void orders.MainKt.main", Some("orders.MainKt.main")),
            (
                "java.util.List orders.MainKt.makeLines",
                Some("orders.MainKt.makeLines"),
            ),
            ("java.lang.String[] a.B.c", Some("a.B.c")),
            ("unsigned long foo.bar", None),
            ("Order orders.MainKt.parse", None),
        ] {
            assert_eq!(java_name(input).as_deref(), want, "{input}");
        }
        assert_eq!(perf_map_entry("Lio/netty/Foo;::bar"), None);
        assert_eq!(perf_map_entry("Interpreter"), None);
        assert_eq!(perf_map_entry("StubRoutines (1)"), None);
    }

    use super::*;

    #[test]
    fn async_profiler_suffixes_are_split_off() {
        for (input, want) in [
            (
                "io/ktor/Foo.bar_[j]",
                ("io/ktor/Foo.bar", Some(TypeSuffix::Jit)),
            ),
            ("x_[0]", ("x", Some(TypeSuffix::Interpreted))),
            ("x_[1]", ("x", Some(TypeSuffix::C1))),
            ("plain", ("plain", None)),
            ("odd_[z]", ("odd_[z]", None)),
        ] {
            assert_eq!(split_type_suffix(input), want, "{input}");
        }
    }

    #[test]
    fn allocated_types_are_recognised() {
        for (input, want) in [
            ("byte[]_[i]", true),
            ("java.lang.String_[k]", true),
            ("finish_task_switch.isra.0_[k]", false),
            ("java/lang/String.<init>_[i]", false),
            ("byte[]", false),
        ] {
            assert_eq!(is_alloc_type(input), want, "{input}");
        }
    }

    #[test]
    fn java_names_unify() {
        for (input, want) in [
            ("io/ktor/server/Foo.bar", Some("io.ktor.server.Foo.bar")),
            ("net/http.(*conn).serve", None),
            ("github.com/x/y.F", None),
            ("encoding/json.Unmarshal", None),
        ] {
            assert_eq!(java_slashes_to_dots(input).as_deref(), want, "{input}");
        }
        for (input, want) in [
            (
                "void shop.ShopServer.reply(com.sun.net.httpserver.HttpExchange, int)",
                "shop.ShopServer.reply",
            ),
            ("Lio/ktor/server/Foo;::bar", "io.ktor.server.Foo.bar"),
            ("io.ktor.server.Foo::bar", "io.ktor.server.Foo.bar"),
            (
                "void shop.Pricing$$Lambda$43/0x00007f1044014f20.test(java.lang.Object)",
                "shop.Pricing$$Lambda$43/0x00007f1044014f20.test",
            ),
            ("StubRoutines (1)", "StubRoutines (1)"),
            ("Interpreter", "Interpreter"),
        ] {
            assert_eq!(java_perf_map_name(input), want, "{input}");
        }
        for (input, want) in [
            (
                "std::vector<int, std::allocator<int> >::push_back(int&&)",
                "std::vector<int, std::allocator<int> >::push_back",
            ),
            (
                "java.lang.Object jdk.internal.misc.Unsafe.getReferenceVolatile(java.lang.Object, long)",
                "jdk.internal.misc.Unsafe.getReferenceVolatile",
            ),
        ] {
            assert_eq!(normalize_symbol(input), want, "{input}");
        }
    }

    #[test]
    fn kotlin_native_keeps_package_path() {
        assert_eq!(
            kotlin_native_name("kfun:io.ktor.utils.io.ByteChannel#readByte(){}kotlin.Byte")
                .as_deref(),
            Some("io.ktor.utils.io.ByteChannel.readByte")
        );
        assert_eq!(
            kotlin_native_name("kfun:#main(){}").as_deref(),
            Some("main")
        );
    }

    #[test]
    fn cpp_signatures_are_dropped() {
        assert_eq!(
            strip_cpp_signature("idx::Index::add(std::string const&)"),
            "idx::Index::add"
        );
        assert_eq!(
            strip_cpp_signature("void idx::Index::add(std::string const&) const"),
            "idx::Index::add"
        );
        assert_eq!(
            strip_cpp_signature("std::vector<int, std::allocator<int> >::push_back(int&&)"),
            "std::vector<int, std::allocator<int> >::push_back"
        );
        assert_eq!(
            strip_cpp_signature("net/http.(*conn).serve"),
            "net/http.(*conn).serve"
        );
        assert_eq!(strip_cpp_signature("main"), "main");
        assert_eq!(
            normalize_symbol(
                "_ZN3idx5Index3addERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
            ),
            "idx::Index::add"
        );
    }

    #[test]
    fn rust_names_lose_their_hash() {
        assert_eq!(
            normalize_symbol("_ZN9logcrunch6worker17h0123456789abcdefE"),
            "logcrunch::worker"
        );
        assert_eq!(
            strip_rust_hash("logcrunch::worker::h0123456789abcdef"),
            "logcrunch::worker"
        );
    }

    #[test]
    fn pyspy_frames_become_module_paths() {
        let f = pyspy_frame("JSONDecoder.raw_decode (json/decoder.py:353)").unwrap();
        assert_eq!(f.name, "json.decoder.JSONDecoder.raw_decode");
        assert_eq!(f.line, Some(353));
        let f = pyspy_frame("_find_and_load (<frozen importlib._bootstrap>:1178)").unwrap();
        assert_eq!(f.name, "importlib._bootstrap._find_and_load");
        assert_eq!(f.kind, PyFrameKind::Python);
        assert_eq!(
            python_module("/usr/lib/python3.11/json/__init__.py"),
            "json"
        );
        assert_eq!(python_module("/tmp/whose-corpus/py-app/app.py"), "app");
        assert_eq!(python_module("main.py"), "main");
        assert_eq!(
            python_module("/usr/lib/python3/dist-packages/requests/api.py"),
            "requests.api"
        );
    }

    #[test]
    fn pyspy_native_frames_keep_their_library() {
        let f = pyspy_frame("deflate (libz.so.1.2.13)").unwrap();
        assert_eq!(f.kind, PyFrameKind::Native);
        assert_eq!(
            (f.name.as_str(), f.module.as_deref()),
            ("deflate", Some("libz.so.1.2.13"))
        );
        assert_eq!((f.file, f.line), (None, None));
        let f = pyspy_frame("0x7f76b8c4524a (_json.cpython-311-x86_64-linux-gnu.so)").unwrap();
        assert_eq!(f.kind, PyFrameKind::Unresolved);
        assert_eq!(f.name, "[unknown]");
        assert_eq!(
            f.module.as_deref(),
            Some("_json.cpython-311-x86_64-linux-gnu.so")
        );
        let f = pyspy_frame("0x7f76b849c3c2 (?)").unwrap();
        assert_eq!((f.kind, f.module), (PyFrameKind::Unresolved, None));
        // debug info: the C source file and line, no library
        let f = pyspy_frame("_hashlib_openssl_sha256 (_hashopenssl.c.h:427)").unwrap();
        assert_eq!(f.kind, PyFrameKind::Native);
        assert_eq!(f.name, "_hashlib_openssl_sha256");
        assert_eq!(
            (f.file.as_deref(), f.line),
            (Some("_hashopenssl.c.h"), Some(427))
        );
        // speedscope: full library paths and line 0 for native frames
        let f = pyspy_frame("deflate (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13:0)").unwrap();
        assert_eq!(f.kind, PyFrameKind::Native);
        assert_eq!(
            f.module.as_deref(),
            Some("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13")
        );
        assert_eq!(f.line, None);
        // Python files without a line (`--nolineno`) and scripts without an extension
        let f = pyspy_frame("run (app.py)").unwrap();
        assert_eq!((f.kind, f.name.as_str()), (PyFrameKind::Python, "app.run"));
        let f = pyspy_frame("<module> (/usr/local/bin/tool:7)").unwrap();
        assert_eq!(f.kind, PyFrameKind::Python);
    }

    #[test]
    fn java_descriptor_forms_of_perf_maps_unify() {
        for (input, want) in [
            ("Lio/netty/Foo;.bar", "io.netty.Foo.bar"),
            (
                "Lio/netty/Foo;.bar(Ljava/lang/String;)V",
                "io.netty.Foo.bar",
            ),
            ("Lio/netty/Foo;::bar", "io.netty.Foo.bar"),
        ] {
            assert_eq!(normalize_symbol(input), want, "{input}");
        }
        for (input, want) in [
            ("Lio/netty/Foo;::<init>", "io.netty.Foo.<init>"),
            // a class-only name is a class (with dots, so the JIT-stub rule `^[^.]*$`
            // skips it)
            ("Lorg/x/gen/File__123;", "org.x.gen.File__123"),
        ] {
            assert_eq!(java_perf_map_name(input), want, "{input}");
        }
    }

    #[test]
    fn java_forms_of_collapsed_files_unify() {
        // stackcollapse-perf/inferno turn `;` into `:` and drop the `L` for java processes
        assert_eq!(normalize_symbol("Lio/netty/X:::run"), "io.netty.X.run");
        assert_eq!(normalize_symbol("io/netty/Baz:::qux"), "io.netty.Baz.qux");
        assert_eq!(normalize_symbol("pkg/Foo:.bar"), "pkg.Foo.bar");
        assert_eq!(
            normalize_symbol("org/x/gen/File__123:"),
            "org.x.gen.File__123"
        );
        assert_eq!(
            normalize_symbol("java/lang/Thread:::run"),
            "java.lang.Thread.run"
        );
        // `_[j]` is split off by the folded reader before normalising
        let (base, suffix) = split_type_suffix("Lio/netty/X:::run_[j]");
        assert_eq!(suffix, Some(TypeSuffix::Jit));
        assert_eq!(normalize_symbol(base), "io.netty.X.run");
        let (base, _) = split_type_suffix("pkg/Foo:.bar_[j]");
        assert_eq!(normalize_symbol(base), "pkg.Foo.bar");
    }

    #[test]
    fn cpp_names_inside_a_jvm_stay_cpp() {
        assert_eq!(java_name("Thread::call_run"), None);
        assert_eq!(java_name("libjvm.so.Thread::call_run"), None);
        assert_eq!(
            split_module_prefix("libjvm.so.Thread::call_run"),
            Some(("libjvm.so", "Thread::call_run"))
        );
        assert_eq!(
            split_module_prefix("libc.so.6.malloc"),
            Some(("libc.so.6", "malloc"))
        );
        assert_eq!(split_module_prefix("libc.so.6"), None);
        assert_eq!(
            normalize_symbol("libjvm.so.Thread::call_run"),
            "Thread::call_run"
        );
        assert_eq!(
            normalize_symbol("thread_entry(JavaThread*, Thread*)"),
            "thread_entry"
        );
        assert_eq!(
            normalize_symbol("JavaThread::thread_main_inner()"),
            "JavaThread::thread_main_inner"
        );
        // not parameter lists
        assert_eq!(normalize_symbol("StubRoutines (1)"), "StubRoutines (1)");
        assert_eq!(java_name("foo<a/b>::c"), None);
        assert_eq!(
            normalize_symbol("net/http.(*conn).serve"),
            "net/http.(*conn).serve"
        );
    }

    #[test]
    fn half_demangled_legacy_rust_is_decoded() {
        assert_eq!(
            normalize_symbol("_$LT$core..option..Option$LT$T$GT$$GT$::map"),
            "<core::option::Option<T>>::map"
        );
        assert_eq!(
            normalize_symbol(
                "_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b"
            ),
            "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next"
        );
        assert_eq!(
            normalize_symbol(
                "rg::search_parallel::_$u7b$$u7b$closure$u7d$$u7d$::h6e849b55a66fcd85"
            ),
            "rg::search_parallel::{{closure}}"
        );
        assert_eq!(
            normalize_symbol("_$LT$F$u20$as$u20$alloc..boxed..FnBox$LT$A$GT$$GT$::call_box"),
            "<F as alloc::boxed::FnBox<A>>::call_box"
        );
        assert_eq!(
            normalize_symbol("_$LT$$RF$std..fs..File$u20$as$u20$std..io..Read$GT$::read"),
            "<&std::fs::File as std::io::Read>::read"
        );
        assert_eq!(
            normalize_symbol("hashbrown::map::HashMap$LT$K$C$V$C$S$GT$::insert"),
            "hashbrown::map::HashMap<K,V,S>::insert"
        );
        // `..` alone is not Rust: Go's generated equality functions
        assert_eq!(normalize_symbol("type..eq.main.T"), "type..eq.main.T");
    }

    #[test]
    fn mangled_names_keep_their_linker_suffix() {
        assert_eq!(
            normalize_symbol("_ZN3idx5Index3addEv@plt"),
            "idx::Index::add@plt"
        );
        assert_eq!(
            normalize_symbol("_ZN9logcrunch6worker17h0123456789abcdefE@plt"),
            "logcrunch::worker@plt"
        );
        assert_eq!(normalize_symbol("malloc@plt"), "malloc@plt");
    }

    #[test]
    fn gcc_manglings_cpp_demangle_rejects_still_get_their_name() {
        // g++ 12 (Debian bookworm) for `std::vector<idx::Posting>::push_back` with a trivial
        // `Posting`: c++filt reads `std::enable_if<std::__is_bitwise_relocatable<idx::Posting,
        // void>::value, idx::Posting*>::type std::__relocate_a_1<idx::Posting,
        // idx::Posting>(idx::Posting*, ...)`
        let relocate = "_ZSt14__relocate_a_1IN3idx7PostingES1_ENSt9enable_ifIXsrSt24__is_bitwise_relocatableIT_vE5valueEPS4_E4typeES6_S6_S6_RSaIT0_E";
        assert!(cpp_demangle::Symbol::new(relocate).is_err());
        assert_eq!(
            normalize_symbol(relocate),
            "std::__relocate_a_1<idx::Posting, idx::Posting>"
        );
        // and `a == b` on two std::string: `std::operator==<char>(...)`
        let eq = "_ZSteqIcEN9__gnu_cxx11__enable_ifIXsrSt9__is_charIT_E7__valueEbE6__typeERKNSt7__cxx1112basic_stringIS3_St11char_traitsIS3_ESaIS3_EEESE_";
        assert_eq!(normalize_symbol(eq), "std::operator==<char>");
        assert_eq!(
            normalize_symbol(&format!("{relocate}@plt")),
            "std::__relocate_a_1<idx::Posting, idx::Posting>@plt"
        );
        // clone suffixes are read too
        assert_eq!(
            normalize_symbol(
                "_ZSt14__relocate_a_1IPN3idx7PostingES2_SaIS1_EET0_T_S5_S4_RT1_.isra.0"
            ),
            "std::__relocate_a_1<idx::Posting*, idx::Posting*, std::allocator<idx::Posting> >"
        );
    }

    #[test]
    fn names_the_demanglers_gave_up_on_are_recognised() {
        for (input, want) in [
            ("_ZN3foo3barEXX", true),
            ("_ZZZ@plt", true),
            ("idx::Index::add", false),
            ("_start", false),
            ("_Z", false),
        ] {
            assert_eq!(is_still_mangled(input), want, "{input}");
        }
        assert_eq!(cpp_mangled_name("_ZN3foo"), None);
    }

    #[test]
    fn perf_map_agent_inline_chains_split_at_arrows() {
        assert_eq!(
            split_inline_chain("Lio/netty/Foo;::read->Ljava/io/PrintStream;::print"),
            Some(vec!["Lio/netty/Foo;::read", "Ljava/io/PrintStream;::print"])
        );
        assert_eq!(split_inline_chain("A->B->C"), Some(vec!["A", "B", "C"]));
        assert_eq!(split_inline_chain("std::unique_ptr<Foo>::operator->"), None);
        assert_eq!(
            split_inline_chain("<fn() -> u32 as core::ops::FnOnce<()>>::call_once"),
            None
        );
        assert_eq!(split_inline_chain("plain"), None);
    }

    #[test]
    fn a_shared_object_name_is_not_plain_wherever_its_so_is() {
        for sym in ["libc.so.6", "x.so.", ".so.1", "a.b.so.2.x"] {
            assert!(!is_plain_symbol(sym), "{sym}");
        }
        for sym in ["a.so", "so.x", "fn_1", "a.sox.1", ""] {
            assert!(is_plain_symbol(sym), "{sym}");
        }
    }

    proptest::proptest! {
        #[test]
        fn plain_symbols_are_what_every_normaliser_leaves_them(
            sym in "[a-zA-Z0-9_.RZ]{0,12}(\\.so\\.[0-9]\\.[a-z]{1,3}|\\.\\.|[a-z]{0,3})"
        ) {
            if is_plain_symbol(&sym) {
                proptest::prop_assert_eq!(normalize_any_symbol(&sym), sym);
            }
        }
    }

    #[test]
    fn cgo_stubs_stand_for_their_c_function() {
        let cases: &[(&str, Option<&str>)] = &[
            ("main._Cfunc_sqlite3_step", Some("sqlite3_step")),
            ("main._Cfunc_score_block.abi0", Some("score_block")),
            (
                "github.com/mattn/go-sqlite3._Cfunc_sqlite3_exec",
                Some("sqlite3_exec"),
            ),
            ("main._C2func_open_db", Some("open_db")),
            ("_cgo_29ecfdabf875_Cfunc_score_block", Some("score_block")),
            ("main._Cfunc__CMalloc", Some("malloc")),
            ("main._Cfunc_GoString", Some("GoString")),
            ("runtime.cgocall", None),
            ("my_Cfunc_thing", None),
            ("_cgo_topofstack", None),
        ];
        for (name, want) in cases {
            assert_eq!(cgo_callee(name), *want, "{name}");
        }
    }
}
