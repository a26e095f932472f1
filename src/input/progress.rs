//! A progress bar on stderr for long inputs, only when stderr is a terminal: CI logs and
//! pipes stay clean, and a hidden bar costs nothing.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Updates are forwarded only every this many bytes, so the per-line cost is one comparison.
const STEP: u64 = 4 << 20;

pub struct Progress {
    bar: Option<ProgressBar>,
    next_update: u64,
}

impl Progress {
    /// A byte-counting bar (a spinner when the total is unknown), or nothing off a terminal.
    pub fn new(total: Option<u64>, label: &'static str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                bar: None,
                next_update: u64::MAX,
            };
        }
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        let template = if total.is_some() {
            "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})"
        } else {
            "{msg} {spinner} {bytes} ({bytes_per_sec})"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label);
        Progress {
            bar: Some(bar),
            next_update: 0,
        }
    }

    #[inline]
    pub fn set(&mut self, position: u64) {
        if position >= self.next_update {
            self.next_update = position + STEP;
            if let Some(bar) = &self.bar {
                bar.set_position(position);
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
