//! Frames a flame graph would not draw, dropped before inferno builds it (issues 23, 24).
//!
//! inferno merges every line into frames and only then leaves out those narrower than
//! `--min-width` (`width < min_width × total / 100`), so 5 M distinct stacks whose leaves are
//! all too narrow to draw still cost a frame each. Here, on the lines in inferno's order
//! (sorted as text, [`FlameLines::sort_as_text`]), with frames compared by text id:
//! - a narrow frame's subtree is folded into it (the line stops at the narrow frame): every
//!   frame below is narrower still;
//! - adjacent narrow siblings are merged into one line named after the first, as long as
//!   the run stays narrow: it takes the place they took, so every frame that is drawn keeps
//!   its position and width, and the run is left out as they were.
//!
//! The drawn frames and the total are those inferno draws from the whole input.

use crate::aggregate::flame_lines::FlameLines;
use crate::model::folded;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// A line to hand to inferno: the first `depth` frames of a stack, with `weight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    /// Index into [`FlameLines::stacks`].
    pub stack: u32,
    pub depth: u32,
    /// Whether frames below were folded in: the line then ends in `;` (an empty child as
    /// narrow as its parent, which is not drawn), so that it sorts where they did.
    pub below: bool,
    pub weight: u128,
}

impl Drawn {
    /// The line's text, `root;…;frame[;] weight`.
    pub fn text(&self, lines: &FlameLines) -> String {
        let mut text = String::new();
        lines.write_frames(
            &lines.stacks[self.stack as usize],
            self.depth as usize,
            &mut text,
        );
        if self.below {
            text.push(folded::SEPARATOR);
        }
        folded::push_count(&mut text, self.weight);
        text
    }

    /// The frame texts it draws, root first.
    pub fn frames<'a>(&self, lines: &'a FlameLines) -> &'a [u32] {
        &lines.frames(&lines.stacks[self.stack as usize])[..self.depth as usize]
    }
}

/// The lines to draw instead of the lines `selected` (indexes into `lines.stacks`), for a
/// graph that leaves out frames narrower than `min_width` percent; all of them when nothing
/// can be dropped (no width, no weight). In inferno's order.
pub fn elide_narrow(lines: &FlameLines, selected: Vec<u32>, min_width: f64) -> Vec<Drawn> {
    elide(lines, selected, min_width, PIPELINED_LINES)
}

/// [`elide_narrow`], finding the cuts beside the merge from `pipelined_from` lines on.
fn elide(
    lines: &FlameLines,
    mut selected: Vec<u32>,
    min_width: f64,
    pipelined_from: usize,
) -> Vec<Drawn> {
    // summed in the order the lines are kept, before they are sorted and lie scattered
    let total: u128 = (selected.iter())
        .map(|&i| lines.stacks[i as usize].weight())
        .sum();
    lines.sort_as_text(&mut selected);
    let entries = Entries {
        lines,
        selected: &selected,
    };
    let whole = |i: usize| Drawn {
        stack: selected[i],
        depth: entries.at(i).0.len() as u32,
        below: false,
        weight: entries.at(i).1,
    };
    if min_width <= 0.0 || total == 0 {
        return (0..entries.len()).map(whole).collect();
    }
    // inferno's own test, in its own arithmetic: a frame is drawn when its width is not less
    let min_time = min_width / (100.0 / total as f64);
    let narrow = |w: u128| (w as f64) < min_time;
    let cuts = Cuts::new(entries.len());
    if entries.len() < pipelined_from {
        cut_depths(&entries, narrow, &cuts);
        return merge_siblings(&selected, narrow_nodes(&entries, &cuts), narrow);
    }
    // the cuts are found on one core while the merge reads those already final on the
    // other: two passes over a million scattered lines, side by side
    std::thread::scope(|scope| {
        let beside = std::thread::Builder::new()
            .name("whose-cuts".into())
            .spawn_scoped(scope, || {
                // every line final even should the pass stop early: the merge never waits
                // forever
                let _all_final = AllFinal(&cuts);
                cut_depths(&entries, narrow, &cuts)
            });
        if beside.is_err() {
            // no thread to be had: one pass after the other
            cut_depths(&entries, narrow, &cuts);
        }
        merge_siblings(&selected, narrow_nodes(&entries, &cuts), narrow)
    })
}

