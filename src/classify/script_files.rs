//! The program's own files among a profile's, for the guesses by source file (node's
//! scripts, Python's files): shared by those guesses, so it stands below them.

use super::glob::Glob;
use crate::model::{Frame, Profile};

/// Every frame of `profiles` whose file `keep` accepts, with that file: where the script
/// guesses look for the program's own files.
pub fn frames_with_file<'a>(
    profiles: &'a [Profile],
    keep: impl Fn(&str) -> bool + 'a,
) -> impl Iterator<Item = (&'a Frame, &'a str)> + 'a {
    profiles
        .iter()
        .flat_map(Profile::frames)
        .filter_map(move |frame| {
            let file = frame.file.as_deref()?;
            keep(file).then_some((frame, file))
        })
}

/// The program's script files as `file` globs (issue 29): the common directory of `own`
/// (absolute paths, or the relative names py-spy shortens them to), one glob per entry below
/// it (`/app/src/*` for a directory, `/app/main.js` for a file), so that a file added to the
/// program's tree later is its code too. A glob that would also match one of `others` (the
/// profile's third-party or runtime files: `/app/node_modules/...`) is replaced by the exact
/// files of `own` under it. Returns the directory (empty when the files have none in common),
/// the globs, sorted, and the files' names; `None` without files of the program's own.
pub fn own_files<'a>(
    own: &std::collections::BTreeSet<&'a str>,
    others: std::collections::BTreeSet<&'a str>,
) -> Option<(String, Vec<String>, Vec<&'a str>)> {
    if own.is_empty() {
        return None;
    }
    let others: Vec<&str> = others.into_iter().collect();
    let (dir, files) = file_globs(own, &others);
    Some((dir, files, own.iter().copied().collect()))
}

/// The directory and the globs of [`own_files`].
pub fn file_globs<'a>(
    own: &std::collections::BTreeSet<&'a str>,
    others: &[&'a str],
) -> (String, Vec<String>) {
    let dirs: Vec<&str> = own
        .iter()
        .map(|f| f.rsplit_once('/').map_or("", |(d, _)| d))
        .collect();
    let mut common: Vec<&str> = dirs
        .first()
        .map_or_else(Vec::new, |d| d.split('/').collect());
    for d in &dirs[1.min(dirs.len())..] {
        let parts: Vec<&str> = d.split('/').collect();
        let same = common
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same);
    }
    let dir = common.join("/");
    let mut globs = std::collections::BTreeSet::new();
    for f in own {
        let below = if dir.is_empty() && !f.starts_with('/') {
            *f
        } else {
            &f[(dir.len() + 1).min(f.len())..]
        };
        let glob = match below.split_once('/') {
            None => f.to_string(),
            Some((first, _)) if dir.is_empty() && !f.starts_with('/') => format!("{first}/*"),
            Some((first, _)) => format!("{dir}/{first}/*"),
        };
        let g = Glob::new(&glob);
        if glob.ends_with('*') && others.iter().any(|o| g.matches(o)) {
            globs.insert(f.to_string());
        } else {
            globs.insert(glob);
        }
    }
    let dir = if dir.is_empty() && own.iter().any(|f| f.starts_with('/')) {
        "/".to_string()
    } else {
        dir
    };
    (dir, globs.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn globs_cover_the_program_tree_but_not_its_dependencies() {
        let own: BTreeSet<&str> = ["/app/app.js", "/app/src/a.js", "/app/src/lib/b.js"].into();
        let (dir, globs) = file_globs(&own, &["/app/node_modules/p/index.js"]);
        assert_eq!(dir, "/app");
        assert_eq!(globs, ["/app/app.js", "/app/src/*"]);
        // a dependency inside a claimed directory: that directory's files one by one
        let (_, globs) = file_globs(&own, &["/app/src/node_modules/p/index.js"]);
        assert_eq!(globs, ["/app/app.js", "/app/src/a.js", "/app/src/lib/b.js"]);
        // py-spy's relative names
        let own: BTreeSet<&str> = ["app.py", "main.py", "pkg/x.py"].into();
        let (dir, globs) = file_globs(&own, &[]);
        assert_eq!(dir, "");
        assert_eq!(globs, ["app.py", "main.py", "pkg/*"]);
        let own: BTreeSet<&str> = ["/srv/a.py", "/home/u/b.py"].into();
        assert_eq!(
            file_globs(&own, &[]),
            ("/".into(), vec!["/home/*".into(), "/srv/*".into()])
        );
    }
}
