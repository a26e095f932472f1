//! Flame graphs coloured by owner, drawn by inferno used as a library.
//!
//! inferno has no per-frame colour callback; its hook is the palette map, keyed by frame
//! text. The folded lines carry the owner in every frame's text (see
//! [`crate::aggregate::flame_lines`]), so pre-filling the map with each distinct text's owner
//! colour colours every frame exactly, and inferno's own tooltip shows the owner.
//!
//! The legend (owners, their colours and owner-view shares) is drawn as an SVG group of our
//! own, added in one XML-aware pass over inferno's output: events are copied through
//! quick-xml (the XML crate inferno itself writes with), the root `<svg>`'s height and
//! viewBox and the background's height grow by the legend's height, and the legend group is
//! written before the root closes. inferno's subtitle and notes could only carry plain text
//! (no colour swatches), and nesting inferno's document inside another `<svg>` breaks its
//! script (`document.getElementsByTagName("svg")[0]`); editing the SVG text with patterns
//! would break on the first escaped name. Every legend entry can run inferno's own search,
//! which highlights that owner's frames and prints the share they cover.
//!
//! Colours come from [`super::palette`], which the terminal table uses too.

use crate::aggregate::flame_lines::FlameLines;
use crate::model::{Category, OwnerId};
use inferno::flamegraph::color::{BackgroundColor, PaletteMap};
use inferno::flamegraph::{self, Direction, Options, TextTruncateDirection};
use quick_xml::Reader;
use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use std::io::{self, Write};

pub use super::palette::{Color, ROOT_COLOR};

/// Left and right padding of inferno's frames (its `XPAD`), so the legend lines up.
const XPAD: usize = 10;
/// inferno's default image width, used to lay out the legend when none is given.
const DEFAULT_WIDTH: usize = 1200;
const LEGEND_ROW: usize = 18;
const LEGEND_TOP: usize = 26;
/// Each legend column wants about this many pixels.
const LEGEND_COLUMN: usize = 300;

/// inferno's palette map, pre-filled with the owner colour of every frame text the lines to
/// draw hold (and only those: a graph of 5 M distinct frames draws a few thousand).
fn palette<'a>(
    lines: &FlameLines,
    drawn: impl IntoIterator<Item = &'a [u32]>,
    colors: &[Color],
) -> PaletteMap {
    let mut map = PaletteMap::default();
    map.insert("", ROOT_COLOR);
    let mut seen = vec![false; lines.texts.count()];
    for frames in drawn {
        for &t in frames {
            if !std::mem::replace(&mut seen[t as usize], true) {
                let owner = lines.texts.owner(t);
                map.insert(lines.texts.text(t), colors[owner.0 as usize]);
            }
        }
    }
    map
}

/// What every graph of one run shares.
#[derive(Debug, Clone)]
pub struct Style {
    pub title: String,
    pub subtitle: Option<String>,
    /// What the counts are (`samples`, `bytes`, `ns`), for inferno's tooltips.
    pub count_name: String,
    /// Image width in pixels; `None` is inferno's fluid width.
    pub width: Option<usize>,
    /// Omit frames narrower than this percentage of the total.
    pub min_width: f64,
    /// Icicle graph: roots at the top.
    pub inverted: bool,
    /// Stacks reversed: leaves at the root (a "who calls this" graph).
    pub reverse: bool,
}

/// The legend under the graph.
#[derive(Debug, Clone, Default)]
pub struct Legend {
    pub heading: String,
    pub entries: Vec<LegendEntry>,
}

#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub owner: String,
    pub category: Category,
    /// The swatch; `None` in differential graphs, which colour by growth.
    pub color: Option<Color>,
    /// Exact weight and share of the samples the entry's search matches (the owner view when
    /// colouring by owner, on the stack when colouring each frame by its own owner), also
    /// written as data attributes: inferno's "Matched" for the search is this share.
    pub weight: u128,
    pub share: f64,
    pub label: String,
    /// A regular expression for inferno's search that matches this owner's frames.
    pub search: Option<String>,
}

fn options<'a>(style: &Style, palette: Option<&'a mut PaletteMap>) -> Options<'a> {
    let mut o = Options::default();
    o.title = style.title.clone();
    o.subtitle = style.subtitle.clone();
    o.count_name = style.count_name.clone();
    o.image_width = style.width;
    o.min_width = style.min_width;
    o.direction = if style.inverted {
        Direction::Inverted
    } else {
        Direction::Straight
    };
    o.reverse_stack_order = style.reverse;
    o.bgcolors = Some(BackgroundColor::Grey);
    // a label too long for its frame keeps its start (`com.shop.Ord..`), as inferno's
    // default does not: its left truncation keeps only the end (`..nel]`), mostly the owner
    o.text_truncate_direction = TextTruncateDirection::Right;
    o.palette_map = palette;
    o
}

