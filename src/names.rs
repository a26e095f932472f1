//! Name normalisation shared by every reader (DESIGN "Frame names"), so that one rule works
//! for every input of an ecosystem: a Java method reads `io.ktor.server.Foo.bar` whether it
//! came from async-profiler, a perf map or a perf script dump; a C++ function reads
//! `idx::Index::add` without its return type and parameters; a py-spy frame reads
//! `json.decoder.JSONDecoder.raw_decode`.
//!
//! Each function here is pure and runs once per distinct raw name (readers cache), so clarity
//! wins over micro-optimisation. The module works on text alone and uses no other module of
//! the crate: it sits at the bottom of the layering with the model, and the readers and the
//! symboliser above both call it.

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
    java_agent_name(sym)
        .or_else(|| java_signature_name(sym))
        .unwrap_or_else(|| sym.to_string())
}

/// perf-map-agent: `Lpkg/Cls;::method` or `pkg.Cls::method` (optionally with a descriptor).
fn java_agent_name(sym: &str) -> Option<String> {
    let (class, method) = sym.split_once("::")?;
    let class = match class.strip_prefix('L').and_then(|c| c.strip_suffix(';')) {
        Some(c) => c.replace('/', "."),
        None if class.contains('.') => class.to_string(),
        None => return None,
    };
    let method = method.split('(').next().unwrap_or(method);
    let is_ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | '<' | '>'))
    };
    (is_ident(&class) && is_ident(method)).then(|| format!("{class}.{method}"))
}

/// DumpPerfMapAtExit: `<return type> <qualified.method>(<params>)`.
fn java_signature_name(sym: &str) -> Option<String> {
    let (head, _params) = sym.split_once('(')?;
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
/// (`idx::Index::add(std::string const&) const` → `idx::Index::add`), and a leading return
/// type when a demangler left one (`void idx::Index::add(...)`). Names without a parameter
/// list are returned unchanged.
pub fn strip_cpp_signature(name: &str) -> &str {
    let trimmed = name
        .trim_end_matches(" const")
        .trim_end_matches(" volatile")
        .trim_end_matches(" &&")
        .trim_end_matches(" &");
    if !trimmed.ends_with(')') || !name.contains("::") {
        return name;
    }
    let Some(open) = matching_open_paren(trimmed) else {
        return name;
    };
    let head = &trimmed[..open];
    if head.is_empty() || head.ends_with("operator") || head.ends_with("anonymous namespace") {
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

/// Demangles Rust (legacy and v0, hash dropped) and Itanium C++ symbols; any other name is
/// returned as is. Very long symbols are not handed to the C++ demangler, which has had
/// stack-overflow bugs on hostile input.
pub fn demangle(sym: &str) -> Option<String> {
    if let Ok(d) = rustc_demangle::try_demangle(sym) {
        return Some(format!("{d:#}"));
    }
    if sym.starts_with("_Z") && sym.len() < 4096 {
        let parsed = cpp_demangle::Symbol::new(sym).ok()?;
        let options = cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type();
        return parsed.demangle_with_options(&options).ok();
    }
    None
}

/// The normalised name of a symbol of unknown origin (perf script, folded text, ELF symbol
/// tables): demangled, Kotlin/Native and JVM forms unified, C++ signatures dropped, Rust
/// hashes removed.
pub fn normalize_symbol(sym: &str) -> String {
    if let Some(d) = demangle(sym) {
        return d;
    }
    if let Some(k) = kotlin_native_name(sym) {
        return k;
    }
    if let Some(j) = java_slashes_to_dots(sym)
        .or_else(|| java_agent_name(sym))
        .or_else(|| java_signature_name(sym))
    {
        return j;
    }
    strip_rust_hash(strip_cpp_signature(sym)).to_string()
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

/// A py-spy frame `func (path/mod.py:line)` split into its parts: the normalised name
/// `module.func`, the file and the line.
pub struct PyFrame {
    pub name: String,
    pub file: String,
    pub line: Option<u32>,
}

pub fn pyspy_frame(raw: &str) -> Option<PyFrame> {
    let body = raw.strip_suffix(')')?;
    let open = body.rfind(" (")?;
    let (func, location) = (&body[..open], &body[open + 2..]);
    if location.contains(['(', ')']) {
        return None;
    }
    let (file, line) = match location.rsplit_once(':') {
        Some((f, l)) if l.bytes().all(|b| b.is_ascii_digit()) && !l.is_empty() => {
            (f, l.parse().ok())
        }
        _ => (location, None),
    };
    Some(PyFrame {
        name: format!("{}.{}", python_module(file), func),
        file: file.to_string(),
        line,
    })
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
    use super::*;

    #[test]
    fn async_profiler_suffixes_are_split_off() {
        assert_eq!(
            split_type_suffix("io/ktor/Foo.bar_[j]"),
            ("io/ktor/Foo.bar", Some(TypeSuffix::Jit))
        );
        assert_eq!(split_type_suffix("x_[0]").1, Some(TypeSuffix::Interpreted));
        assert_eq!(split_type_suffix("x_[1]").1, Some(TypeSuffix::C1));
        assert_eq!(split_type_suffix("plain"), ("plain", None));
        assert_eq!(split_type_suffix("odd_[z]"), ("odd_[z]", None));
    }

    #[test]
    fn allocated_types_are_recognised() {
        assert!(is_alloc_type("byte[]_[i]"));
        assert!(is_alloc_type("java.lang.String_[k]"));
        assert!(!is_alloc_type("finish_task_switch.isra.0_[k]"));
        assert!(!is_alloc_type("java/lang/String.<init>_[i]"));
        assert!(!is_alloc_type("byte[]"));
    }

    #[test]
    fn java_names_unify() {
        assert_eq!(
            java_slashes_to_dots("io/ktor/server/Foo.bar").as_deref(),
            Some("io.ktor.server.Foo.bar")
        );
        assert_eq!(java_slashes_to_dots("net/http.(*conn).serve"), None);
        assert_eq!(java_slashes_to_dots("github.com/x/y.F"), None);
        assert_eq!(java_slashes_to_dots("encoding/json.Unmarshal"), None);
        assert_eq!(
            java_perf_map_name(
                "void shop.ShopServer.reply(com.sun.net.httpserver.HttpExchange, int)"
            ),
            "shop.ShopServer.reply"
        );
        assert_eq!(
            java_perf_map_name("Lio/ktor/server/Foo;::bar"),
            "io.ktor.server.Foo.bar"
        );
        assert_eq!(
            java_perf_map_name("io.ktor.server.Foo::bar"),
            "io.ktor.server.Foo.bar"
        );
        assert_eq!(
            java_perf_map_name(
                "void shop.Pricing$$Lambda$43/0x00007f1044014f20.test(java.lang.Object)"
            ),
            "shop.Pricing$$Lambda$43/0x00007f1044014f20.test"
        );
        assert_eq!(java_perf_map_name("StubRoutines (1)"), "StubRoutines (1)");
        assert_eq!(java_perf_map_name("Interpreter"), "Interpreter");
        assert_eq!(
            normalize_symbol("std::vector<int, std::allocator<int> >::push_back(int&&)"),
            "std::vector<int, std::allocator<int> >::push_back"
        );
        assert_eq!(
            normalize_symbol(
                "java.lang.Object jdk.internal.misc.Unsafe.getReferenceVolatile(java.lang.Object, long)"
            ),
            "jdk.internal.misc.Unsafe.getReferenceVolatile"
        );
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
}
