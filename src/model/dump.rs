//! A canonical, stable text dump of a profile, for golden tests: rows sorted, one per line,
//! frames root first as `name [module] {kind}`, so two readers of the same recording can be
//! compared with a plain diff.

use super::{Profile, folded};
use std::fmt::Write;

impl Profile {
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let types: Vec<String> = self
            .sample_types()
            .iter()
            .map(|t| format!("{}/{}", t.name, t.unit))
            .collect();
        let _ = writeln!(
            out,
            "sample types: {} (default {})",
            types.join(" "),
            self.sample_types()[self.default_sample_type].name
        );
        let mut lines: Vec<String> = self
            .rows()
            .map(|row| {
                let mut line = String::new();
                if let Some(t) = row.thread {
                    let _ = write!(line, "[thread {}] ", self.thread_name(t));
                }
                let frames: Vec<String> = self
                    .stack(row.stack)
                    .iter()
                    .rev()
                    .map(|&f| {
                        let fr = self.frame(f);
                        let mut s = fr.name.to_string();
                        if let Some(m) = &fr.module {
                            let _ = write!(s, " [{m}]");
                        }
                        if let Some(file) = &fr.file {
                            let _ = write!(s, " <{file}:{}>", fr.line.map_or(0, u32::from));
                        }
                        let _ = write!(s, " {{{}}}", fr.kind);
                        s
                    })
                    .collect();
                line.push_str(&folded::join_frames(&frames));
                for v in row.values {
                    folded::push_count(&mut line, v);
                }
                line
            })
            .collect();
        lines.sort();
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}
