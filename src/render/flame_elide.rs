//! Frames a flame graph would not draw, dropped before inferno builds it (issues 23, 24).
//!
//! inferno merges every line into frames and only then leaves out those narrower than
//! `--min-width` (`width < min_width × total / 100`), so 5 M distinct stacks whose leaves are
//! all too narrow to draw still cost a frame each. Here, on the same sorted lines:
//! - a narrow frame's subtree is folded into it (the line stops at the narrow frame): every
//!   frame below is narrower still;
//! - adjacent narrow siblings are merged into one line named after the first, as long as
//!   the run stays narrow: it takes the place they took, so every frame that is drawn keeps
//!   its position and width, and the run is left out as they were.
//!
//! The drawn frames and the total are those inferno draws from the whole input.

use std::borrow::Cow;

/// The lines to draw instead of `lines` (`stack WEIGHT`, root first), for a graph that
/// leaves out frames narrower than `min_width` percent; the lines as given when nothing can
/// be dropped (no width, a line that is not `stack WEIGHT`).
pub fn elide_narrow<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    min_width: f64,
) -> Vec<Cow<'a, str>> {
    let mut lines: Vec<&str> = lines.into_iter().collect();
    let unchanged = |lines: Vec<&'a str>| lines.into_iter().map(Cow::Borrowed).collect();
    // inferno's order: the lines sorted as text (so `f3_10` comes before `f3_1;x`, and a
    // frame's lines need not be adjacent: inferno then draws it twice, and so is it here)
    lines.sort_unstable();
    let mut entries: Vec<(&str, u128)> = Vec::with_capacity(lines.len());
    for line in &lines {
        match line
            .rsplit_once(' ')
            .and_then(|(s, w)| Some((s, w.parse::<u128>().ok()?)))
        {
            Some(e) => entries.push(e),
            None => return unchanged(lines),
        }
    }
    let total: u128 = entries.iter().map(|e| e.1).sum();
    if min_width <= 0.0 || total == 0 {
        return unchanged(lines);
    }
    // inferno's own test, in its own arithmetic: a frame is drawn when its width is not less
    let min_time = min_width / (100.0 / total as f64);
    let narrow = |w: u128| (w as f64) < min_time;
    let cuts = cut_depths(&entries, narrow);
    let nodes = narrow_nodes(&entries, &cuts);
    drop(cuts);
    merge_siblings(&lines, &entries, nodes, narrow)
}

/// For each line, the depth of its outermost narrow frame (`u32::MAX`: none): found by
/// walking the sorted lines once with the path of frames they share open, each frame's
/// weight summed while it is open and judged when it closes. A frame is a run of adjacent
/// lines with the same frames down to it, as inferno merges them.
fn cut_depths(entries: &[(&str, u128)], narrow: impl Fn(u128) -> bool) -> Vec<u32> {
    let mut cuts = vec![u32::MAX; entries.len()];
    // the open frames, root first: (name, first line, weight so far)
    let mut open: Vec<(&str, usize, u128)> = Vec::new();
    let close = |open: &mut Vec<(&str, usize, u128)>, keep: usize, end: usize, cuts: &mut [u32]| {
        while open.len() > keep {
            let (_, first, weight) = open.pop().unwrap();
            if narrow(weight) {
                let depth = open.len() as u32;
                for c in &mut cuts[first..end] {
                    *c = (*c).min(depth);
                }
            }
        }
    };
    for (i, (stack, weight)) in entries.iter().enumerate() {
        let mut shared = 0;
        let mut rest = Vec::new();
        for (depth, frame) in stack.split(';').enumerate() {
            if rest.is_empty() && depth < open.len() && open[depth].0 == frame {
                shared = depth + 1;
            } else {
                rest.push(frame);
            }
        }
        close(&mut open, shared, i, &mut cuts);
        open.extend(rest.into_iter().map(|f| (f, i, 0)));
        for o in &mut open {
            o.2 += weight;
        }
    }
    close(&mut open, 0, entries.len(), &mut cuts);
    cuts
}

