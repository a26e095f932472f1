//! The one home of "which colour is this owner": the flame graph's SVG and the terminal table
//! both ask here, so an owner reads the same colour in both.
//!
//! One fixed, colour-blind-safe hue per category (the Okabe–Ito palette; grey for unknown),
//! and per owner inside a category a shade of that hue: mixed with white (lighter) or, for
//! hues light enough to keep black text readable, with black (darker). Mixing with white or
//! black keeps the hue, so a frame's category stays readable from its colour, while the
//! shades of one category are spread over the whole lightness range the hue allows: jvm, jdk,
//! glibc and ld.so (all runtime) are told apart at a glance, where tints of white alone
//! crowded a light hue such as sky blue into near-identical pale blues.
//!
//! The terminal gets the same RGB colour when it says it shows 24-bit colour (`COLORTERM`
//! `truecolor` or `24bit`), else the nearest of the 256 xterm colours, which every terminal
//! and `less -R` show.

use crate::model::{Category, Owner};
use anstyle::{Ansi256Color, RgbColor, Style};

pub use inferno::flamegraph::color::Color;

/// The colour of the root `all` frame and of rows without an owner: neutral.
pub const ROOT_COLOR: Color = Color {
    r: 0xdd,
    g: 0xdd,
    b: 0xdd,
};

/// One hue per category: the Okabe–Ito colour-blind-safe palette, grey for unknown.
pub fn category_color(c: Category) -> Color {
    let (r, g, b) = match c {
        Category::User => (0xD5, 0x5E, 0x00),      // vermillion
        Category::Framework => (0x00, 0x72, 0xB2), // blue
        Category::Library => (0x00, 0x9E, 0x73),   // bluish green
        Category::Runtime => (0x56, 0xB4, 0xE9),   // sky blue
        Category::Allocator => (0xE6, 0x9F, 0x00), // orange
        Category::Gc => (0xCC, 0x79, 0xA7),        // reddish purple
        Category::Kernel => (0xF0, 0xE4, 0x42),    // yellow
        Category::Unknown => (0x99, 0x99, 0x99),   // grey
    };
    Color { r, g, b }
}

/// The lightest shade: more white than this washes the hue out against the grey background.
const MAX_LIGHTEN: f64 = 0.72;
/// The darkest shade keeps this relative luminance, where black text still reads at about
/// WCAG's 4.5:1 contrast ((0.2 + 0.05) / 0.05 = 5).
const MIN_LUMINANCE: f64 = 0.2;
/// Two shades of one category differ by at least this much of the mixing range.
const MIN_STEP: f64 = 0.14;

/// WCAG relative luminance of `c`.
fn luminance(c: Color) -> f64 {
    let lin = |x: u8| {
        let s = x as f64 / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b)
}

/// Mixes `c` with white for `t` > 0 (1 is white) or with black for `t` < 0 (−1 is black).
/// The hue is unchanged either way.
pub fn shade(c: Color, t: f64) -> Color {
    let mix = |x: u8| {
        let x = x as f64;
        let v = if t >= 0.0 {
            x + (255.0 - x) * t
        } else {
            x * (1.0 + t)
        };
        v.round().clamp(0.0, 255.0) as u8
    };
    Color {
        r: mix(c.r),
        g: mix(c.g),
        b: mix(c.b),
    }
}

/// The mixing amounts of the first `n` owners of a category whose hue is `base`: the
/// heaviest owner keeps the pure hue, the next ones go to the ends of the allowed range and
/// then halve the gaps (1, 0, ½, ¼, ¾, …), skipping amounts closer than [`MIN_STEP`] to one
/// already taken, so the shades are as far apart as the hue allows.
fn shades(base: Color, n: usize) -> Vec<f64> {
    // darkest allowed: luminance scales about as (1 + t)^2.2 when mixing with black
    let darkest = -(1.0 - (MIN_LUMINANCE / luminance(base)).powf(1.0 / 2.2)).max(0.0);
    let mut taken = vec![0.0];
    let mut denominator = 1u32;
    'search: while taken.len() < n && denominator < 1 << 12 {
        for k in 0..=denominator {
            if denominator > 1 && k % 2 == 0 {
                continue; // already tried at a coarser step
            }
            // from the light end down: 1, 0, then odd multiples of the finer steps
            let q = 1.0 - k as f64 / denominator as f64;
            let t = darkest + q * (MAX_LIGHTEN - darkest);
            if taken.iter().all(|&u| (u - t).abs() >= MIN_STEP * 0.999) {
                taken.push(t);
                if taken.len() == n {
                    break 'search;
                }
            }
        }
        denominator *= 2;
    }
    // more owners than distinct shades: repeat the sequence (the legend still names them)
    let distinct = taken.len();
    (0..n).map(|i| taken[i % distinct]).collect()
}

/// The colours of [`owner_colors`], ranked by the owner view, then anywhere, in `attribution`:
/// the table and the flame graph of one profile give each owner the same colour.
pub fn attribution_colors(
    owners: &[Owner],
    attribution: &crate::aggregate::Attribution,
) -> Vec<Color> {
    let rank: Vec<(u128, u128)> = attribution
        .owners
        .iter()
        .map(|w| (w.owner, w.anywhere))
        .collect();
    owner_colors(owners, &rank)
}

