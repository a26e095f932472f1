//! speedscope `evented` nesting (issue 23): the bytes are a sequence of open/close events,
//! written as a well-formed speedscope file and read through `whose::read_profile`. Beyond
//! "no panic": a file whose closes match their opens reads to a total equal to the time some
//! frame was open (replayed here without whose), one with a close that does not match is an
//! error, and nesting past the reader's share of the cap is an error too, never an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::fmt::Write;
use whose::InputFormat;

/// Frames in the file; a byte names one by its low four bits.
const FRAMES: u8 = 16;

fuzz_target!(|data: &[u8]| {
    let mut events = String::new();
    let (mut now, mut open_time, mut nested) = (0u64, 0u64, Vec::new());
    let mut matched = true;
    for (i, &b) in data.iter().enumerate() {
        // bits 4-6: time since the event before; bit 7: close; bits 0-3: the frame
        let step = u64::from((b >> 4) & 7);
        now += step;
        if !nested.is_empty() {
            open_time += step;
        }
        let frame = b & (FRAMES - 1);
        let close = b & 0x80 != 0;
        if close {
            if nested.pop() != Some(frame) {
                matched = false;
            }
        } else {
            nested.push(frame);
        }
        let sep = if i > 0 { "," } else { "" };
        let kind = if close { "C" } else { "O" };
        let _ = write!(
            events,
            "{sep}{{\"type\":\"{kind}\",\"frame\":{frame},\"at\":{now}}}"
        );
    }
    // frames left open are closed at endValue, which is the last event's time
    let frames: Vec<String> = (0..FRAMES)
        .map(|i| format!("{{\"name\":\"f{i}\"}}"))
        .collect();
    let text = format!(
        "{{\"shared\":{{\"frames\":[{}]}},\"profiles\":[{{\"type\":\"evented\",\"name\":\"t\",\
         \"unit\":\"none\",\"startValue\":0,\"endValue\":{now},\"events\":[{events}]}}]}}",
        frames.join(",")
    );
    let result = whose_fuzz::read(
        text.as_bytes(),
        &whose_fuzz::options(InputFormat::Speedscope),
    );
    match result {
        Ok(profile) => {
            assert!(matched, "a close that does not match its open was read");
            assert_eq!(profile.totals(), vec![u128::from(open_time)]);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                !matched || open_time == 0 || message.contains("raise --max-decompressed"),
                "a well-nested file was refused: {message}"
            );
        }
    }
});