/// A line to draw: a line as given, or a narrow frame with everything below it folded in.
/// Indexes into the lines, not strings: a graph of 5 M distinct stacks has millions of them.
struct Node {
    /// The entry its text comes from.
    entry: u32,
    /// For a narrow frame, the length of its stack in that entry (`None`: the line as given).
    kept: Option<u32>,
    /// Whether frames below it were folded in (then its line ends in `;`, and sorts where
    /// they did; the empty child, as narrow as its parent, is not drawn).
    below: bool,
    weight: u128,
}

impl Node {
    /// The narrow frame's stack, its parent's, and its name.
    fn frame<'a>(&self, entries: &[(&'a str, u128)]) -> Option<(&'a str, &'a str, &'a str)> {
        let kept = &entries[self.entry as usize].0[..self.kept? as usize];
        let (parent, name) = kept.rsplit_once(';').unwrap_or(("", kept));
        Some((kept, parent, name))
    }

    /// The frame this node draws right under `parent`, if it is under it.
    fn child_of<'a>(&self, parent: &str, entries: &[(&'a str, u128)]) -> Option<&'a str> {
        let stack = match self.frame(entries) {
            Some((kept, _, _)) => kept,
            None => entries[self.entry as usize].0,
        };
        let rest = if parent.is_empty() {
            stack
        } else {
            stack.strip_prefix(parent)?.strip_prefix(';')?
        };
        Some(rest.split(';').next().unwrap_or(rest))
    }
}

/// The lines grouped into what to draw: each narrow frame (the lines of one run that is cut
/// there) as one node, the other lines as they are.
fn narrow_nodes(entries: &[(&str, u128)], cuts: &[u32]) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut last_cut: Option<&str> = None;
    for (i, (&(stack, weight), &cut)) in entries.iter().zip(cuts).enumerate() {
        if cut == u32::MAX {
            last_cut = None;
            nodes.push(Node {
                entry: i as u32,
                kept: None,
                below: false,
                weight,
            });
            continue;
        }
        let (kept, below) = match stack.match_indices(';').nth(cut as usize) {
            Some((at, _)) => (&stack[..at], true),
            None => (stack, false),
        };
        match nodes.last_mut() {
            Some(node) if last_cut == Some(kept) => {
                node.weight += weight;
                node.below |= below;
            }
            _ => {
                nodes.push(Node {
                    entry: i as u32,
                    kept: Some(kept.len() as u32),
                    below,
                    weight,
                });
                last_cut = Some(kept);
            }
        }
    }
    nodes
}