/// Draws the lines of `owner`'s samples (or all), each frame in its text's owner colour from
/// `colors`, with `legend` under the graph.
pub fn write_svg(
    lines: &FlameLines,
    owner: Option<OwnerId>,
    colors: &[Color],
    style: &Style,
    legend: &Legend,
    out: &mut dyn Write,
) -> io::Result<()> {
    let selected = lines.select(owner);
    let (texts, mut palette) = if style.reverse {
        // reversed stacks are merged leaf first by inferno: drop nothing from the lines then
        let stacks = selected.iter().map(|&i| &lines.stacks[i as usize]);
        let palette = palette(lines, stacks.clone().map(|s| lines.frames(s)), colors);
        (stacks.map(|s| lines.line(s)).collect::<Vec<_>>(), palette)
    } else {
        let drawn = super::elide::elide_narrow(lines, selected, style.min_width);
        let palette = palette(lines, drawn.iter().map(|d| d.frames(lines)), colors);
        (drawn.iter().map(|d| d.text(lines)).collect(), palette)
    };
    let mut svg = Vec::new();
    flamegraph::from_lines(
        &mut options(style, Some(&mut palette)),
        texts.iter().map(String::as_str),
        &mut svg,
    )?;
    append_legend(&svg, legend, style.width, out)
}

/// A differential graph: `new`'s stacks, coloured by growth from `base` (red grew, blue
/// shrank). With `normalize`, `base` is scaled to `new`'s total first.
pub fn write_diff_svg(
    base: &[u8],
    new: &[u8],
    normalize: bool,
    style: &Style,
    legend: &Legend,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut folded = Vec::new();
    let diff_options = inferno::differential::Options {
        normalize,
        strip_hex: false,
    };
    inferno::differential::from_readers(diff_options, base, new, &mut folded)?;
    let text = String::from_utf8_lossy(&folded);
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options(style, None), text.lines(), &mut svg)?;
    append_legend(&svg, legend, style.width, out)
}

/// Copies inferno's SVG through an XML reader and writer, growing the image by the legend's
/// height and adding the legend group before the root element closes.
fn append_legend(
    svg: &[u8],
    legend: &Legend,
    width: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let columns = (width.unwrap_or(DEFAULT_WIDTH) / LEGEND_COLUMN).clamp(1, 4);
    let rows = legend.entries.len().div_ceil(columns);
    let extra = if legend.entries.is_empty() && legend.heading.is_empty() {
        0
    } else {
        LEGEND_TOP + rows * LEGEND_ROW + 8
    };
    let mut reader = Reader::from_reader(svg);
    let mut writer = Writer::new(out);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut height = 0usize;
    let mut background_done = false;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(io::Error::other)?;
        match event {
            Event::Eof => break,
            Event::Start(ref e) if depth == 0 && e.name().as_ref() == b"svg" => {
                depth += 1;
                let (grown, h) = grow_root(e, extra)?;
                height = h;
                writer.write_event(Event::Start(grown))?;
            }
            Event::Empty(ref e)
                if !background_done
                    && e.name().as_ref() == b"rect"
                    && attr(e, b"fill")?.as_deref() == Some("url(#background)") =>
            {
                background_done = true;
                let grown = replace_attr(e, b"height", &(height + extra).to_string())?;
                writer.write_event(Event::Empty(grown))?;
            }
            Event::Start(e) => {
                depth += 1;
                writer.write_event(Event::Start(e))?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if depth == 0 && extra > 0 {
                    write_legend(&mut writer, legend, height, columns)?;
                }
                writer.write_event(Event::End(e))?;
            }
            other => writer.write_event(other)?,
        }
        buf.clear();
    }
    writer.into_inner().flush()
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> io::Result<Option<String>> {
    for a in e.attributes() {
        let a = a.map_err(io::Error::other)?;
        if a.key.as_ref() == name {
            return Ok(Some(
                a.normalized_value(quick_xml::XmlVersion::Explicit1_0)
                    .map_err(io::Error::other)?
                    .into_owned(),
            ));
        }
    }
    Ok(None)
}

