//! The part of a JSON answer its reader uses, and the parse that builds only that part.
//!
//! Parsing the forge's answer into a `serde_json::Value` was most of what a read cost: every
//! member name of every object hashed and allocated, for answers whose user objects, repository
//! copies and links the projections never look at. A request may carry a [`Subset`] (the
//! engine derives it from everything that reads the answer: projections, checks, item lists,
//! counts); the members outside it are skipped while the bytes are parsed ([`parse`]), never
//! built. What stays is exactly what reading the whole answer would have found: a value's type,
//! every array's length, every scalar on a kept path.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The parts of a JSON value that are read.
#[derive(Debug, Clone, PartialEq)]
pub enum Subset {
    /// The whole value.
    Whole,
    /// Of an object, some members; of an array, its elements (each as [`Part::elements`] says).
    Part(Part),
}

/// What a [`Subset::Part`] keeps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Part {
    /// Named members of an object, sorted by [`Part::find`]'s order; each already holds what
    /// `every_member` adds to it.
    members: Vec<(String, Subset)>,
    /// What is read of every member of an object (a `.*` path).
    every_member: Option<Box<Subset>>,
    /// What is read of each element of an array; an array none of whose elements is read is
    /// kept whole (a path by name never selects inside an array, so only its length could
    /// matter, and keeping it costs a parse that is rare).
    elements: Option<Box<Subset>>,
}

/// One step of a path into a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The member of an object of this name.
    Member(&'a str),
    /// Any element of an array.
    Element,
    /// Every member of an object.
    EveryMember,
}

impl Subset {
    /// Nothing read yet: an object keeps no member, a scalar stays what it is.
    pub fn nothing() -> Subset {
        Subset::Part(Part::default())
    }

    /// Adds `what`, read at `path` from this value.
    pub fn add(&mut self, path: &[Step], what: &Subset) {
        let Subset::Part(part) = self else { return };
        let Some((step, rest)) = path.split_first() else {
            self.merge(what);
            return;
        };
        match step {
            Step::Member(name) => {
                let at = match part.find(name) {
                    Ok(at) => at,
                    Err(at) => {
                        let every = part.every_member.as_deref().cloned();
                        let start = every.unwrap_or_else(Subset::nothing);
                        part.members.insert(at, ((*name).to_owned(), start));
                        at
                    }
                };
                part.members[at].1.add(rest, what);
            }
            Step::Element => part
                .elements
                .get_or_insert_with(|| Box::new(Subset::nothing()))
                .add(rest, what),
            Step::EveryMember => {
                part.every_member
                    .get_or_insert_with(|| Box::new(Subset::nothing()))
                    .add(rest, what);
                for (_, member) in &mut part.members {
                    member.add(rest, what);
                }
            }
        }
    }

    /// Adds everything `other` reads.
    pub fn merge(&mut self, other: &Subset) {
        match (&mut *self, other) {
            (Subset::Whole, _) => {}
            (_, Subset::Whole) => *self = Subset::Whole,
            (Subset::Part(_), Subset::Part(theirs)) => {
                if let Some(every) = &theirs.every_member {
                    self.add(&[Step::EveryMember], every);
                }
                for (name, member) in &theirs.members {
                    self.add(&[Step::Member(name)], member);
                }
                if let Some(elements) = &theirs.elements {
                    self.add(&[Step::Element], elements);
                }
            }
        }
    }

    /// Whether the whole value is read.
    pub fn is_whole(&self) -> bool {
        matches!(self, Subset::Whole)
    }
}

impl Part {
    /// What is read of the member `name`; `None` when it is skipped.
    fn member(&self, name: &str) -> Option<&Subset> {
        match self.find(name) {
            Ok(at) => Some(&self.members[at].1),
            Err(_) => self.every_member.as_deref(),
        }
    }

    /// Where `name` is among the members, or would be: ordered by length first, so that most
    /// of the comparisons made for each member of every object parsed are of two lengths.
    /// A short list is walked (most names are passed on their length alone), a long one halved.
    fn find(&self, name: &str) -> Result<usize, usize> {
        let order = |n: &String| n.len().cmp(&name.len()).then_with(|| n.as_str().cmp(name));
        if self.members.len() > 16 {
            return self.members.binary_search_by(|(n, _)| order(n));
        }
        for (at, (n, _)) in self.members.iter().enumerate() {
            match order(n) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => return Ok(at),
                std::cmp::Ordering::Greater => return Err(at),
            }
        }
        Err(self.members.len())
    }
}

/// `bytes` parsed as JSON, keeping what `subset` reads: the same value as parsing it whole and
/// then dropping every member the subset does not name, and as strict (invalid JSON is refused
/// wherever it is, skipped parts included).
///
/// The body is checked as UTF-8 once, as a whole: cheaper than serde_json's check of each
/// string it reads from bytes. A body that is not UTF-8 is read from its bytes as before, so it
/// is refused exactly where it was (a kept string that is not UTF-8), and nowhere else.
pub fn parse(bytes: &[u8], subset: &Subset) -> serde_json::Result<Value> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_from(serde_json::Deserializer::from_str(text), subset),
        Err(_) => parse_from(serde_json::Deserializer::from_slice(bytes), subset),
    }
}

fn parse_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    subset: &Subset,
) -> serde_json::Result<Value> {
    let value = Kept(subset).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// A value parsed keeping its subset.
struct Kept<'s>(&'s Subset);

impl<'de> DeserializeSeed<'de> for Kept<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        match self.0 {
            Subset::Whole => serde::Deserialize::deserialize(de),
            Subset::Part(part) => de.deserialize_any(PartVisitor(part)),
        }
    }
}

