//! The key prefix rules match against. For most names it is the name itself; for Rust
//! trait-impl frames it is the impl's self type (or, when the self type has no path, the
//! trait), so `<&mut serde_json::de::Deserializer<R> as serde::de::Deserializer>::deserialize_map`
//! is claimed by a `serde_json::` rule (docs/design.md "Frame names"; the corpus oracle does the same).

use std::borrow::Cow;

/// Drops leading `<`, `&`, `&mut `, `*`, `dyn `, `mut `, `const `.
fn strip_ref(mut k: &str) -> &str {
    loop {
        let next = k
            .strip_prefix('<')
            .or_else(|| k.strip_prefix("&mut "))
            .or_else(|| k.strip_prefix('&'))
            .or_else(|| k.strip_prefix('*'))
            .or_else(|| k.strip_prefix("dyn "))
            .or_else(|| k.strip_prefix("mut "))
            .or_else(|| k.strip_prefix("const "));
        match next {
            Some(rest) => k = rest,
            None => return k,
        }
    }
}

pub fn match_key(name: &str) -> Cow<'_, str> {
    if !name.starts_with('<') {
        return Cow::Borrowed(name);
    }
    let k = strip_ref(name);
    let mut depth = 0i32;
    let mut end = None;
    for (i, c) in k.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => {
                depth -= 1;
                if depth < 0 {
                    end = Some(i);
                    break;
                }
            }
            ' ' if depth == 0 && k[i..].starts_with(" as ") => {
                if !k[..i].contains("::") {
                    let t = &k[i + 4..];
                    return if t.starts_with('<') {
                        Cow::Owned(match_key(t).into_owned())
                    } else {
                        Cow::Borrowed(strip_ref(t))
                    };
                }
                return Cow::Borrowed(k);
            }
            _ => {}
        }
    }
    match end {
        // the text ran out with brackets still open, or balanced without ` as `
        None => Cow::Borrowed(k),
        Some(i) if k[i..].starts_with(">::") && !k[..i].contains("::") => {
            // inherent impl on a primitive: `<u64>::wrapping_add` → `core::wrapping_add`
            Cow::Owned(format!("core::{}", &k[i + 3..]))
        }
        Some(i) if k[i..].starts_with(">::") => Cow::Borrowed(k),
        Some(_) => Cow::Borrowed(name),
    }
}

/// The Rust crate a frame's name belongs to: the first `::` segment of its match key.
pub fn rust_crate(key: &str) -> Option<&str> {
    // (a `:` looked for first: a search for `::` builds a searcher per call)
    memchr::memchr(b':', key.as_bytes())?;
    let (first, _) = key.split_once("::")?;
    (!first.is_empty() && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trait_impls_match_by_self_type_or_trait() {
        assert_eq!(
            match_key(
                "<&mut serde_json::de::Deserializer<R> as serde::de::Deserializer>::deserialize_map"
            ),
            "serde_json::de::Deserializer<R> as serde::de::Deserializer>::deserialize_map"
        );
        assert_eq!(
            match_key("<usize as core::fmt::Display>::fmt"),
            "core::fmt::Display>::fmt"
        );
        assert_eq!(match_key("<u64>::wrapping_add"), "core::wrapping_add");
        assert_eq!(
            match_key("<[T] as alloc::slice::hack::ConvertVec>::to_vec"),
            "alloc::slice::hack::ConvertVec>::to_vec"
        );
        assert_eq!(
            match_key("<std::sys::thread::unix::Thread>::new::thread_start"),
            "std::sys::thread::unix::Thread>::new::thread_start"
        );
        assert_eq!(match_key("logcrunch::worker"), "logcrunch::worker");
        assert_eq!(rust_crate("serde_json::de::from_str"), Some("serde_json"));
        assert_eq!(rust_crate("main"), None);
    }
}
