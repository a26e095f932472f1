//! One JFR chunk: its header, its metadata (the classes and their fields), its constant pools
//! and a walk over its events, decoded generically from the metadata.
//!
//! The format (JDK 11 and later write version 2.x, as does async-profiler):
//!
//! ```text
//! chunk   = header(68 bytes) event*
//! header  = "FLR\0" major:u16 minor:u16 size:i64 cp_offset:i64 meta_offset:i64
//!           start_nanos:i64 duration_nanos:i64 start_ticks:i64 ticks_per_second:i64 features:i32
//! event   = size:int type:long payload            (type 0 metadata, type 1 constant pool)
//! payload = the event class's fields, in metadata order
//! ```
//!
//! Integers in the chunk body are LEB128-style variable-length when feature bit 0 is set (they
//! always are in practice), fixed big-endian otherwise; floats and doubles are always fixed.
//! The metadata event holds a string table and an element tree (`class` elements with `field`
//! and `annotation` children); the constant-pool events form a chain, each pointing back to
//! the one before by a relative offset, starting at `cp_offset`. A field marked
//! `constantPool` holds a key into its class's pool; others are inline values.
//!
//! Every count read from the input is checked against the bytes left before anything is
//! allocated for it, and nesting is bounded, so a hostile chunk fails with its offset rather
//! than exhausting memory or the stack.

use rustc_hash::FxHashMap;

/// What went wrong where: `offset` is from the chunk's first byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bad {
    pub offset: u64,
    pub what: String,
}

pub type Parse<T> = std::result::Result<T, Bad>;

/// The header's length, which every chunk starts with.
pub const HEADER_LEN: usize = 68;
pub const MAGIC: &[u8; 4] = b"FLR\0";

/// Nesting of inline values and metadata elements beyond any real recording (JDK classes nest
/// three or four deep), kept so that a crafted file cannot overflow the stack.
const MAX_NESTING: u32 = 32;

#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub major: u16,
    pub minor: u16,
    pub size: u64,
    pub cp_offset: u64,
    pub meta_offset: u64,
    pub start_nanos: i64,
    pub duration_nanos: i64,
    pub start_ticks: i64,
    pub ticks_per_second: i64,
    pub compressed_ints: bool,
}

impl Header {
    /// Reads and checks the header from the first [`HEADER_LEN`] bytes of a chunk.
    pub fn parse(b: &[u8]) -> Parse<Header> {
        if b.len() < HEADER_LEN {
            return Err(bad(
                b.len(),
                format!(
                    "the chunk header is cut short: {} of its {HEADER_LEN} bytes",
                    b.len()
                ),
            ));
        }
        if &b[..4] != MAGIC {
            return Err(bad(
                0,
                "no chunk magic `FLR\\0` where a chunk starts".into(),
            ));
        }
        let u16_at = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
        let i64_at = |i: usize| i64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let offset = |i: usize, what: &str| -> Parse<u64> {
            u64::try_from(i64_at(i)).map_err(|_| bad(i, format!("negative {what} {}", i64_at(i))))
        };
        let header = Header {
            major: u16_at(4),
            minor: u16_at(6),
            size: offset(8, "chunk size")?,
            cp_offset: offset(16, "constant pool offset")?,
            meta_offset: offset(24, "metadata offset")?,
            start_nanos: i64_at(32),
            duration_nanos: i64_at(40),
            start_ticks: i64_at(48),
            ticks_per_second: i64_at(56),
            compressed_ints: i32::from_be_bytes(b[64..68].try_into().expect("4 bytes")) & 1 != 0,
        };
        if header.major != 2 {
            return Err(bad(
                4,
                format!(
                    "JFR format version {}.{}; whose reads version 2 (JDK 11 and later, \
                     async-profiler)",
                    header.major, header.minor
                ),
            ));
        }
        if header.size < HEADER_LEN as u64 {
            return Err(bad(
                8,
                format!("chunk size {} is smaller than its header", header.size),
            ));
        }
        if header.ticks_per_second <= 0 {
            return Err(bad(
                56,
                format!(
                    "ticks per second {} is not positive",
                    header.ticks_per_second
                ),
            ));
        }
        for (what, at, value) in [
            ("constant pool", 16, header.cp_offset),
            ("metadata", 24, header.meta_offset),
        ] {
            if value < HEADER_LEN as u64 || value >= header.size {
                return Err(bad(
                    at,
                    format!(
                        "{what} offset {value} is outside the chunk's body ({HEADER_LEN}..{})",
                        header.size
                    ),
                ));
            }
        }
        Ok(header)
    }

