//! Copies JavaScript strings into Rust with the browser's own UTF-8 encoder.
//!
//! wasm-bindgen's `as_string` copies ASCII text one character at a time in a
//! JavaScript loop; `TextEncoder.encodeInto` writes the bytes straight into
//! the wasm memory in native code. Loading 1,000 stored reviews (1.2 MB of
//! JSON) is where this matters.

use js_sys::JsString;
use std::ops::Range;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The browser's UTF-8 encoder.
    type TextEncoder;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<TextEncoder, JsValue>;
    /// Writes `source` as UTF-8 into `destination`; says how much it wrote.
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &TextEncoder, source: &JsString, destination: &mut [u8]) -> Encoded;

    /// What `encodeInto` did.
    type Encoded;
    /// How many UTF-16 units it read.
    #[wasm_bindgen(method, getter)]
    fn read(this: &Encoded) -> u32;
    /// How many bytes it wrote.
    #[wasm_bindgen(method, getter)]
    fn written(this: &Encoded) -> u32;
}

/// Turns JavaScript strings into Rust ones.
pub struct TextReader {
    /// `None` where the browser has no `TextEncoder` (then wasm-bindgen's copy).
    encoder: Option<TextEncoder>,
}

impl TextReader {
    /// A reader using the browser's encoder when it has one.
    pub fn new() -> Self {
        TextReader {
            encoder: TextEncoder::new().ok(),
        }
    }

    /// Copies every string among `values` into one Rust string, and gives
    /// each value's byte range in it (`None` for a value that is not a string).
    /// One buffer for all: loading 1,000 reviews makes one allocation, not 1,000.
    pub fn read_all(&self, values: &[JsValue]) -> (String, Vec<Option<Range<usize>>>) {
        let strings: Vec<Option<&JsString>> = values.iter().map(|v| v.dyn_ref()).collect();
        self.encoder
            .as_ref()
            .and_then(|encoder| encode_all(encoder, &strings))
            .unwrap_or_else(|| copy_all(&strings))
    }
}

/// The strings as UTF-8 through `encodeInto`, or `None` if the encoder wrote
/// something that is not UTF-8 (it never should).
fn encode_all(
    encoder: &TextEncoder,
    strings: &[Option<&JsString>],
) -> Option<(String, Vec<Option<Range<usize>>>)> {
    // Room for every string as ASCII (a byte per UTF-16 unit); a wider one
    // gets more when it needs it.
    let units: usize = strings.iter().flatten().map(|s| s.length() as usize).sum();
    let mut bytes = vec![0u8; units];
    let mut end = 0;
    let ranges = strings
        .iter()
        .map(|string| {
            let string = (*string)?;
            let units = string.length() as usize;
            let start = end;
            let mut room = units;
            loop {
                if bytes.len() < start + room {
                    bytes.resize(start + room, 0);
                }
                let encoded = encoder.encode_into(string, &mut bytes[start..start + room]);
                if encoded.read() as usize == units {
                    end = start + encoded.written() as usize;
                    return Some(start..end);
                }
                // Not ASCII: a UTF-16 unit never takes more than three bytes.
                room = units * 3;
            }
        })
        .collect();
    bytes.truncate(end);
    Some((String::from_utf8(bytes).ok()?, ranges))
}

/// The strings through wasm-bindgen's own copy.
fn copy_all(strings: &[Option<&JsString>]) -> (String, Vec<Option<Range<usize>>>) {
    let mut text = String::new();
    let ranges = strings
        .iter()
        .map(|string| {
            let start = text.len();
            text.push_str(&(*string)?.as_string()?);
            Some(start..text.len())
        })
        .collect();
    (text, ranges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    const TEXTS: [&str; 4] = [
        "{\"a\":1}",
        "",
        "rôle ✓ 𝄞 agent\u{202e}live",
        "plain ascii after wide",
    ];

    fn check(found: (String, Vec<Option<Range<usize>>>), values: &[JsValue]) {
        let (text, ranges) = found;
        assert_eq!(ranges.len(), values.len());
        for (value, range) in values.iter().zip(ranges) {
            assert_eq!(range.map(|r| text[r].to_owned()), value.as_string());
        }
    }

    fn values() -> Vec<JsValue> {
        let mut values: Vec<JsValue> = TEXTS.iter().map(|t| JsValue::from_str(t)).collect();
        values.insert(2, JsValue::from_f64(1.0));
        values.push(JsValue::NULL);
        // A lone surrogate is replaced by U+FFFD, as `as_string` does.
        values.push(JsString::from_char_code1(0xD800).into());
        values
    }

    #[wasm_bindgen_test]
    fn the_encoder_reads_what_as_string_reads() {
        let values = values();
        check(TextReader::new().read_all(&values), &values);
    }

    #[wasm_bindgen_test]
    fn without_an_encoder_the_copy_reads_the_same() {
        let values = values();
        check(TextReader { encoder: None }.read_all(&values), &values);
    }
}