/// A copy of `e` with attribute `name` set to `value`.
fn replace_attr(e: &BytesStart<'_>, name: &[u8], value: &str) -> io::Result<BytesStart<'static>> {
    let tag = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let mut out = BytesStart::new(tag);
    for a in e.attributes() {
        let a = a.map_err(io::Error::other)?;
        if a.key.as_ref() == name {
            out.push_attribute((name, value.as_bytes()));
        } else {
            out.push_attribute(a);
        }
    }
    Ok(out)
}

/// The root `<svg>` with `extra` pixels more height (attribute and viewBox); returns it and
/// the original height.
fn grow_root(e: &BytesStart<'_>, extra: usize) -> io::Result<(BytesStart<'static>, usize)> {
    let height: usize = attr(e, b"height")?
        .and_then(|h| h.parse().ok())
        .ok_or_else(|| io::Error::other("inferno's SVG has no numeric height"))?;
    let grown = replace_attr(e, b"height", &(height + extra).to_string())?;
    let view_box = attr(e, b"viewBox")?.map(|v| {
        let mut parts: Vec<String> = v.split_whitespace().map(str::to_string).collect();
        if let Some(last) = parts.last_mut() {
            *last = (height + extra).to_string();
        }
        parts.join(" ")
    });
    let grown = match view_box {
        Some(v) => replace_attr(&grown, b"viewBox", &v)?,
        None => grown,
    };
    Ok((grown, height))
}

fn text_element<W: Write>(w: &mut Writer<W>, attrs: &[(&str, &str)], text: &str) -> io::Result<()> {
    w.write_event(Event::Start(
        BytesStart::new("text").with_attributes(attrs.iter().copied()),
    ))?;
    w.write_event(Event::Text(BytesText::new(text)))?;
    w.write_event(Event::End(BytesEnd::new("text")))
}

fn write_legend<W: Write>(
    w: &mut Writer<W>,
    legend: &Legend,
    top: usize,
    columns: usize,
) -> io::Result<()> {
    w.write_event(Event::Start(
        BytesStart::new("g").with_attributes([("id", "whose-legend")]),
    ))?;
    let y = (top + 18).to_string();
    text_element(
        w,
        &[("x", &XPAD.to_string()), ("y", &y), ("font-weight", "bold")],
        &legend.heading,
    )?;
    for (i, entry) in legend.entries.iter().enumerate() {
        let (row, col) = (i / columns, i % columns);
        write_legend_entry(w, entry, top + LEGEND_TOP + row * LEGEND_ROW, col, columns)?;
    }
    w.write_event(Event::End(BytesEnd::new("g")))
}

/// One entry: a nested `<svg>` cell positioned in percent (inferno's width is fluid), holding
/// a swatch and the text, with the exact numbers as data attributes for scripts and tests.
fn write_legend_entry<W: Write>(
    w: &mut Writer<W>,
    entry: &LegendEntry,
    y: usize,
    col: usize,
    columns: usize,
) -> io::Result<()> {
    let cell = 100.0 / columns as f64;
    let weight = entry.weight.to_string();
    let share = format!("{:.6}", entry.share);
    let onclick = entry
        .search
        .as_ref()
        .map(|re| format!("reset_search(); search('{}')", js_string(re)));
    let mut g = BytesStart::new("g").with_attributes([
        ("class", "whose-legend-entry"),
        ("data-owner", entry.owner.as_str()),
        ("data-category", entry.category.as_str()),
        ("data-weight", weight.as_str()),
        ("data-share", share.as_str()),
    ]);
    if let Some(js) = &onclick {
        g.push_attribute(("onclick", js.as_str()));
        g.push_attribute(("style", "cursor:pointer"));
    }
    w.write_event(Event::Start(g))?;
    w.write_event(Event::Start(BytesStart::new("svg").with_attributes([
        ("x", format!("{:.4}%", col as f64 * cell).as_str()),
        ("y", y.to_string().as_str()),
        ("width", format!("{cell:.4}%").as_str()),
        ("height", LEGEND_ROW.to_string().as_str()),
    ])))?;
    let mut text_x = XPAD;
    if let Some(c) = entry.color {
        let fill = format!("rgb({},{},{})", c.r, c.g, c.b);
        w.write_event(Event::Empty(BytesStart::new("rect").with_attributes([
            ("x", XPAD.to_string().as_str()),
            ("y", "2"),
            ("width", "14"),
            ("height", "14"),
            ("fill", fill.as_str()),
            ("stroke", "#555"),
        ])))?;
        text_x += 20;
    }
    text_element(w, &[("x", &text_x.to_string()), ("y", "13")], &entry.label)?;
    w.write_event(Event::End(BytesEnd::new("svg")))?;
    w.write_event(Event::End(BytesEnd::new("g")))
}

/// `s` inside a single-quoted JavaScript string.
fn js_string(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\'', "\\'")
}

/// `s` as a regular expression matching itself literally.
pub fn regex_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One owner's graph in a `--split` index.
#[derive(Debug, Clone)]
pub struct IndexEntry {
    pub file: String,
    pub owner: String,
    pub category: Category,
    pub color: Color,
    pub weight: String,
    pub share: f64,
}