    /// Nanoseconds since the epoch of a tick count.
    pub fn ticks_to_epoch_nanos(&self, ticks: i64) -> i64 {
        let since = i128::from(ticks) - i128::from(self.start_ticks);
        let nanos = since * 1_000_000_000 / i128::from(self.ticks_per_second);
        (i128::from(self.start_nanos) + nanos).clamp(0, i128::from(i64::MAX)) as i64
    }

    /// Nanoseconds of a tick span.
    pub fn ticks_to_nanos(&self, ticks: i64) -> i64 {
        let nanos = i128::from(ticks) * 1_000_000_000 / i128::from(self.ticks_per_second);
        nanos.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

fn bad(offset: usize, what: String) -> Bad {
    Bad {
        offset: offset as u64,
        what,
    }
}

/// A reading position in a chunk's bytes.
pub struct Cursor<'a> {
    b: &'a [u8],
    pub pos: usize,
    compressed: bool,
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8], pos: usize, compressed: bool) -> Cursor<'a> {
        Cursor { b, pos, compressed }
    }

    fn end(&self, what: &str) -> Bad {
        bad(
            self.pos,
            format!("the chunk ends inside {what} (truncated or corrupt)"),
        )
    }

    pub fn remaining(&self) -> usize {
        self.b.len().saturating_sub(self.pos)
    }

    pub fn u8(&mut self) -> Parse<u8> {
        let v = *self.b.get(self.pos).ok_or_else(|| self.end("a byte"))?;
        self.pos += 1;
        Ok(v)
    }

    fn fixed<const N: usize>(&mut self) -> Parse<[u8; N]> {
        let bytes = self
            .b
            .get(self.pos..self.pos + N)
            .ok_or_else(|| self.end("a number"))?;
        self.pos += N;
        Ok(bytes.try_into().expect("N bytes"))
    }

    /// A variable-length integer: 7 bits a byte, low bits first, the ninth byte whole.
    fn varint(&mut self) -> Parse<u64> {
        let mut v = 0u64;
        for i in 0..8 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Ok(v | u64::from(self.u8()?) << 56)
    }

    pub fn long(&mut self) -> Parse<i64> {
        if self.compressed {
            Ok(self.varint()? as i64)
        } else {
            Ok(i64::from_be_bytes(self.fixed()?))
        }
    }

    pub fn int(&mut self) -> Parse<i32> {
        if self.compressed {
            Ok(self.varint()? as i32)
        } else {
            Ok(i32::from_be_bytes(self.fixed()?))
        }
    }

    fn short(&mut self) -> Parse<i16> {
        if self.compressed {
            Ok(self.varint()? as i16)
        } else {
            Ok(i16::from_be_bytes(self.fixed()?))
        }
    }

    /// A count of things of at least `min_size` bytes each, checked against the bytes left so
    /// that no claim larger than the chunk is believed.
    pub fn count(&mut self, what: &str, min_size: usize) -> Parse<usize> {
        let at = self.pos;
        let n = self.int()?;
        let n = usize::try_from(n).map_err(|_| bad(at, format!("negative {what} count {n}")))?;
        if n.saturating_mul(min_size.max(1)) > self.remaining() {
            return Err(bad(
                at,
                format!(
                    "{what} count {n} is more than the {} bytes left in the chunk hold",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }

    /// A string in any of JFR's encodings; a constant-pool reference comes back as such.
    pub fn string(&mut self) -> Parse<Str> {
        let at = self.pos;
        match self.u8()? {
            0 => Ok(Str::Null),
            1 => Ok(Str::Text(Box::from(""))),
            2 => Ok(Str::Pool(self.long()?)),
            3 | 5 => {
                let latin1 = self.b[at] == 5;
                let n = self.count("string byte", 1)?;
                let bytes = &self.b[self.pos..self.pos + n];
                self.pos += n;
                Ok(Str::Text(if latin1 {
                    bytes.iter().map(|&b| char::from(b)).collect()
                } else {
                    String::from_utf8_lossy(bytes).into()
                }))
            }
            4 => {
                let n = self.count("string char", 1)?;
                let mut s = String::with_capacity(n);
                for _ in 0..n {
                    let c = self.short()? as u16;
                    s.push(char::from_u32(u32::from(c)).unwrap_or('\u{fffd}'));
                }
                Ok(Str::Text(s.into()))
            }
            other => Err(bad(
                at,
                format!("string encoding {other} is not one of 0-5"),
            )),
        }
    }
}

/// A decoded string field.
#[derive(Debug, Clone, PartialEq)]
pub enum Str {
    Null,
    Text(Box<str>),
    /// A key into the `java.lang.String` pool.
    Pool(i64),
}

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(Str),
    /// A key into the pool of the field's class.
    Ref(i64),
    Object(Box<[Value]>),
    Array(Box<[Value]>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Float(f) => Some(*f as i64),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    String,
}

impl Primitive {
    fn of(name: &str) -> Option<Primitive> {
        Some(match name {
            "boolean" => Primitive::Boolean,
            "byte" => Primitive::Byte,
            "char" => Primitive::Char,
            "short" => Primitive::Short,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "java.lang.String" => Primitive::String,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: Box<str>,
    pub class: u64,
    pub pool: bool,
    pub array: bool,
    /// `@Timespan("TICKS")` or `@Timestamp("TICKS")`: the value counts ticks.
    pub ticks: bool,
}

#[derive(Debug, Clone)]
pub struct Class {
    pub name: Box<str>,
    pub primitive: Option<Primitive>,
    pub fields: Vec<Field>,
}

impl Class {
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// The classes of a chunk by id.
#[derive(Debug, Default)]
pub struct Metadata {
    pub classes: FxHashMap<u64, Class>,
}

impl Metadata {
    pub fn class_named(&self, name: &str) -> Option<u64> {
        self.classes
            .iter()
            .find(|(_, c)| &*c.name == name)
            .map(|(&id, _)| id)
    }
}

/// A metadata element: its name, attributes and children (string-table indices resolved).
struct Element {
    name: Box<str>,
    attributes: Vec<(Box<str>, Box<str>)>,
    children: Vec<Element>,
}

impl Element {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }
}

/// Reads the metadata event at `offset`.
pub fn read_metadata(b: &[u8], offset: usize, compressed: bool) -> Parse<Metadata> {
    let mut c = Cursor::new(b, offset, compressed);
    let start = c.pos;
    let _size = c.int()?;
    let at = c.pos;
    let kind = c.long()?;
    if kind != 0 {
        return Err(bad(
            at,
            format!("the metadata offset points at an event of type {kind}, not the metadata (0)"),
        ));
    }
    let _start_time = c.long()?;
    let _duration = c.long()?;
    let _id = c.long()?;
    let n = c.count("metadata string", 1)?;
    let mut strings = Vec::with_capacity(n);
    for _ in 0..n {
        strings.push(match c.string()? {
            Str::Text(s) => s,
            Str::Null => Box::from(""),
            Str::Pool(_) => {
                return Err(bad(
                    c.pos,
                    "a metadata string refers to a constant pool".into(),
                ));
            }
        });
    }
    let root = element(&mut c, &strings, 0)?;
    let mut metadata = Metadata::default();
    let Some(meta) = root.children.iter().find(|e| &*e.name == "metadata") else {
        return Err(bad(start, "the metadata has no `metadata` element".into()));
    };
    for class in meta.children.iter().filter(|e| &*e.name == "class") {
        let id = number(class.attribute("id"), start, "class id")?;
        let name: Box<str> = class.attribute("name").unwrap_or("").into();
        let mut fields = Vec::new();
        for f in class.children.iter().filter(|e| &*e.name == "field") {
            fields.push(Field {
                name: f.attribute("name").unwrap_or("").into(),
                class: number(f.attribute("class"), start, "field class")?,
                pool: f.attribute("constantPool") == Some("true"),
                array: f.attribute("dimension").is_some_and(|d| d != "0"),
                ticks: false,
            });
            let ticks = f
                .children
                .iter()
                .any(|a| &*a.name == "annotation" && a.attribute("value") == Some("TICKS"));
            if let Some(last) = fields.last_mut() {
                last.ticks = ticks;
            }
        }
        let primitive = if fields.is_empty() {
            Primitive::of(&name)
        } else {
            None
        };
        metadata.classes.insert(
            id,
            Class {
                name,
                primitive,
                fields,
            },
        );
    }
    // every field's class must be known, so that decoding never meets an unknown type
    for class in metadata.classes.values() {
        if let Some(f) = class
            .fields
            .iter()
            .find(|f| !metadata.classes.contains_key(&f.class))
        {
            return Err(bad(
                start,
                format!(
                    "field {}.{} has class id {}, which the metadata does not define",
                    class.name, f.name, f.class
                ),
            ));
        }
    }
    Ok(metadata)
}

fn number(v: Option<&str>, at: usize, what: &str) -> Parse<u64> {
    v.and_then(|v| v.parse().ok())
        .ok_or_else(|| bad(at, format!("metadata {what} {v:?} is not a number")))
}

fn element(c: &mut Cursor<'_>, strings: &[Box<str>], depth: u32) -> Parse<Element> {
    if depth > MAX_NESTING {
        return Err(bad(c.pos, "metadata elements nested too deep".into()));
    }
    let string = |c: &mut Cursor<'_>| -> Parse<Box<str>> {
        let at = c.pos;
        let i = c.int()?;
        usize::try_from(i)
            .ok()
            .and_then(|i| strings.get(i))
            .cloned()
            .ok_or_else(|| {
                bad(
                    at,
                    format!(
                        "metadata string index {i} is not in its {} strings",
                        strings.len()
                    ),
                )
            })
    };
    let name = string(c)?;
    let n = c.count("metadata attribute", 2)?;
    let mut attributes = Vec::with_capacity(n);
    for _ in 0..n {
        attributes.push((string(c)?, string(c)?));
    }
    let n = c.count("metadata element", 3)?;
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        children.push(element(c, strings, depth + 1)?);
    }
    Ok(Element {
        name,
        attributes,
        children,
    })
}

/// Decodes one value of `class`.
pub fn value(c: &mut Cursor<'_>, meta: &Metadata, class: u64, depth: u32) -> Parse<Value> {
    let Some(cls) = meta.classes.get(&class) else {
        return Err(bad(
            c.pos,
            format!("class id {class} is not in the metadata"),
        ));
    };
    if let Some(p) = cls.primitive {
        return primitive(c, p);
    }
    if depth > MAX_NESTING {
        return Err(bad(c.pos, "values nested too deep".into()));
    }
    let mut fields = Vec::with_capacity(cls.fields.len());
    for f in &cls.fields {
        let one = |c: &mut Cursor<'_>| -> Parse<Value> {
            if f.pool {
                Ok(Value::Ref(c.long()?))
            } else {
                value(c, meta, f.class, depth + 1)
            }
        };
        if f.array {
            let n = c.count("array element", 1)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(one(c)?);
            }
            fields.push(Value::Array(items.into()));
        } else {
            fields.push(one(c)?);
        }
    }
    Ok(Value::Object(fields.into()))
}

fn primitive(c: &mut Cursor<'_>, p: Primitive) -> Parse<Value> {
    Ok(match p {
        Primitive::Boolean | Primitive::Byte => Value::Int(i64::from(c.u8()? as i8)),
        Primitive::Char | Primitive::Short => Value::Int(i64::from(c.short()?)),
        Primitive::Int => Value::Int(i64::from(c.int()?)),
        Primitive::Long => Value::Int(c.long()?),
        Primitive::Float => Value::Float(f64::from(f32::from_be_bytes(c.fixed()?))),
        Primitive::Double => Value::Float(f64::from_be_bytes(c.fixed()?)),
        Primitive::String => Value::Str(c.string()?),
    })
}

/// The constant pools of a chunk: (class id, key) → value.
#[derive(Debug, Default)]
pub struct Pools {
    pub entries: FxHashMap<(u64, i64), Value>,
}

/// Reads every constant-pool event of the chain that starts at `offset`.
pub fn read_pools(b: &[u8], first: u64, meta: &Metadata, compressed: bool) -> Parse<Pools> {
    let mut pools = Pools::default();
    let mut offset = first;
    // each pool event takes bytes, so a chain longer than the chunk loops
    for _ in 0..b.len() {
        let mut c = Cursor::new(b, offset as usize, compressed);
        let start = c.pos;
        let _size = c.int()?;
        let at = c.pos;
        let kind = c.long()?;
        if kind != 1 {
            return Err(bad(
                at,
                format!("a constant-pool offset points at an event of type {kind}, not a pool (1)"),
            ));
        }
        let _start_time = c.long()?;
        let _duration = c.long()?;
        let delta_at = c.pos;
        let delta = c.long()?;
        let _flush = c.u8()?;
        let n = c.count("constant pool", 2)?;
        for _ in 0..n {
            let class_at = c.pos;
            let class = c.long()? as u64;
            if !meta.classes.contains_key(&class) {
                return Err(bad(
                    class_at,
                    format!(
                        "constant pool of class id {class}, which the metadata does not define"
                    ),
                ));
            }
            let entries = c.count("constant", 2)?;
            for _ in 0..entries {
                let key = c.long()?;
                let v = value(&mut c, meta, class, 0)?;
                pools.entries.insert((class, key), v);
            }
        }
        if delta == 0 {
            return Ok(pools);
        }
        let next = start as i64 + delta;
        if next < HEADER_LEN as i64 || next as u64 >= b.len() as u64 {
            return Err(bad(
                delta_at,
                format!("the previous constant pool's offset {next} is outside the chunk"),
            ));
        }
        offset = next as u64;
    }
    Err(bad(first as usize, "the constant-pool chain loops".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_seven_bits_a_byte_low_first() {
        let b = [
            0x96, 0x01, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ];
        let mut c = Cursor::new(&b, 0, true);
        assert_eq!(c.long().unwrap(), 150);
        assert_eq!(c.long().unwrap(), 127);
        // nine bytes: the ninth carries 8 bits
        assert_eq!(c.long().unwrap(), -1);
        assert!(c.long().is_err());
    }

    #[test]
    fn counts_larger_than_the_chunk_are_refused() {
        let b = [0xff, 0xff, 0xff, 0x7f, 0];
        let mut c = Cursor::new(&b, 0, true);
        let e = c.count("array element", 1).unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.what.contains("more than the 1 bytes left"), "{}", e.what);
    }

    #[test]
    fn strings_in_every_encoding() {
        let b = [0, 1, 2, 5, 3, 2, b'h', b'i', 5, 1, 0xe9, 4, 1, 0x41];
        let mut c = Cursor::new(&b, 0, true);
        assert_eq!(c.string().unwrap(), Str::Null);
        assert_eq!(c.string().unwrap(), Str::Text("".into()));
        assert_eq!(c.string().unwrap(), Str::Pool(5));
        assert_eq!(c.string().unwrap(), Str::Text("hi".into()));
        assert_eq!(c.string().unwrap(), Str::Text("é".into()));
        assert_eq!(c.string().unwrap(), Str::Text("A".into()));
    }
}