/// Publishes every line as final when dropped.
struct AllFinal<'c>(&'c Cuts);

impl Drop for AllFinal<'_> {
    fn drop(&mut self) {
        self.0.publish(usize::MAX);
    }
}

/// Lines from which the cuts are found beside the merge ([`Cuts`]).
const PIPELINED_LINES: usize = 1 << 16;

/// Each line's cut ([`cut_depths`]): written by the pass that finds them, read by the merge
/// as soon as they are final. A line's cut is final once no frame over it can still turn
/// out narrow: every frame that covers it has closed or already weighs enough to be drawn.
struct Cuts {
    depths: Vec<AtomicU32>,
    /// Lines below this are final.
    final_below: AtomicUsize,
    /// Every publication and the cuts then, for tests of the promise.
    #[cfg(test)]
    published: std::sync::Mutex<Vec<(usize, Vec<u32>)>>,
}

impl Cuts {
    fn new(lines: usize) -> Cuts {
        Cuts {
            depths: (0..lines).map(|_| AtomicU32::new(u32::MAX)).collect(),
            final_below: AtomicUsize::new(0),
            #[cfg(test)]
            published: Default::default(),
        }
    }

    /// Line `i`'s cut, once it is final (None past the last line).
    fn get(&self, i: usize) -> Option<u32> {
        let depth = self.depths.get(i)?;
        let mut spins = 0u32;
        while self.final_below.load(Ordering::Acquire) <= i {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Some(depth.load(Ordering::Relaxed))
    }

    #[cfg(test)]
    fn snapshot(&self) -> Vec<u32> {
        self.depths
            .iter()
            .map(|d| d.load(Ordering::Relaxed))
            .collect()
    }

    /// Cuts lines `lines` at `depth` at most (the one writer, so a load and a store).
    fn lower(&self, lines: std::ops::Range<usize>, depth: u32) {
        for c in &self.depths[lines] {
            if depth < c.load(Ordering::Relaxed) {
                c.store(depth, Ordering::Relaxed);
            }
        }
    }

    /// Lines below `below` are final.
    fn publish(&self, below: usize) {
        #[cfg(test)]
        self.published
            .lock()
            .unwrap()
            .push((below, self.snapshot()));
        self.final_below.store(below, Ordering::Release);
    }
}

/// The sorted lines' frames and weights, read where they are kept (a list of them was 24
/// bytes a line: 24 MB for a million lines).
struct Entries<'a> {
    lines: &'a FlameLines,
    selected: &'a [u32],
}

impl<'a> Entries<'a> {
    fn len(&self) -> usize {
        self.selected.len()
    }

    /// Line `i`'s frames, root first, and weight.
    fn at(&self, i: usize) -> (&'a [u32], u128) {
        let s = &self.lines.stacks[self.selected[i] as usize];
        (self.lines.frames(s), s.weight())
    }

    fn get(&self, i: usize) -> Option<(&'a [u32], u128)> {
        (i < self.len()).then(|| self.at(i))
    }
}

/// For each line, the depth of its outermost narrow frame (`u32::MAX`: none): found by
/// walking the sorted lines once with the path of frames they share open, each frame's
/// weight summed while it is open and judged when it closes. A frame is a run of adjacent
/// lines with the same frames down to it, as inferno merges them.
fn cut_depths(entries: &Entries<'_>, narrow: impl Fn(u128) -> bool, cuts: &Cuts) {
    // the open frames, root first: (text, first line, weight so far)
    let mut open: Vec<(u32, usize, u128)> = Vec::new();
    let close = |open: &mut Vec<(u32, usize, u128)>, keep: usize, end: usize| {
        while open.len() > keep {
            let (_, first, weight) = open.pop().unwrap();
            if narrow(weight) {
                cuts.lower(first..end, open.len() as u32);
            }
        }
    };
    for i in 0..entries.len() {
        let (stack, weight) = entries.at(i);
        let shared = stack
            .iter()
            .zip(&open)
            .take_while(|(f, o)| **f == o.0)
            .count();
        close(&mut open, shared, i);
        if i % PUBLISH_EVERY == 0 {
            // the lines before the first open frame that could still be narrow are final
            let undecided = open.iter().find(|o| narrow(o.2)).map_or(i, |o| o.1);
            cuts.publish(undecided);
        }
        open.extend(stack[shared..].iter().map(|&f| (f, i, 0)));
        for o in &mut open {
            o.2 += weight;
        }
    }
    close(&mut open, 0, entries.len());
    cuts.publish(entries.len());
}

