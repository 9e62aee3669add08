//! The fields of a Neuron event the reader uses, parsed straight from the
//! event's bytes (strings borrowed where they have no escapes; every other
//! field skipped): the event's own text is kept whole as its args, so
//! nothing is parsed into a generic map and written out again.
//!
//! Neuron writes ids and indices both as numbers and as strings
//! (`"lnc_idx": "0"`, `"process_id": "1765325"`), so each field is a
//! [`Text`]: whatever scalar the file holds, read as text or as an integer
//! on demand.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// A scalar as the file wrote it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Text<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Text<'_> {
    /// As an integer: a number (a float rounded), or a string holding one.
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Text::Int(v) => Some(*v),
            Text::Float(f) => f.is_finite().then(|| f.round() as i64),
            Text::Str(s) => s.trim().parse().ok(),
            Text::Bool(_) => None,
        }
    }

    /// As text (numbers and booleans written out).
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Text::Str(s) => Cow::Borrowed(s.as_ref()),
            Text::Int(v) => Cow::Owned(v.to_string()),
            Text::Float(f) => Cow::Owned(f.to_string()),
            Text::Bool(b) => Cow::Owned(b.to_string()),
        }
    }

    /// The string, when the value is one.
    pub(crate) fn str(&self) -> Option<&str> {
        match self {
            Text::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct TextVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, a number or a boolean")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'a>, E> {
        Ok(Text::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'a>, E> {
        Ok(Text::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'a>, E> {
        Ok(Text::Str(Cow::Owned(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text<'a>, E> {
        Ok(Text::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text<'a>, E> {
        Ok(match i64::try_from(v) {
            Ok(v) => Text::Int(v),
            Err(_) => Text::Str(Cow::Owned(v.to_string())),
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text<'a>, E> {
        Ok(Text::Float(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text<'a>, E> {
        Ok(Text::Bool(v))
    }
}

fn tv<'a>() -> TextVisitor<'a> {
    TextVisitor(PhantomData)
}

/// A field that is a scalar where this reader expects one, and anything
/// else (an object, a list) where a version writes that: then `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Scalar<'a>(pub(crate) Option<Text<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Scalar<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'a>, E> {
                tv().visit_borrowed_str(v).map(|t| Scalar(Some(t)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'a>, E> {
                tv().visit_str(v).map(|t| Scalar(Some(t)))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'a>, E> {
                tv().visit_string(v).map(|t| Scalar(Some(t)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'a>, E> {
                Ok(Scalar(Some(Text::Int(v))))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'a>, E> {
                tv().visit_u64(v).map(|t| Scalar(Some(t)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'a>, E> {
                Ok(Scalar(Some(Text::Float(v))))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'a>, E> {
                Ok(Scalar(Some(Text::Bool(v))))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar<'a>, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar<'a>, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Scalar<'a>, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Scalar(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `flow_id`: a list of ids (strings or numbers), or one id.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Flows<'a> {
    pub(crate) ids: Vec<Text<'a>>,
    /// 0: a list of strings (or mixed), 1: a list of numbers, 2: one value.
    pub(crate) shape: u8,
}

impl<'de: 'a, 'a> Deserialize<'de> for Flows<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Flows<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a flow id or a list of them")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flows<'a>, A::Error> {
                let mut ids = Vec::new();
                while let Some(Scalar(t)) = seq.next_element::<Scalar<'a>>()? {
                    ids.extend(t);
                }
                let numbers = !ids.is_empty() && ids.iter().all(|t| !matches!(t, Text::Str(_)));
                Ok(Flows {
                    ids,
                    shape: u8::from(numbers),
                })
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Flows<'a>, E> {
                Ok(one(Text::Str(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Flows<'a>, E> {
                Ok(one(Text::Str(Cow::Owned(v.to_string()))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Flows<'a>, E> {
                Ok(one(Text::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Flows<'a>, E> {
                tv().visit_u64(v).map(one)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Flows<'a>, E> {
                Ok(one(Text::Float(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Flows<'a>, E> {
                Ok(Flows::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Flows<'a>, E> {
                Ok(Flows::default())
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Flows<'a>, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Flows::default())
            }
        }
        fn one(t: Text) -> Flows {
            Flows {
                ids: vec![t],
                shape: 2,
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The fields of one event this reader uses; the rest of the event stays
/// in its text.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Event<'a> {
    #[serde(borrow)]
    pub(crate) name: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) trace_event_source: Scalar<'a>,
    #[serde(borrow, rename = "type")]
    pub(crate) kind: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) group: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) timestamp: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) duration: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) timestamp_unit: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) instance_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) process_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) thread_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) lnc_idx: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) nc_idx: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) device_core_idx: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) pcore_idx: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) nc_start_timestamp_ns: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) nc_stop_timestamp_ns: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) flow_id: Option<Flows<'a>>,
    #[serde(borrow)]
    pub(crate) nrt_sequence_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) nrta_seq_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) exec_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) model_id: Scalar<'a>,
    #[serde(borrow)]
    pub(crate) model_name: Scalar<'a>,
    /// Some versions put `exec_id` and the like under `args`.
    #[serde(borrow)]
    pub(crate) args: Option<Box<Event<'a>>>,
}

impl<'a> Event<'a> {
    /// Fields this event lacks taken from its `args` object.
    pub(crate) fn lift_args(&mut self) {
        let Some(inner) = self.args.take() else {
            return;
        };
        let inner = *inner;
        macro_rules! lift {
            ($($f:ident),*) => {
                $(if self.$f.0.is_none() { self.$f = inner.$f; })*
            };
        }
        lift!(
            name,
            trace_event_source,
            kind,
            group,
            timestamp,
            duration,
            timestamp_unit,
            instance_id,
            process_id,
            thread_id,
            lnc_idx,
            nc_idx,
            device_core_idx,
            pcore_idx,
            nc_start_timestamp_ns,
            nc_stop_timestamp_ns,
            nrt_sequence_id,
            nrta_seq_id,
            exec_id,
            model_id,
            model_name
        );
        if self.flow_id.is_none() {
            self.flow_id = inner.flow_id;
        }
    }
}

/// A field as an integer.
pub(crate) fn int(f: &Scalar) -> Option<i64> {
    f.0.as_ref().and_then(Text::int)
}

/// A field as text.
pub(crate) fn text<'b>(f: &'b Scalar) -> Option<Cow<'b, str>> {
    f.0.as_ref().map(Text::text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_as_numbers_or_strings_and_other_shapes_are_passed_over() {
        let e: Event = serde_json::from_str(
            r#"{"name": "a\"b", "lnc_idx": "3", "nc_idx": 2, "timestamp": 1.5e3, "flow_id": ["7", 8],
                "process_id": {"odd": 1}, "unknown": [1, {"x": 2}], "args": {"exec_id": "42"}}"#,
        )
        .unwrap();
        assert_eq!(text(&e.name).as_deref(), Some("a\"b"));
        assert_eq!(int(&e.lnc_idx), Some(3));
        assert_eq!(int(&e.nc_idx), Some(2));
        assert_eq!(int(&e.timestamp), Some(1500));
        assert_eq!(e.process_id, Scalar(None));
        let f = e.flow_id.as_ref().unwrap();
        assert_eq!((f.ids.len(), f.shape), (2, 0));
        let mut e = e;
        e.lift_args();
        assert_eq!(int(&e.exec_id), Some(42));
        let big: Event = serde_json::from_str(r#"{"exec_id": 18446744073709551615}"#).unwrap();
        assert_eq!(int(&big.exec_id), None);
    }
}
