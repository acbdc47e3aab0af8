//! What a read or a call delivered to the model, and the test's own judgement of it, written
//! apart from the server's: which characters a reader of the forge would not see, which images
//! would be fetched from another host, and which fields the answer names as user-written.

use serde_json::Value;

use super::Server;

/// What one read or call delivered: its text blocks (a text tool's text as its content shows
/// it), and its JSON with the JSON's `_meta`.
pub struct Delivered {
    pub what: String,
    pub blocks: Vec<String>,
    pub json: Vec<(Value, Option<Value>)>,
    /// The content a client hands the model, when it is the JSON enveloped whole (an unshaped
    /// answer).
    pub enveloped_json: Option<String>,
}

impl Delivered {
    /// The fields the `_meta` names as user-written, whoever wrote them (`*`: every field).
    pub fn untrusted_fields(meta: &Option<Value>) -> Vec<String> {
        meta.as_ref()
            .and_then(|m| m.get("forgelens/untrusted"))
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|by_author| by_author.values())
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    }
}

/// Reads `uri` and sorts its blocks.
pub async fn read(server: &Server, uri: &str) -> Delivered {
    let result = server
        .read(uri)
        .await
        .unwrap_or_else(|e| panic!("{uri}: {e:?}"));
    let mut d = Delivered {
        what: uri.to_owned(),
        blocks: Vec::new(),
        json: Vec::new(),
        enveloped_json: None,
    };
    for content in result.contents {
        if let rmcp::model::ResourceContents::TextResourceContents {
            text,
            mime_type,
            meta,
            ..
        } = content
        {
            match mime_type.as_deref() {
                Some("application/json") => d.json.push((
                    serde_json::from_str(&text).unwrap(),
                    meta.map(|m| Value::Object(m.0)),
                )),
                _ => d.blocks.push(text),
            }
        }
    }
    d
}

/// Calls `tool`, expecting a result that is no error.
pub async fn call(server: &Server, tool: &str, args: Value) -> Delivered {
    let result = server
        .call(tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:?}"));
    assert_ne!(result.is_error, Some(true), "{tool} {args}: {result:?}");
    let meta = result.meta.map(|m| Value::Object(m.0));
    let content = result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    let structured = result.structured_content.expect("a structured result");
    let every_field = Delivered::untrusted_fields(&meta).iter().any(|f| f == "*");
    let mut blocks = Vec::new();
    let mut enveloped_json = None;
    if every_field {
        enveloped_json = Some(content);
    } else if meta
        .as_ref()
        .is_some_and(|m| m.to_string().contains("\"text\""))
    {
        // A text tool's text, as the result's content shows it to the model: held to what a
        // text block is held to.
        let shown: Value =
            serde_json::from_str(&content).expect("the content is the result's JSON");
        blocks.push(shown["text"].as_str().unwrap_or_default().to_owned());
    }
    Delivered {
        what: format!("{tool} {args}"),
        blocks,
        json: vec![(structured, meta)],
        enveloped_json,
    }
}

/// Whether `c`, at `i` in `chars`, is text a reader of the forge would not see, or a character
/// that carries data no one sees (a joiner or variation selector outside the sequences that
/// show).
pub fn hidden_at(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    let pictograph = |j: Option<usize>| {
        j.and_then(|j| chars.get(j)).is_some_and(|x| {
            matches!(*x as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2300..=0x23FF | 0x2B00..=0x2BFF)
        })
    };
    let joining_script = |j: Option<usize>| {
        j.and_then(|j| chars.get(j))
            .is_some_and(|x| matches!(*x as u32, 0x0600..=0x06FF | 0x0750..=0x077F | 0x08A0..=0x08FF | 0x0900..=0x0DFF))
    };
    match c {
        '\n' | '\t' => false,
        '\r' => chars.get(i + 1) != Some(&'\n'),
        '\u{200D}' => {
            let (before, after) = (i.checked_sub(1), Some(i + 1));
            !((pictograph(before) && pictograph(after))
                || (joining_script(before) && joining_script(after)))
        }
        '\u{200C}' => !(joining_script(i.checked_sub(1)) && joining_script(Some(i + 1))),
        '\u{FE0E}' | '\u{FE0F}' => !pictograph(i.checked_sub(1)),
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{2028}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{2800}'
        | '\u{3164}'
        | '\u{E000}'..='\u{F8FF}'
        | '\u{FDD0}'..='\u{FDEF}'
        | '\u{FE00}'..='\u{FE0D}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFFB}'
        | '\u{16FE4}'
        | '\u{1D159}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}'
        | '\u{F0000}'..='\u{10FFFF}' => true,
        c if (c as u32 & 0xFFFE) == 0xFFFE => true,
        c => c.is_control(),
    }
}

/// The hidden characters of `text`, as `U+XXXX`.
pub fn hidden_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .filter(|&i| hidden_at(&chars, i))
        .map(|i| format!("U+{:04X}", chars[i] as u32))
        .collect()
}

/// Every string in `value`, with its path (array indices written `[]`).
pub fn strings<'a>(value: &'a Value, at: &str, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) => out.push((at.to_owned(), s)),
        Value::Array(items) => items
            .iter()
            .for_each(|v| strings(v, &format!("{at}[]"), out)),
        Value::Object(map) => {
            for (k, v) in map {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                strings(v, &path, out);
            }
        }
        _ => {}
    }
}

/// Whether `path` is a field `fields` names, or lies inside one (`entries[].path` inside
/// `entries`); `*` names every field.
pub fn named_untrusted(fields: &[String], path: &str) -> bool {
    fields.iter().any(|f| {
        f == "*"
            || f == path
            || path
                .strip_prefix(f.as_str())
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
    })
}
