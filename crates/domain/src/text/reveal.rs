//! Makes invisible and direction-changing characters visible, so a role, an
//! id or a tool call's arguments cannot look like something they are not
//! (`agent\u{202E}live` would otherwise read as "agentevil").

/// Whether a character is invisible or reorders the text around it: controls,
/// bidi embeddings, overrides, isolates and marks, zero-width characters,
/// fillers that render as blanks, and tag characters.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{e0000}'..='\u{e0fff}')
}

/// Whether a character reorders the text around it (bidi embeddings,
/// overrides and isolates) or is a control other than tab and line breaks.
fn reorders_or_controls(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A character as its code point in brackets: `[U+202E]`.
fn code_point(c: char) -> String {
    format!("[U+{:04X}]", u32::from(c))
}

/// Prose (a reason, a title, a description) with each direction override,
/// isolate and control written as its code point (`[U+202E]`), so text cannot
/// be shown in an order other than the one it was written in; joiners and
/// marks that scripts and emoji need are kept.
pub fn prose(text: &str) -> String {
    replace(text, reorders_or_controls, code_point)
}

/// A label with each hidden character written as its code point (`[U+200B]`).
pub fn label(text: &str) -> String {
    replace(text, is_hidden, code_point)
}

/// JSON text with each hidden character written as its JSON escape
/// (`\u202e`): the same JSON value, readable.
pub fn json(text: &str) -> String {
    replace(text, is_hidden, |c| {
        let mut units = [0u16; 2];
        c.encode_utf16(&mut units)
            .iter()
            .map(|u| format!("\\u{u:04x}"))
            .collect()
    })
}

/// `text` with each character that `hidden` picks written as `mark` makes it.
fn replace(text: &str, hidden: fn(char) -> bool, mark: impl Fn(char) -> String) -> String {
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| if hidden(c) { mark(c) } else { c.to_string() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_become_visible() {
        assert_eq!(
            label("agent\u{202e}live\u{200b}"),
            "agent[U+202E]live[U+200B]"
        );
        assert_eq!(label("plain rôle"), "plain rôle");
        assert_eq!(
            json("{\"to\":\"ac\u{200d}me\"}"),
            "{\"to\":\"ac\\u200dme\"}"
        );
        assert_eq!(json("\u{e0041}"), "\\udb40\\udc41");
        let escaped: serde_json::Value = serde_json::from_str(&json("\"a\u{2066}b\"")).unwrap();
        assert_eq!(
            escaped, "a\u{2066}b",
            "the JSON still reads as the same value"
        );
    }

    #[test]
    fn prose_shows_reordering_but_keeps_joiners_and_line_breaks() {
        assert_eq!(
            prose("pay \u{202e}LIVE\u{2066}x\u{2069}\u{0}"),
            "pay [U+202E]LIVE[U+2066]x[U+2069][U+0000]"
        );
        let kept = "👩\u{200d}💻 مرحبا\u{200f}\nline\ttab\r";
        assert_eq!(prose(kept), kept);
    }
}