/// Marks an `index.html` as ours, so a later `--split` into the same folder may replace it.
pub const INDEX_GENERATOR: &str = "whose flame --split";

/// `DIR/index.html` of `--split`: the owners with their owner-view shares, each linking its
/// graph.
pub fn write_index(
    title: &str,
    notes: &[String],
    entries: &[IndexEntry],
    page: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"generator\" content=\"{INDEX_GENERATOR}\">\n<title>{}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n\
         table {{ border-collapse: collapse; }}\n\
         td, th {{ padding: 0.3em 0.8em; text-align: left; border-bottom: 1px solid #ddd; }}\n\
         td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}\n\
         .swatch {{ display: inline-block; width: 1em; height: 1em; border: 1px solid #555; vertical-align: middle; }}\n\
         .bar {{ display: inline-block; height: 0.8em; background: #888; }}\n\
         </style>\n</head>\n<body>\n<h1>{}</h1>",
        html(title),
        html(title)
    )?;
    for n in notes {
        writeln!(out, "<p>{}</p>", html(n))?;
    }
    if let Some(page) = page {
        writeln!(
            out,
            "<p><a href=\"{}\">The interactive page</a>: the owner table, the flame graph by \
             owner with zoom and search, and the owner shares over time.</p>",
            html(page)
        )?;
    }
    writeln!(
        out,
        "<table>\n<tr><th></th><th>owner</th><th>category</th><th>owner view</th>\
         <th>weight</th><th></th></tr>"
    )?;
    for e in entries {
        let c = e.color;
        writeln!(
            out,
            "<tr><td><span class=\"swatch\" style=\"background: rgb({},{},{})\"></span></td>\
             <td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"num\">{:.1}%</td>\
             <td class=\"num\">{}</td>\
             <td><span class=\"bar\" style=\"width: {:.1}em; background: rgb({},{},{})\"></span></td></tr>",
            c.r,
            c.g,
            c.b,
            html(&e.file),
            html(&e.owner),
            e.category,
            e.share,
            html(&e.weight),
            e.share / 5.0,
            c.r,
            c.g,
            c.b,
        )?;
    }
    writeln!(out, "</table>\n</body>\n</html>")
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::palette::category_color;
    use super::*;

    #[test]
    fn legend_is_added_by_growing_the_image() {
        let lines = FlameLines::from_text(["x;y 3", "x 1"], OwnerId(0)).unwrap();
        let colors = [ROOT_COLOR];
        let mut palette = palette(
            &lines,
            lines.stacks.iter().map(|s| lines.frames(s)),
            &colors,
        );
        let style = Style {
            title: "t & <u>".into(),
            subtitle: None,
            count_name: "samples".into(),
            width: Some(600),
            min_width: 0.0,
            inverted: false,
            reverse: false,
        };
        let legend = Legend {
            heading: "owners".into(),
            entries: vec![LegendEntry {
                owner: "a<b".into(),
                category: Category::User,
                color: Some(category_color(Category::User)),
                weight: 3,
                share: 75.0,
                label: "a<b 75.0%".into(),
                search: Some(regex_literal("[a<b]")),
            }],
        };
        let mut plain = Vec::new();
        flamegraph::from_lines(
            &mut options(&style, Some(&mut palette)),
            ["x;y 3", "x 1"],
            &mut plain,
        )
        .unwrap();
        let mut out = Vec::new();
        write_svg(&lines, None, &colors, &style, &legend, &mut out).unwrap();
        let (plain, out) = (
            String::from_utf8(plain).unwrap(),
            String::from_utf8(out).unwrap(),
        );
        let height = |s: &str| -> usize {
            let i = s.find("<svg version").unwrap();
            let h = &s[i..][s[i..].find("height=\"").unwrap() + 8..];
            h[..h.find('"').unwrap()].parse().unwrap()
        };
        // 2 columns at 600 px, one entry: one row.
        assert_eq!(height(&out), height(&plain) + LEGEND_TOP + LEGEND_ROW + 8);
        assert!(out.contains("data-owner=\"a&lt;b\""));
        assert!(out.contains(r"search(&apos;\\[a&lt;b\\]&apos;)"), "{out}");
        assert!(out.contains("t &amp; &lt;u&gt;"));
        // Everything before the legend is inferno's, byte for byte, but for the heights.
        let frames_start = plain.find("<svg id=\"frames\"").unwrap();
        let frames_end = plain.rfind("</svg></svg>").unwrap();
        assert!(out.contains(&plain[frames_start..frames_end]));
    }
}
