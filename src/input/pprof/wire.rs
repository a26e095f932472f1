//! The hand protobuf decoder: varints, the top-level fields of an encoded `Profile` each
//! checked to lie inside the input, and the messages the samples pass decodes by hand
//! (`Sample`, `Location`, `Line`, `Function`) faster than prost's generic merge.

use super::*;

/// A protobuf varint at `*pos`, advancing it; `None` when `bytes` ends first.
pub(super) fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// A varint as prost reads one, or `None` where prost would not (more than ten bytes, a
/// tenth byte above 1) or `bytes` ends first.
#[inline(always)]
pub(super) fn strict_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if i == 9 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Decodes an encoded `Sample` into `s` (cleared first) as prost would, for the shapes
/// writers use: location ids and values packed or one by one, labels (decoded by prost).
/// `false` for anything else — another field, another wire type, a varint prost rejects, a
/// length past the end — which the caller hands to prost to decode and to word the error.
/// prost's generic merge cost ~1,500 instructions a sample, a fifth of `report --each` over
/// a fleet of small profiles (issue 24).
pub(super) fn decode_sample(bytes: &[u8], s: &mut pb::Sample) -> bool {
    s.clear();
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(key) = strict_varint(bytes, &mut pos) else {
            return false;
        };
        let ok = match key {
            // field 1 (location_id) and 2 (value), one varint each
            0x08 => strict_varint(bytes, &mut pos).map(|v| s.location_id.push(v)),
            0x10 => strict_varint(bytes, &mut pos).map(|v| s.value.push(v as i64)),
            // length-delimited: packed ids or values, or a label
            0x0a | 0x12 | 0x1a => {
                let Some(body) = delimited(bytes, &mut pos) else {
                    return false;
                };
                match key {
                    0x0a => packed(body, |v| s.location_id.push(v)),
                    0x12 => packed(body, |v| s.value.push(v as i64)),
                    _ => decode_label(body).map(|l| s.label.push(l)),
                }
            }
            _ => None,
        };
        if ok.is_none() {
            return false;
        }
    }
    true
}

/// A `Label` of four varint fields as prost decodes it; `None` for any other shape (prost
/// then decodes the whole sample).
pub(super) fn decode_label(bytes: &[u8]) -> Option<pb::Label> {
    let mut label = pb::Label::default();
    varint_fields(bytes, |key, value| {
        let value = value as i64;
        match key {
            0x08 => label.key = value,
            0x10 => label.str = value,
            0x18 => label.num = value,
            0x20 => label.num_unit = value,
            _ => return false,
        }
        true
    })?;
    Some(label)
}

/// Each (key, value) of a message of varint fields only to `set`, which says whether it
/// knows the key; `None` if one is unknown or a varint is not whole.
pub(super) fn varint_fields(bytes: &[u8], mut set: impl FnMut(u64, u64) -> bool) -> Option<()> {
    let mut pos = 0;
    while pos < bytes.len() {
        let key = strict_varint(bytes, &mut pos)?;
        let value = strict_varint(bytes, &mut pos)?;
        if !set(key, value) {
            return None;
        }
    }
    Some(())
}

/// A `Location` as prost decodes it, for the fields pprof defines (its lines by
/// [`decode_line`]); `None` for any other shape, which prost then decodes.
pub(super) fn decode_location(bytes: &[u8]) -> Option<pb::Location> {
    let mut location = pb::Location::default();
    let mut pos = 0;
    while pos < bytes.len() {
        match strict_varint(bytes, &mut pos)? {
            0x08 => location.id = strict_varint(bytes, &mut pos)?,
            0x10 => location.mapping_id = strict_varint(bytes, &mut pos)?,
            0x18 => location.address = strict_varint(bytes, &mut pos)?,
            0x22 => location
                .line
                .push(decode_line(delimited(bytes, &mut pos)?)?),
            0x28 => location.is_folded = strict_varint(bytes, &mut pos)? != 0,
            _ => return None,
        }
    }
    Some(location)
}

