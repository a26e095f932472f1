//! Sample types and their units, and how weights are shown to people.

use std::fmt;

/// What one value of a sample type measures.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Plain counts: samples, objects, events.
    Count,
    Nanoseconds,
    Bytes,
    /// Whatever else a pprof declares (`cycles`, `microseconds`...), shown as is.
    Other(String),
}

impl Unit {
    /// Parses the unit names used by pprof and by `--unit`.
    pub fn parse(s: &str) -> Unit {
        match s {
            "" | "count" | "counts" | "samples" | "sample" | "objects" | "events" => Unit::Count,
            "nanoseconds" | "ns" => Unit::Nanoseconds,
            "bytes" | "byte" | "B" => Unit::Bytes,
            other => Unit::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Unit::Count => "count",
            Unit::Nanoseconds => "nanoseconds",
            Unit::Bytes => "bytes",
            Unit::Other(s) => s,
        }
    }

    /// A weight in this unit for people: `12.3 ms`, `4.0 MiB`, `1234 samples`.
    pub fn format(&self, value: u128) -> String {
        let v = value as f64;
        match self {
            Unit::Count => value.to_string(),
            Unit::Nanoseconds => {
                let (div, suffix) = match value {
                    0..1_000 => return format!("{value} ns"),
                    1_000..1_000_000 => (1e3, "µs"),
                    1_000_000..1_000_000_000 => (1e6, "ms"),
                    _ => (1e9, "s"),
                };
                format!("{:.2} {suffix}", v / div)
            }
            Unit::Bytes => {
                const K: u128 = 1024;
                let (div, suffix) = match value {
                    0..K => return format!("{value} B"),
                    K..0x10_0000 => (1024.0, "KiB"),
                    0x10_0000..0x4000_0000 => (1024.0 * 1024.0, "MiB"),
                    _ => (1024.0 * 1024.0 * 1024.0, "GiB"),
                };
                format!("{:.2} {suffix}", v / div)
            }
            Unit::Other(u) => format!("{value} {u}"),
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One kind of value each sample carries (`cpu`/nanoseconds, `alloc_space`/bytes...).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SampleType {
    pub name: String,
    pub unit: Unit,
}

impl SampleType {
    pub fn new(name: impl Into<String>, unit: Unit) -> SampleType {
        SampleType {
            name: name.into(),
            unit,
        }
    }

    pub fn samples() -> SampleType {
        SampleType::new("samples", Unit::Count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_human_units() {
        assert_eq!(Unit::Nanoseconds.format(15_160_000_000), "15.16 s");
        assert_eq!(Unit::Nanoseconds.format(2_500_000), "2.50 ms");
        assert_eq!(Unit::Bytes.format(512), "512 B");
        assert_eq!(Unit::Bytes.format(3 * 1024 * 1024), "3.00 MiB");
        assert_eq!(Unit::Count.format(4461), "4461");
    }
}