/// Lines between the cut pass's reports of how far its cuts are final.
const PUBLISH_EVERY: usize = 256;

/// A line to draw: a line as given, or a narrow frame with everything below it folded in.
/// Made one at a time as the lines are walked (a graph of 5 M distinct stacks has millions),
/// each holding its line's frames so that they are looked up once.
struct Node<'a> {
    /// The entry its frames come from.
    entry: u32,
    /// That entry's frames.
    stack: &'a [u32],
    /// For a narrow frame, its depth + 1 in that entry (`None`: the line as given).
    kept: Option<u32>,
    /// Whether frames below it were folded in.
    below: bool,
    weight: u128,
}

impl<'a> Node<'a> {
    /// The narrow frame's stack, its parent's, and its text.
    fn frame(&self) -> Option<(&'a [u32], &'a [u32], u32)> {
        let kept = &self.stack[..self.kept? as usize];
        let (&name, parent) = kept.split_last()?;
        Some((kept, parent, name))
    }

    /// The frame this node draws right under `parent`, if it is under it.
    fn child_of(&self, parent: &[u32]) -> Option<u32> {
        let stack = match self.frame() {
            Some((kept, _, _)) => kept,
            None => self.stack,
        };
        stack
            .strip_prefix(parent)
            .and_then(|rest| rest.first().copied())
    }
}

/// The lines grouped into what to draw, in order: each narrow frame (the lines of one run
/// that is cut there) as one node, the other lines as they are. Yielded as they are found,
/// so a million narrow leaves are not a million nodes held at once (32 MB).
fn narrow_nodes<'e>(
    entries: &'e Entries<'e>,
    cuts: &'e Cuts,
) -> impl Iterator<Item = Node<'e>> + 'e {
    let mut i = 0;
    std::iter::from_fn(move || {
        let ((stack, weight), cut) = (entries.get(i)?, cuts.get(i)?);
        let entry = i as u32;
        i += 1;
        if cut == u32::MAX {
            return Some(Node {
                entry,
                stack,
                kept: None,
                below: false,
                weight,
            });
        }
        let kept = &stack[..cut as usize + 1];
        let mut node = Node {
            entry,
            stack,
            kept: Some(kept.len() as u32),
            below: stack.len() > kept.len(),
            weight,
        };
        // the lines after it cut at the same frame are in it
        while let (Some((next, w)), Some(c)) = (entries.get(i), cuts.get(i)) {
            if c as usize + 1 != kept.len() || next[..kept.len()] != *kept {
                break;
            }
            node.weight += w;
            node.below |= next.len() > kept.len();
            i += 1;
        }
        Some(node)
    })
}

/// Adjacent narrow siblings merged into one line named after the first while their sum
/// stays narrow, and never up to a sibling of the same name (inferno would merge the two).
fn merge_siblings<'a>(
    selected: &[u32],
    nodes: impl Iterator<Item = Node<'a>>,
    narrow: impl Fn(u128) -> bool,
) -> Vec<Drawn> {
    let mut out: Vec<Drawn> = Vec::new();
    let mut nodes = Lookahead::new(nodes);
    while let Some(first) = nodes.next() {
        let stack = selected[first.entry as usize];
        let Some((kept, parent, name)) = first.frame() else {
            out.push(Drawn {
                stack,
                depth: first.stack.len() as u32,
                below: false,
                weight: first.weight,
            });
            continue;
        };
        // the merged line sorts where the first did, so it keeps the first's form
        let mut weight = first.weight;
        while let (Some(next), after) = nodes.peek_two() {
            let sibling = next.frame().is_some_and(|(_, p, _)| p == parent);
            // the node after the run must not be a frame of the run's name under the same
            // parent: inferno would draw the two as one
            let clash = after.is_some_and(|after| after.child_of(parent) == Some(name));
            if !sibling || !narrow(weight + next.weight) || clash {
                break;
            }
            weight += next.weight;
            nodes.next();
        }
        out.push(Drawn {
            stack,
            depth: kept.len() as u32,
            below: first.below,
            weight,
        });
    }
    out
}