/// A `Line` as prost decodes it; `None` for any other shape.
pub(super) fn decode_line(bytes: &[u8]) -> Option<pb::Line> {
    let mut line = pb::Line::default();
    varint_fields(bytes, |key, value| {
        match key {
            0x08 => line.function_id = value,
            0x10 => line.line = value as i64,
            _ => return false,
        }
        true
    })?;
    Some(line)
}

/// A `Function` as prost decodes it; `None` for any other shape.
pub(super) fn decode_function(bytes: &[u8]) -> Option<pb::Function> {
    let mut function = pb::Function::default();
    varint_fields(bytes, |key, value| {
        match key {
            0x08 => function.id = value,
            0x10 => function.name = value as i64,
            0x18 => function.system_name = value as i64,
            0x20 => function.filename = value as i64,
            0x28 => function.start_line = value as i64,
            _ => return false,
        }
        true
    })?;
    Some(function)
}

/// The bytes of a length-delimited value at `*pos` (its length read), advancing past them.
pub(super) fn delimited<'b>(bytes: &'b [u8], pos: &mut usize) -> Option<&'b [u8]> {
    let len = usize::try_from(strict_varint(bytes, pos)?).ok()?;
    let end = pos.checked_add(len).filter(|&end| end <= bytes.len())?;
    let body = &bytes[*pos..end];
    *pos = end;
    Some(body)
}

/// Each varint of a packed field's `body` to `push`; `None` if one is not whole.
pub(super) fn packed(body: &[u8], mut push: impl FnMut(u64)) -> Option<()> {
    let mut pos = 0;
    while pos < body.len() {
        push(strict_varint(body, &mut pos)?);
    }
    Some(())
}

/// Where the top-level fields the tables came from start, so that an error in one names its
/// byte offset.
#[derive(Default)]
pub(super) struct FieldOffsets {
    pub(super) sample_type: Vec<usize>,
    pub(super) mapping: Vec<usize>,
    pub(super) location: Vec<usize>,
    pub(super) function: Vec<usize>,
    /// The last occurrence of each singular field (protobuf: the last one wins), by number.
    pub(super) singular: [Option<usize>; 16],
}

/// Every top-level field but the samples, merged into a `Profile` one field at a time
/// (protobuf defines a message's encoding as the merge of its fields, so this is the decode
/// of the whole minus `sample`).
pub(super) fn decode_tables(
    path: &Path,
    bytes: &[u8],
    warnings: &mut Vec<Notice>,
) -> Result<(pb::Profile, StringTable, FieldOffsets)> {
    let mut proto = pb::Profile::default();
    let mut strings = StringTable::default();
    let mut offsets = FieldOffsets::default();
    // (how many strings were not UTF-8, the offset of the first)
    let mut lossy: (usize, Option<usize>) = (0, None);
    for field in Fields::new(path, bytes) {
        let field = field?;
        match field.number {
            SAMPLE_FIELD => continue,
            // a length-delimited string: read lossily, as every text reader is (prost would
            // reject the whole file for one bad byte in a symbol name)
            STRING_TABLE_FIELD if field.value > field.at => {
                let raw = &bytes[field.value..field.end];
                let text = String::from_utf8_lossy(raw);
                if let std::borrow::Cow::Owned(_) = text {
                    lossy.0 += 1;
                    lossy.1.get_or_insert(field.at);
                }
                if !strings.push(&text) {
                    return Err(field.error(
                        path,
                        "the string table holds more than 4 GiB of text, more than whose \
                         reads"
                            .into(),
                    ));
                }
                continue;
            }
            1 => offsets.sample_type.push(field.at),
            3 => offsets.mapping.push(field.at),
            4 => offsets.location.push(field.at),
            5 => offsets.function.push(field.at),
            n => {
                if let Some(slot) = offsets.singular.get_mut(n as usize) {
                    *slot = Some(field.at);
                }
            }
        }
        // the two tables as long as the samples, without prost's generic merge
        let body = &bytes[field.value..field.end];
        let taken = field.value > field.at
            && match field.number {
                4 => decode_location(body).map(|l| proto.location.push(l)),
                5 => decode_function(body).map(|f| proto.function.push(f)),
                _ => None,
            }
            .is_some();
        if !taken {
            proto
                .merge(&bytes[field.at..field.end])
                .map_err(|e| field.error(path, format!("not a valid pprof protobuf: {e}")))?;
        }
    }
    if let (n, Some(first)) = lossy {
        let place = Utf8Place::StringTable {
            count: n,
            first_offset: first,
        };
        let path = path.to_path_buf();
        warnings.push(Notice::NotUtf8 { path, place });
    }
    // an entry that reached prost (none does: each is length-delimited), in file order
    for text in std::mem::take(&mut proto.string_table) {
        strings.push(&text);
    }
    Ok((proto, strings, offsets))
}

