//! The grammar of folded ("collapsed") stacks, in one place for every level that reads or
//! writes them: a line is `frame;frame;...;frame COUNT`, root first and leaf last, the
//! frames separated by `;` and the count after the line's last space (a differential file,
//! as difffolded.pl writes, has two counts, `stack BEFORE AFTER`).
//!
//! Only the grammar lives here: what a site does with a line that breaks it (a reader's bad
//! line, a test's `None`), how a count is parsed and how a frame name is kept free of `;`
//! differ by site and stay there. The byte functions are for the readers' hot paths, which
//! work on bytes; the `&str` ones for text. None of them allocates but [`join_frames`].

use std::fmt::Display;

/// What separates the frames of a stack, as a byte (for `memchr`).
pub const FRAME_SEPARATOR: u8 = b';';

/// What separates the frames of a stack, as a char (to push onto a `String`).
pub const SEPARATOR: char = FRAME_SEPARATOR as char;

/// What separates a line's stack from its count: the line's last one.
pub const COUNT_SEPARATOR: u8 = b' ';

/// A line's stack text and count text, split at its last space; `None` for a line without
/// one. The stack keeps any space before that one (`a;b  1` gives `a;b `), and in a
/// differential line (`a;b 1 2`) the first count stays on the stack (`a;b 1`, `2`).
#[inline]
pub fn split_count(line: &str) -> Option<(&str, &str)> {
    line.rsplit_once(COUNT_SEPARATOR as char)
}

/// [`split_count`] of a line's bytes.
#[inline]
pub fn split_count_bytes(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let space = memchr::memrchr(COUNT_SEPARATOR, line)?;
    Some((&line[..space], &line[space + 1..]))
}

/// A line's stack text: the line without its count, or the whole line if it has none.
#[inline]
pub fn stack_of(line: &str) -> &str {
    split_count(line).map_or(line, |(stack, _)| stack)
}

/// The frames of a stack text, root first. An empty text is one empty frame, as is the
/// text after a trailing `;`: the caller decides what an empty stack is.
#[inline]
pub fn frames(stack: &str) -> std::str::Split<'_, char> {
    stack.split(SEPARATOR)
}

/// The first (root) frame of a stack text: all of it when it has one frame.
#[inline]
pub fn first_frame(stack: &str) -> &str {
    memchr::memchr(FRAME_SEPARATOR, stack.as_bytes()).map_or(stack, |end| &stack[..end])
}

/// Frames joined into a stack text, root first.
#[inline]
pub fn join_frames<S: std::borrow::Borrow<str>>(frames: &[S]) -> String {
    frames.join(";")
}

/// Appends ` COUNT` to a stack text, making it a line (without its newline).
#[inline]
pub fn push_count(line: &mut String, count: impl Display) {
    use std::fmt::Write as _;
    let _ = write!(line, " {count}");
}

/// Writes the line `STACK COUNT` and its newline.
#[inline]
pub fn write_line(
    out: &mut (impl std::io::Write + ?Sized),
    stack: &str,
    count: impl Display,
) -> std::io::Result<()> {
    writeln!(out, "{stack} {count}")
}

/// Writes the differential line `STACK BEFORE AFTER` and its newline.
#[inline]
pub fn write_differential_line(
    out: &mut (impl std::io::Write + ?Sized),
    stack: &str,
    before: impl Display,
    after: impl Display,
) -> std::io::Result<()> {
    writeln!(out, "{stack} {before} {after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_after_the_last_space() {
        assert_eq!(split_count("a;b;c 12"), Some(("a;b;c", "12")));
        // a frame with spaces keeps them: only the last space ends the stack
        let line = "a;run (app.py:58);do it 3";
        assert_eq!(split_count(line), Some(("a;run (app.py:58);do it", "3")));
        assert_eq!(
            split_count_bytes(line.as_bytes()),
            Some((&line.as_bytes()[..23], &b"3"[..]))
        );
        // two spaces: the stack keeps one
        assert_eq!(split_count("a;b  4"), Some(("a;b ", "4")));
        // a differential line: the first count stays on the stack
        assert_eq!(split_count("a;b 1 2"), Some(("a;b 1", "2")));
        assert_eq!(
            split_count_bytes(b"a;b 1 2"),
            Some((&b"a;b 1"[..], &b"2"[..]))
        );
        // an empty stack, and a line ending in its space
        assert_eq!(split_count(" 7"), Some(("", "7")));
        assert_eq!(split_count("a;b "), Some(("a;b", "")));
    }

    #[test]
    fn a_line_without_a_space_has_no_count() {
        assert_eq!(split_count("a;b;c"), None);
        assert_eq!(split_count_bytes(b"a;b;c"), None);
        assert_eq!(split_count(""), None);
        assert_eq!(stack_of("a;b;c"), "a;b;c");
        assert_eq!(stack_of("a;b c;d 5"), "a;b c;d");
    }

    #[test]
    fn frames_are_split_at_every_separator() {
        let split = |s| frames(s).collect::<Vec<_>>();
        assert_eq!(split("a;b c;d"), ["a", "b c", "d"]);
        assert_eq!(split("a"), ["a"]);
        // the caller decides what an empty stack or a trailing `;` is
        assert_eq!(split(""), [""]);
        assert_eq!(split("a;"), ["a", ""]);
        assert_eq!(first_frame("a b;c;d"), "a b");
        assert_eq!(first_frame("leaf"), "leaf");
        assert_eq!(first_frame(""), "");
        assert_eq!(first_frame(";x"), "");
    }

    #[test]
    fn lines_written_read_back() {
        let stack = join_frames(&["main", "do it", "leaf"]);
        assert_eq!(stack, "main;do it;leaf");
        assert_eq!(join_frames::<&str>(&[]), "");
        let mut line = stack.clone();
        push_count(&mut line, 42u128);
        assert_eq!(line, "main;do it;leaf 42");
        assert_eq!(split_count(&line), Some((stack.as_str(), "42")));
        let mut out = Vec::new();
        write_line(&mut out, &stack, 1).unwrap();
        write_differential_line(&mut out, &stack, 2, 3).unwrap();
        assert_eq!(out, b"main;do it;leaf 1\nmain;do it;leaf 2 3\n");
        assert!(frames(&stack).eq(["main", "do it", "leaf"]));
    }
}