struct PartVisitor<'s>(&'s Part);

impl<'de> Visitor<'de> for PartVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // As `serde_json::Value` reads it: a number JSON can hold, or null.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let element = self.0.elements.as_deref().unwrap_or(&Subset::Whole);
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Kept(element))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        // Room for the named members at once: a map grown one member at a time is moved and
        // rehashed as it grows.
        let named = match self.0.every_member {
            None => self.0.members.len(),
            Some(_) => 0,
        };
        let mut kept = Map::with_capacity(named);
        while let Some(name) = map.next_key_seed(Name)? {
            match self.0.member(&name) {
                Some(subset) => {
                    let value = map.next_value_seed(Kept(subset))?;
                    kept.insert(name.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(kept))
    }
}

/// A member name, borrowed from the bytes when it has no escapes: a skipped member costs no
/// allocation.
struct Name;

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Err(E::invalid_type(de::Unexpected::Bytes(v), &self))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// What [`parse`] promises: the whole value with what the subset does not read dropped.
    fn pruned(value: &Value, subset: &Subset) -> Value {
        let Subset::Part(part) = subset else {
            return value.clone();
        };
        match value {
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), pruned(v, part.member(k)?))))
                    .collect(),
            ),
            Value::Array(items) => {
                let element = part.elements.as_deref().unwrap_or(&Subset::Whole);
                Value::Array(items.iter().map(|i| pruned(i, element)).collect())
            }
            scalar => scalar.clone(),
        }
    }

    fn subset_of(paths: &[&[Step]]) -> Subset {
        let mut subset = Subset::nothing();
        for path in paths {
            subset.add(path, &Subset::Whole);
        }
        subset
    }

    #[test]
    fn only_the_paths_read_are_built() {
        let body = json!({"id": 7, "title": "t", "user": {"login": "a", "id": 1, "avatar": "x"},
            "labels": [{"name": "bug", "color": "f00"}, {"name": "ui", "color": "0f0"}],
            "repository": {"owner": {"login": "o"}, "name": "r"}});
        let subset = subset_of(&[
            &[Step::Member("title")],
            &[Step::Member("user"), Step::Member("login")],
            &[Step::Member("labels"), Step::Element, Step::Member("name")],
            &[
                Step::Member("repository"),
                Step::EveryMember,
                Step::Member("login"),
            ],
        ]);
        let parsed = parse(body.to_string().as_bytes(), &subset).unwrap();
        assert_eq!(
            parsed,
            json!({"title": "t", "user": {"login": "a"},
                "labels": [{"name": "bug"}, {"name": "ui"}],
                "repository": {"owner": {"login": "o"}, "name": "r"}})
        );
    }

    #[test]
    fn a_whole_member_absorbs_its_paths_and_invalid_json_is_refused_where_skipped() {
        let mut subset = subset_of(&[&[Step::Member("user"), Step::Member("login")]]);
        subset.add(&[Step::Member("user")], &Subset::Whole);
        assert_eq!(
            subset,
            subset_of(&[&[Step::Member("user")]]),
            "reading the whole member covers reading its login"
        );
        assert!(parse(br#"{"user": {}, "skipped": [1, }"#, &subset).is_err());
        assert!(parse(br#"{"user": {}} trailing"#, &subset).is_err());
    }

    #[test]
    fn a_body_that_is_not_utf8_is_refused_only_where_a_kept_string_is_not() {
        let subset = subset_of(&[&[Step::Member("keep")]]);
        let skipped = b"{\"keep\": \"a\", \"skip\": \"\xff\"}";
        assert_eq!(parse(skipped, &subset).unwrap(), json!({"keep": "a"}));
        assert!(parse(b"{\"keep\": \"\xff\"}", &subset).is_err());
        assert!(parse(skipped, &Subset::Whole).is_err());
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-c\\\\\"é]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 40, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn path() -> impl Strategy<Value = Vec<(u8, String)>> {
        prop::collection::vec((0u8..3, "[a-c]{1,2}"), 0..4)
    }

    proptest! {
        #[test]
        fn parsing_a_subset_is_parsing_whole_then_pruning(
            value in json_value(),
            paths in prop::collection::vec(path(), 0..4),
        ) {
            let steps: Vec<Vec<Step>> = paths
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|(kind, name)| match kind {
                            0 => Step::Member(name),
                            1 => Step::Element,
                            _ => Step::EveryMember,
                        })
                        .collect()
                })
                .collect();
            let subset = subset_of(&steps.iter().map(Vec::as_slice).collect::<Vec<_>>());
            let text = value.to_string();
            prop_assert_eq!(parse(text.as_bytes(), &subset).unwrap(), pruned(&value, &subset));
        }

        /// Walked or halved, a member is found where it is, and a name that is not one where it
        /// would go.
        #[test]
        fn a_member_is_found_alike_in_short_and_long_lists(
            names in prop::collection::vec("[a-d]{1,4}", 0..40),
            asked in "[a-d]{1,4}",
        ) {
            let subset = subset_of(&names.iter().map(|n| [Step::Member(n)]).collect::<Vec<_>>()
                .iter().map(|p| p.as_slice()).collect::<Vec<_>>());
            let Subset::Part(part) = subset else { unreachable!("a subset of members is a part") };
            let expected = part.members.binary_search_by(|(n, _)| {
                n.len().cmp(&asked.len()).then_with(|| n.as_str().cmp(&asked))
            });
            prop_assert_eq!(part.find(&asked), expected);
        }
    }
}
