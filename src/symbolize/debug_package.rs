//! Which distribution package installed a file, so that the fix for a stripped system binary
//! can name the package that carries its debug symbols (`/usr/bin/sort` → coreutils →
//! `coreutils-dbgsym`).
//!
//! Debian and Ubuntu keep one file list per installed package, `/var/lib/dpkg/info/
//! PACKAGE[:ARCH].list`, a path per line; that is what `dpkg -S` reads. Reading the lists
//! directly spawns no process and cannot hang; it is done only for a module found stripped,
//! and stops at the first list naming the file. Under `--symfs DIR` the lists of that root are
//! read (the recording machine's, when DIR is a copy of it). Elsewhere (no dpkg) there is no
//! answer, and the fix names the generic `-dbgsym`/`-debuginfo` package instead.

use std::path::Path;

/// The package that installed `path` (as recorded) on the system at `root` (`/` by default).
pub fn installed_by(root: Option<&Path>, path: &str) -> Option<String> {
    let info = root.unwrap_or(Path::new("/")).join("var/lib/dpkg/info");
    let wanted = merged_usr_variants(path);
    for entry in std::fs::read_dir(info).ok()?.flatten() {
        let name = entry.file_name();
        let Some(package) = name.to_str().and_then(|n| n.strip_suffix(".list")) else {
            continue;
        };
        let Ok(list) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if list.lines().any(|line| wanted.contains(&line)) {
            // `libc6:amd64` → `libc6`: the debug package is named without the architecture
            return Some(package.split(':').next().unwrap_or(package).to_string());
        }
    }
    None
}

/// `path` and its other name on a merged-/usr system: a process maps
/// `/usr/lib/x86_64-linux-gnu/libc.so.6` while dpkg lists `/lib/x86_64-linux-gnu/libc.so.6`,
/// and the reverse.
fn merged_usr_variants(path: &str) -> Vec<&str> {
    let mut variants = vec![path];
    if let Some(rest) = path.strip_prefix("/usr")
        && ["/bin/", "/sbin/", "/lib"]
            .iter()
            .any(|d| rest.starts_with(d))
    {
        variants.push(rest);
    }
    variants
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owning_package_is_read_from_dpkg_lists_under_the_root() {
        let root = tempfile::tempdir().unwrap();
        let info = root.path().join("var/lib/dpkg/info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("coreutils.list"), "/.\n/usr\n/usr/bin/sort\n").unwrap();
        std::fs::write(
            info.join("libc6:amd64.list"),
            "/lib/x86_64-linux-gnu/libc.so.6\n",
        )
        .unwrap();
        std::fs::write(info.join("coreutils.md5sums"), "/usr/bin/gzip\n").unwrap();
        let at = |p| installed_by(Some(root.path()), p);
        assert_eq!(at("/usr/bin/sort").as_deref(), Some("coreutils"));
        // merged /usr, and the architecture dropped
        assert_eq!(
            at("/usr/lib/x86_64-linux-gnu/libc.so.6").as_deref(),
            Some("libc6")
        );
        assert_eq!(at("/usr/bin/gzip"), None);
        assert_eq!(at("/usr/bin/sor"), None);
        // no dpkg at all
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(installed_by(Some(empty.path()), "/usr/bin/sort"), None);
    }
}