/// A colour per owner (indexed by `OwnerId`): its category's hue, shaded by its rank among
/// the owners of that category, heaviest (by `rank_weight`, then name) first.
pub fn owner_colors(owners: &[Owner], rank_weight: &[(u128, u128)]) -> Vec<Color> {
    let mut order: Vec<usize> = (0..owners.len()).collect();
    order.sort_by(|&a, &b| {
        let weight = |i: usize| rank_weight.get(i).copied().unwrap_or_default();
        weight(b)
            .cmp(&weight(a))
            .then_with(|| owners[a].name.cmp(&owners[b].name))
    });
    let mut colors = vec![ROOT_COLOR; owners.len()];
    for category in Category::ALL {
        let members: Vec<usize> = (order.iter().copied())
            .filter(|&i| owners[i].category == category)
            .collect();
        let base = category_color(category);
        for (&i, t) in members.iter().zip(shades(base, members.len())) {
            colors[i] = shade(base, t);
        }
    }
    colors
}

/// `c` as a terminal foreground: 24-bit where the terminal says it shows it, else the
/// nearest xterm-256 colour.
pub fn terminal_style(c: Color, truecolor: bool) -> Style {
    let color: anstyle::Color = if truecolor {
        RgbColor(c.r, c.g, c.b).into()
    } else {
        Ansi256Color(nearest_xterm256(c)).into()
    };
    Style::new().fg_color(Some(color))
}

/// Whether the terminal shows 24-bit colour, as terminals announce it (`COLORTERM`).
pub fn terminal_truecolor() -> bool {
    std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit")
}

/// The nearest colour of xterm's 6×6×6 cube (16–231) or grey ramp (232–255).
fn nearest_xterm256(c: Color) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest_level = |x: u8| {
        (0..6)
            .min_by_key(|&i| (LEVELS[i] as i32 - x as i32).abs())
            .unwrap_or(0)
    };
    let (r, g, b) = (nearest_level(c.r), nearest_level(c.g), nearest_level(c.b));
    let cube = Color {
        r: LEVELS[r],
        g: LEVELS[g],
        b: LEVELS[b],
    };
    let mean = (c.r as u32 + c.g as u32 + c.b as u32) / 3;
    let grey_index = ((mean.saturating_sub(8)) / 10).min(23) as u8;
    let grey_level = 8 + 10 * grey_index;
    let grey = Color {
        r: grey_level,
        g: grey_level,
        b: grey_level,
    };
    if distance(c, grey) < distance(c, cube) {
        232 + grey_index
    } else {
        16 + 36 * r as u8 + 6 * g as u8 + b as u8
    }
}

/// Squared RGB distance.
fn distance(a: Color, b: Color) -> u32 {
    let d = |x: u8, y: u8| (x as i32 - y as i32).pow(2) as u32;
    d(a.r, b.r) + d(a.g, b.g) + d(a.b, b.b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hue(c: Color) -> f64 {
        let (r, g, b) = (c.r as f64, c.g as f64, c.b as f64);
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        let h = if max == r {
            ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            (b - r) / d + 2.0
        } else {
            (r - g) / d + 4.0
        };
        h * 60.0
    }

    #[test]
    fn shades_keep_the_category_hue_and_are_told_apart() {
        for c in Category::ALL {
            let base = category_color(c);
            let colors: Vec<Color> = shades(base, 6)
                .into_iter()
                .map(|t| shade(base, t))
                .collect();
            assert_eq!(
                colors[0], base,
                "{c}: the heaviest owner keeps the pure hue"
            );
            for t in &colors {
                if c == Category::Unknown {
                    assert!(t.r == t.g && t.g == t.b);
                } else {
                    assert!((hue(*t) - hue(base)).abs() < 4.0, "{c}: {t:?} vs {base:?}");
                }
                assert!(luminance(*t) >= MIN_LUMINANCE.min(luminance(base)) - 0.01);
            }
            // the first four owners of a category (jvm, jdk, glibc, ld.so are four runtimes)
            // differ by a clearly visible step: 40 in RGB distance is about 10 ΔE
            for i in 0..4 {
                for j in 0..i {
                    let d = (distance(colors[i], colors[j]) as f64).sqrt();
                    assert!(
                        d >= 40.0,
                        "{c}: shades {i} {:?} and {j} {:?}: {d}",
                        colors[i],
                        colors[j]
                    );
                }
            }
        }
    }

    #[test]
    fn owners_of_one_category_get_distinct_colors_by_weight() {
        let owner = |name: &str| Owner {
            name: name.into(),
            category: Category::Runtime,
            transparent: true,
            guessed: false,
        };
        let owners = [owner("jvm"), owner("jdk"), owner("glibc"), owner("ld.so")];
        let colors = owner_colors(&owners, &[(10, 0), (20, 0), (5, 0), (1, 0)]);
        assert_eq!(
            colors[1],
            category_color(Category::Runtime),
            "jdk is heaviest"
        );
        for i in 0..4 {
            for j in 0..i {
                assert_ne!(colors[i], colors[j]);
            }
        }
    }

    #[test]
    fn xterm_colors_are_the_nearest() {
        assert_eq!(nearest_xterm256(Color { r: 0, g: 0, b: 0 }), 16);
        assert_eq!(
            nearest_xterm256(Color {
                r: 255,
                g: 255,
                b: 255
            }),
            231
        );
        assert_eq!(
            nearest_xterm256(Color {
                r: 128,
                g: 128,
                b: 128
            }),
            244
        );
        // vermillion D55E00 → 166 (rgb 215,95,0)
        assert_eq!(nearest_xterm256(category_color(Category::User)), 166);
    }
}
