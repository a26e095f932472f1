//! Text fitted to a width, for every renderer that writes to a terminal: a name shortened in
//! its middle or kept by its end, a line wrapped at spaces with its numbers kept beside their
//! units. Below the report, flame and words folders, which all fit text.

use unicode_width::UnicodeWidthStr;

/// `s` in at most `max` columns: the start and the end of it around `…` when too long.
pub fn shorten_middle(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    if max <= 1 {
        return "…".chars().take(max).collect();
    }
    let keep = max - 1;
    let (head_max, tail_max) = (keep.div_ceil(2), keep / 2);
    let mut head = String::new();
    for ch in s.chars() {
        if head.width() + ch.to_string().width() > head_max {
            break;
        }
        head.push(ch);
    }
    let mut tail: Vec<char> = Vec::new();
    for ch in s.chars().rev() {
        let w: usize = tail.iter().map(|c| c.to_string().width()).sum();
        if w + ch.to_string().width() > tail_max {
            break;
        }
        tail.push(ch);
    }
    tail.reverse();
    format!("{head}…{}", tail.into_iter().collect::<String>())
}

/// `s` in at most `max` columns: `…` and its end when too long.
pub fn keep_end(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut width = 1;
    for ch in s.chars().rev() {
        let w = ch.to_string().width();
        if width + w > max {
            break;
        }
        width += w;
        tail.push(ch);
    }
    tail.reverse();
    format!("…{}", tail.into_iter().collect::<String>())
}

/// The units weights are written in (`model::Unit::format`), kept with their number by
/// [`wrap`].
const UNITS: [&str; 8] = ["B", "KiB", "MiB", "GiB", "ns", "µs", "ms", "s"];

/// `line` broken at spaces into lines of at most `width` columns; continuation lines are
/// indented two more than the line's own indent. A word longer than a line (a path) is kept
/// whole rather than cut.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.width() <= width {
        return vec![line.to_string()];
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let hanging = " ".repeat(indent + 2);
    let mut lines = Vec::new();
    let mut current = " ".repeat(indent);
    let mut empty = true;
    // a weight stays on one line with its unit (`2.29 GiB`, not `2.29` / `GiB`), and the
    // header's total with its label (`total 6.70 s`, not `total` ending the first line);
    // words on one line keep the spaces between them (aligned columns stay aligned)
    let mut words: Vec<(usize, String)> = Vec::new();
    let mut gap = 0;
    for word in line.trim_start_matches(' ').split(' ') {
        gap += 1;
        if word.is_empty() {
            continue;
        }
        let unit = word.trim_end_matches([',', ';', ')', '.']);
        let with_unit = UNITS.contains(&unit);
        let number = word.starts_with(|c: char| c.is_ascii_digit());
        match words.last_mut() {
            Some((_, last))
                if (with_unit && last.ends_with(|c: char| c.is_ascii_digit()))
                    || (number && last == "total") =>
            {
                last.push_str(&" ".repeat(gap));
                last.push_str(word);
            }
            _ => words.push((gap, word.to_string())),
        }
        gap = 0;
    }
    for (gap, word) in &words {
        if !empty && current.width() + gap + word.width() > width {
            lines.push(std::mem::replace(&mut current, hanging.clone()));
            empty = true;
        }
        if !empty {
            current.push_str(&" ".repeat(*gap));
        }
        current.push_str(word);
        empty = false;
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::assert_cases;

    #[test]
    fn names_are_shortened_in_the_middle_to_the_width() {
        assert_cases(
            |(s, max)| shorten_middle(s, max),
            &[
                (("jdk-httpserver", 14), "jdk-httpserver".into()),
                (("jdk-httpserver", 10), "jdk-h…rver".into()),
                (("日本語の名前", 8), "日本…前".into()),
                (("abc", 1), "…".into()),
            ],
        );
        assert_eq!(shorten_middle("jdk-httpserver", 10).width(), 10);
        assert_cases(
            |(s, max)| keep_end(s, max),
            &[
                (("/tmp/run1/p.folded", 12), "…n1/p.folded".into()),
                (("p.folded", 12), "p.folded".into()),
            ],
        );
    }

    #[test]
    fn long_lines_wrap_at_spaces_with_a_hanging_indent() {
        let line = "  warning: 14.9% of the weight is in stacks of only transparent frames";
        let wrapped = wrap(line, 30);
        assert_eq!(
            wrapped,
            [
                "  warning: 14.9% of the weight",
                "    is in stacks of only",
                "    transparent frames",
            ]
        );
        assert!(wrapped.iter().all(|l| l.width() <= 30));
        assert_eq!(wrap("sum 2.29 GiB", 10), ["sum", "  2.29 GiB"]);
        // aligned columns keep their spaces; a break drops the spaces it replaces
        assert_eq!(
            wrap("  user      go module x", 20),
            ["  user      go", "    module x"]
        );
        assert_eq!(
            wrap("a.data: total 2.29 GiB", 16),
            ["a.data:", "  total 2.29 GiB"]
        );
        // a word longer than the width stays whole
        assert_eq!(
            wrap("a /very/long/path b", 8),
            ["a", "  /very/long/path", "  b"]
        );
    }
}