/// An iterator that can look two items ahead.
struct Lookahead<I: Iterator> {
    items: I,
    ahead: std::collections::VecDeque<I::Item>,
}

impl<I: Iterator> Lookahead<I> {
    fn new(items: I) -> Self {
        Lookahead {
            items,
            ahead: std::collections::VecDeque::with_capacity(2),
        }
    }

    /// The next item and the one after it.
    fn peek_two(&mut self) -> (Option<&I::Item>, Option<&I::Item>) {
        while self.ahead.len() < 2 {
            match self.items.next() {
                Some(item) => self.ahead.push_back(item),
                None => break,
            }
        }
        (self.ahead.front(), self.ahead.get(1))
    }

    fn next(&mut self) -> Option<I::Item> {
        self.ahead.pop_front().or_else(|| self.items.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OwnerId;

    fn flame(lines: &[&str]) -> FlameLines {
        FlameLines::from_text(lines.iter().copied(), OwnerId::UNCLASSIFIED).unwrap()
    }

    fn elided(lines: &[&str], min_width: f64) -> Vec<String> {
        let flame = flame(lines);
        elide_narrow(&flame, flame.select(None), min_width)
            .iter()
            .map(|d| d.text(&flame))
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
            same_svg_for_a_random_tree(start, start % 3 == 0);
        }
    }

    /// Every line the cut pass reports final has its final cut then.
    fn final_cuts_are_published_final(flame: &FlameLines, min_width: f64) {
        let mut selected = flame.select(None);
        flame.sort_as_text(&mut selected);
        let entries = Entries {
            lines: flame,
            selected: &selected,
        };
        let min_time = min_width / (100.0 / flame.total as f64);
        let cuts = Cuts::new(entries.len());
        cut_depths(&entries, |w| (w as f64) < min_time, &cuts);
        let last = cuts.snapshot();
        let published = cuts.published.into_inner().unwrap();
        assert!(published.len() > 2, "{}", published.len());
        for (below, then) in published {
            assert_eq!(then[..below], last[..below], "{min_width}% below {below}");
        }
    }

    fn same_svg_for_a_random_tree(start: u64, spaced: bool) {
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
                    .map(|d| {
                        // `f1_2 x` after `f1_2`: the order falls back to bytes
                        let space = if spaced && next(5) == 0 { " x" } else { "" };
                        format!("f{d}_{}{space}", next(4 + d * 3))
                    })
                    .collect();
                let magnitude = 10u64.pow(1 + next(4) as u32);
                let weight = 1 + next(magnitude);
                let mut line = folded::join_frames(&frames);
                folded::push_count(&mut line, weight);
                line
            })
            .collect();
        for min_width in [0.01, 0.1, 0.5, 2.0] {
            let flame =
                FlameLines::from_text(lines.iter().map(String::as_str), OwnerId(0)).unwrap();
            let elided: Vec<String> = elide_narrow(&flame, flame.select(None), min_width)
                .iter()
                .map(|d| d.text(&flame))
                .collect();
            assert!(elided.len() < lines.len() || min_width < 0.1, "{min_width}");
            // the cuts found beside the merge, as in large graphs: the same lines
            assert_eq!(
                elide(&flame, flame.select(None), min_width, 0),
                elide(&flame, flame.select(None), min_width, usize::MAX),
                "{min_width}"
            );
            final_cuts_are_published_final(&flame, min_width);
            let (got, want) = (
                inferno_svg(elided.iter().map(String::as_str), min_width),
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
}
