//! The small part of Markdown agents write in descriptions (paragraphs, lists,
//! headings, code blocks, `code`, **strong**, *emphasis*, [links](url)), read
//! into blocks the views render as plain elements and text: nothing is ever
//! parsed as HTML, so any markup in it stays inert text. Links are shown as
//! their text followed by the address, never made clickable.

/// A run of inline text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    /// Plain text.
    Text(String),
    /// `code`.
    Code(String),
    /// **strong**.
    Strong(String),
    /// *emphasis*.
    Emphasis(String),
}

/// A block of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// A paragraph (or a heading, shown as a strong paragraph).
    Paragraph(Vec<Inline>),
    /// A heading.
    Heading(Vec<Inline>),
    /// A bulleted or numbered list.
    List {
        /// Numbered.
        ordered: bool,
        /// The items.
        items: Vec<Vec<Inline>>,
    },
    /// A fenced code block.
    Code(String),
}

/// Reads `text` into blocks. O(length).
pub fn parse(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut lines = text.lines();
    let flush = |paragraph: &mut Vec<&str>, blocks: &mut Vec<Block>| {
        if !paragraph.is_empty() {
            blocks.push(Block::Paragraph(inline(&paragraph.join(" "))));
            paragraph.clear();
        }
    };
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            flush(&mut paragraph, &mut blocks);
            let code: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.trim().starts_with("```"))
                .collect();
            blocks.push(Block::Code(code.join("\n")));
        } else if trimmed.is_empty() {
            flush(&mut paragraph, &mut blocks);
        } else if let Some(heading) = trimmed
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '))
        {
            flush(&mut paragraph, &mut blocks);
            blocks.push(Block::Heading(inline(heading.trim())));
        } else if let Some((ordered, item)) = list_item(trimmed) {
            flush(&mut paragraph, &mut blocks);
            match blocks.last_mut() {
                Some(Block::List { ordered: o, items }) if *o == ordered => {
                    items.push(inline(item))
                }
                _ => blocks.push(Block::List {
                    ordered,
                    items: vec![inline(item)],
                }),
            }
        } else {
            paragraph.push(trimmed);
        }
    }
    flush(&mut paragraph, &mut blocks);
    blocks
}

fn list_item(line: &str) -> Option<(bool, &str)> {
    if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return Some((false, item));
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0)
        .then(|| line[digits..].strip_prefix(". "))
        .flatten()
        .map(|item| (true, item))
}

/// Reads the inline marks of one block's text.
fn inline(text: &str) -> Vec<Inline> {
    let mut runs = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let mut previous = ' ';
    while let Some(c) = rest.chars().next() {
        // `snake_case_names` are words, not emphasis.
        let intraword = c == '_' && previous.is_alphanumeric();
        let marked = match c {
            _ if intraword => None,
            '`' => span(rest, "`").map(|(inner, after)| (Inline::Code(inner.into()), after)),
            '*' | '_' if rest[1..].starts_with(c) => {
                span(rest, &rest[..2]).map(|(inner, after)| (Inline::Strong(inner.into()), after))
            }
            '*' | '_' => span(rest, &rest[..1])
                .filter(|(inner, _)| !inner.starts_with(' '))
                .map(|(inner, after)| (Inline::Emphasis(inner.into()), after)),
            '[' => link(rest)
                .map(|(label, url, after)| (Inline::Text(format!("{label} ({url})")), after)),
            _ => None,
        };
        match marked {
            Some((run, after)) => {
                if !plain.is_empty() {
                    runs.push(Inline::Text(std::mem::take(&mut plain)));
                }
                match (run, runs.last_mut()) {
                    (Inline::Text(t), Some(Inline::Text(last))) => last.push_str(&t),
                    (run, _) => runs.push(run),
                }
                rest = after;
                previous = ' ';
            }
            None => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
                previous = c;
            }
        }
    }
    if !plain.is_empty() {
        match runs.last_mut() {
            Some(Inline::Text(last)) => last.push_str(&plain),
            _ => runs.push(Inline::Text(plain)),
        }
    }
    runs
}

/// `mark inner mark rest` -> (inner, rest), when the mark closes and encloses something.
fn span<'a>(text: &'a str, mark: &str) -> Option<(&'a str, &'a str)> {
    let body = &text[mark.len()..];
    let end = body.find(mark).filter(|&end| end > 0)?;
    Some((&body[..end], &body[end + mark.len()..]))
}

/// `[label](url) rest` -> (label, url, rest).
fn link(text: &str) -> Option<(&str, &str, &str)> {
    let close = text.find("](")?;
    let label = &text[1..close];
    let after = &text[close + 2..];
    let end = after.find(')')?;
    (!label.contains('[')).then(|| (label, &after[..end], &after[end + 1..]))
}

/// The text without its marks, on one line: for places that show a summary
/// in a few words (inbox rows, titles).
pub fn plain_text(text: &str) -> String {
    let runs = |items: &[Inline]| {
        items
            .iter()
            .map(|i| match i {
                Inline::Text(t) | Inline::Code(t) | Inline::Strong(t) | Inline::Emphasis(t) => {
                    t.as_str()
                }
            })
            .collect::<String>()
    };
    parse(text)
        .iter()
        .map(|block| match block {
            Block::Paragraph(items) | Block::Heading(items) => runs(items),
            Block::List { items, .. } => {
                items.iter().map(|i| runs(i)).collect::<Vec<_>>().join("; ")
            }
            Block::Code(code) => code.replace('\n', " "),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_blocks_and_marks() {
        let blocks = parse(
            "Send the **quarterly numbers** to `ana`.\n\n- one\n- *two*\n\n```\n<b>x</b>\n```",
        );
        assert_eq!(
            blocks,
            vec![
                Block::Paragraph(vec![
                    Inline::Text("Send the ".into()),
                    Inline::Strong("quarterly numbers".into()),
                    Inline::Text(" to ".into()),
                    Inline::Code("ana".into()),
                    Inline::Text(".".into()),
                ]),
                Block::List {
                    ordered: false,
                    items: vec![
                        vec![Inline::Text("one".into())],
                        vec![Inline::Emphasis("two".into())]
                    ]
                },
                Block::Code("<b>x</b>".into()),
            ]
        );
    }

    #[test]
    fn plain_text_drops_marks_and_keeps_markup_as_text() {
        assert_eq!(
            plain_text("Pay invoice *2026-114* to [the supplier](https://x.test) <script>"),
            "Pay invoice 2026-114 to the supplier (https://x.test) <script>"
        );
        assert_eq!(plain_text("# Title\n1. a\n2. b"), "Title a; b");
        assert_eq!(
            plain_text("2 * 3 = 6, send_email_now"),
            "2 * 3 = 6, send_email_now"
        );
    }
}