/// `Profile.string_table`'s field number.
pub(super) const STRING_TABLE_FIELD: u32 = 6;

/// `Profile.sample`'s field number.
pub(super) const SAMPLE_FIELD: u32 = 2;

/// One top-level field of an encoded `Profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Field {
    pub(super) number: u32,
    /// Where its key starts: the offset messages give.
    pub(super) at: usize,
    /// Where its value starts (after the length, for a length-delimited field).
    pub(super) value: usize,
    pub(super) end: usize,
}

impl Field {
    fn error(&self, path: &Path, message: String) -> Error {
        Error::input(
            path,
            Position::Offset(self.at as u64),
            format!("in field {} of the Profile message: {message}", self.number),
        )
    }
}

/// The top-level fields of an encoded `Profile`, in file order, each checked to lie inside
/// the input; the first malformed one is an error with its offset, and ends the iteration.
pub(super) struct Fields<'b> {
    path: &'b Path,
    bytes: &'b [u8],
    pos: usize,
}

impl<'b> Fields<'b> {
    pub(super) fn new(path: &'b Path, bytes: &'b [u8]) -> Fields<'b> {
        Fields {
            path,
            bytes,
            pos: 0,
        }
    }

    fn field(&mut self) -> std::result::Result<Field, String> {
        let at = self.pos;
        let len = self.bytes.len();
        let mut pos = at;
        let tag = varint(self.bytes, &mut pos).ok_or("the input ends inside a field's key")?;
        let number = u32::try_from(tag >> 3)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("invalid field key {tag} (field number 0 or too large)"))?;
        let fixed = |size: usize, pos: usize| {
            pos.checked_add(size)
                .filter(|&end| end <= len)
                .ok_or_else(|| format!("the input ends inside field {number}"))
        };
        let (value, end) = match tag & 7 {
            0 => {
                varint(self.bytes, &mut pos)
                    .ok_or_else(|| format!("the input ends inside field {number}"))?;
                (at, pos)
            }
            1 => (at, fixed(8, pos)?),
            5 => (at, fixed(4, pos)?),
            2 => {
                let size = varint(self.bytes, &mut pos)
                    .ok_or_else(|| format!("the input ends inside field {number}'s length"))?;
                let end = usize::try_from(size)
                    .ok()
                    .and_then(|s| pos.checked_add(s))
                    .filter(|&end| end <= len)
                    .ok_or_else(|| {
                        format!(
                            "field {number} declares {size} bytes but only {} remain in the \
                             {len}-byte input (truncated?)",
                            len - pos
                        )
                    })?;
                (pos, end)
            }
            wire => {
                return Err(format!(
                    "field {number} has wire type {wire}, which pprof never uses (not a pprof \
                     protobuf, or corrupt)"
                ));
            }
        };
        Ok(Field {
            number,
            at,
            value,
            end,
        })
    }
}

impl Iterator for Fields<'_> {
    type Item = Result<Field>;

    fn next(&mut self) -> Option<Result<Field>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let at = self.pos;
        match self.field() {
            Ok(field) => {
                self.pos = field.end;
                Some(Ok(field))
            }
            Err(message) => {
                self.pos = self.bytes.len();
                Some(Err(Error::input(
                    self.path,
                    Position::Offset(at as u64),
                    format!("not a valid pprof protobuf: {message}"),
                )))
            }
        }
    }
}