/// Adjacent narrow siblings merged into one line named after the first while their sum
/// stays narrow, and never up to a sibling of the same name (inferno would merge the two).
fn merge_siblings<'a>(
    lines: &[&'a str],
    entries: &[(&'a str, u128)],
    nodes: Vec<Node>,
    narrow: impl Fn(u128) -> bool,
) -> Vec<Cow<'a, str>> {
    let mut out: Vec<Cow<'a, str>> = Vec::with_capacity(nodes.len());
    let mut i = 0;
    while i < nodes.len() {
        let first = &nodes[i];
        let Some((kept, parent, name)) = first.frame(entries) else {
            out.push(Cow::Borrowed(lines[first.entry as usize]));
            i += 1;
            continue;
        };
        // the merged line sorts where the first did, so it keeps the first's form
        let mut weight = first.weight;
        let below = first.below;
        let mut j = i + 1;
        while let Some(next) = nodes.get(j) {
            let sibling = next.frame(entries).is_some_and(|(_, p, _)| p == parent);
            // the node after the run must not be a frame of the run's name under the same
            // parent: inferno would draw the two as one
            let clash = nodes
                .get(j + 1)
                .is_some_and(|after| after.child_of(parent, entries) == Some(name));
            if !sibling || !narrow(weight + next.weight) || clash {
                break;
            }
            weight += next.weight;
            j += 1;
        }
        out.push(Cow::Owned(format!(
            "{kept}{} {weight}",
            if below { ";" } else { "" }
        )));
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elided(lines: &[&str], min_width: f64) -> Vec<String> {
        elide_narrow(lines.iter().copied(), min_width)
            .into_iter()
            .map(|c| c.into_owned())
            .collect()
    }

    #[test]
    fn narrow_leaves_merge_into_runs_that_stay_narrow_and_wide_frames_keep_their_place() {
        // total 1000, min width 1%: frames under 10 are not drawn
        let lines = [
            "main;a 500",
            "main;b;x 3",
            "main;b;y 4",
            "main;b;z 5",
            "main;c 480",
            "main;d 4",
            "main;e 4",
        ];
        assert_eq!(
            elided(&lines, 1.0),
            [
                "main;a 500",
                // b (12) is drawn; its leaves are not: x and y merge (7), z would make 12
                "main;b;x 7",
                "main;b;z 5",
                "main;c 480",
                // d and e, narrow siblings after c: one run of 8
                "main;d 8",
            ]
        );
    }

    #[test]
    fn a_narrow_frame_takes_its_subtree_and_wide_ones_are_untouched() {
        let lines = ["r;big 990", "r;small;p;q 6", "r;small;p;s 4"];
        // `;` after it: the line sorts where the lines below it did
        assert_eq!(elided(&lines, 2.0), ["r;big 990", "r;small; 10"]);
        // no width: nothing dropped
        assert_eq!(elided(&lines, 0.0), lines);
    }

    /// inferno's SVG of `lines` at `min_width` percent.
    fn inferno_svg<'a>(lines: impl IntoIterator<Item = &'a str>, min_width: f64) -> String {
        let mut o = inferno::flamegraph::Options::default();
        o.min_width = min_width;
        // colours from the names, not at random
        o.hash = true;
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut o, lines, &mut svg).unwrap();
        String::from_utf8(svg).unwrap()
    }

    #[test]
    fn inferno_draws_the_same_svg_from_the_elided_lines() {
        // trees of 3,000 stacks with weights spread over four orders of magnitude, drawn at
        // several widths: the SVG is byte for byte the one of the whole input
        for start in (1..=12u64).map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            same_svg_for_a_random_tree(start);
        }
    }

    fn same_svg_for_a_random_tree(start: u64) {
        let mut seed = start;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let lines: Vec<String> = (0..3000)
            .map(|_| {
                let depth = 1 + next(6);
                let frames: Vec<String> = (0..depth)
                    .map(|d| format!("f{d}_{}", next(4 + d * 3)))
                    .collect();
                let magnitude = 10u64.pow(1 + next(4) as u32);
                let weight = 1 + next(magnitude);
                format!("{} {weight}", frames.join(";"))
            })
            .collect();
        for min_width in [0.01, 0.1, 0.5, 2.0] {
            let elided = elide_narrow(lines.iter().map(String::as_str), min_width);
            assert!(elided.len() < lines.len() || min_width < 0.1, "{min_width}");
            let (got, want) = (
                inferno_svg(elided.iter().map(|l| l.as_ref()), min_width),
                inferno_svg(lines.iter().map(String::as_str), min_width),
            );
            if got != want {
                let at = got
                    .bytes()
                    .zip(want.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = at.saturating_sub(300);
                panic!(
                    "min width {min_width}%: differs at byte {at}:\n{}\n---\n{}",
                    &got[from..(at + 300).min(got.len())],
                    &want[from..(at + 300).min(want.len())]
                );
            }
        }
    }

    #[test]
    fn lines_that_are_not_stack_and_weight_are_passed_through() {
        let lines = ["a;b x", "c 1"];
        assert_eq!(elided(&lines, 50.0), ["a;b x", "c 1"]);
    }
}
