//! JSON whose objects list their keys in sorted order, written straight from the types to the writer.
//!
//! The design JSON has listed every object's keys sorted since the first release (it was printed from a
//! `serde_json::Value`, whose maps are sorted). `Sorted` gives the same bytes without building a `Value`:
//! a struct is serialised once with its values skipped to learn its keys, then once per key in sorted
//! order, each time writing only that key's value (itself `Sorted`), so nothing is held but the keys of the
//! objects being written. Everything else is passed through as serialised, except what a `Value` would
//! have changed: `f32` is written as the `f64` it converts to, and a map (`serialize_map`: maps and
//! `#[serde(flatten)]` structs, none of them large in a report) goes through a `Value` as before.
//!
//! `Patched` sets one key of an object to another value (added, or in place of the type's own), which is
//! how the design report writes only the selected layouts and adds their `cost`.

use serde::ser::{self, Error as _, Impossible, Serialize, SerializeMap, SerializeStruct, SerializeStructVariant};
use serde::Serializer;

/// `T` serialised with every object's keys in sorted order (as a `serde_json::Value` would print it).
pub struct Sorted<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized + Serialize> Serialize for Sorted<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Proxy::<S, T, ()> {
            s,
            whole: self.0,
            patch: None,
        })
    }
}

/// `inner` as `Sorted` writes it, with its key `key` set to `value` (added when `inner` has no such key,
/// in place of its own when it has); `inner` unchanged when `value` is None.
pub struct Patched<'a, T: ?Sized, E> {
    pub inner: &'a T,
    pub key: &'static str,
    pub value: Option<E>,
}

impl<T: ?Sized + Serialize, E: Serialize> Serialize for Patched<'_, T, E> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.inner.serialize(Proxy {
            s,
            whole: self.inner,
            patch: self.value.as_ref().map(|v| (self.key, v)),
        })
    }
}

/// The serializer `whole` is serialised into: passes everything through to `s`, sorting objects' keys.
struct Proxy<'a, S, T: ?Sized, E> {
    s: S,
    whole: &'a T,
    patch: Option<(&'static str, &'a E)>,
}

/// A struct's keys, collected while its values are skipped; `end` writes the struct in key order.
struct Keys<'a, S, T: ?Sized, E> {
    proxy: Proxy<'a, S, T, E>,
    name: &'static str,
    variant: Option<(u32, &'static str)>,
    keys: Vec<&'static str>,
}

/// Field `key` of the struct `whole` serialises as, alone.
struct Pick<'a, T: ?Sized> {
    whole: &'a T,
    key: &'static str,
}

/// A list's, tuple's or map's serializer with every element written `Sorted`.
struct Each<X>(X);

/// A result already written (a map, through a `Value`); the entries serialised into it are ignored.
struct Done<Ok, Er>(Ok, std::marker::PhantomData<Er>);

impl<'a, S: Serializer, T: ?Sized + Serialize, E: Serialize> Serializer for Proxy<'a, S, T, E> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Each<S::SerializeSeq>;
    type SerializeTuple = Each<S::SerializeTuple>;
    type SerializeTupleStruct = Each<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Each<S::SerializeTupleVariant>;
    type SerializeMap = Done<S::Ok, S::Error>;
    type SerializeStruct = Keys<'a, S, T, E>;
    type SerializeStructVariant = Keys<'a, S, T, E>;

    fn serialize_bool(self, v: bool) -> Result<S::Ok, S::Error> {
        self.s.serialize_bool(v)
    }
    fn serialize_i8(self, v: i8) -> Result<S::Ok, S::Error> {
        self.s.serialize_i8(v)
    }
    fn serialize_i16(self, v: i16) -> Result<S::Ok, S::Error> {
        self.s.serialize_i16(v)
    }
    fn serialize_i32(self, v: i32) -> Result<S::Ok, S::Error> {
        self.s.serialize_i32(v)
    }
    fn serialize_i64(self, v: i64) -> Result<S::Ok, S::Error> {
        self.s.serialize_i64(v)
    }
    fn serialize_i128(self, v: i128) -> Result<S::Ok, S::Error> {
        self.s.serialize_i128(v)
    }
    fn serialize_u8(self, v: u8) -> Result<S::Ok, S::Error> {
        self.s.serialize_u8(v)
    }
    fn serialize_u16(self, v: u16) -> Result<S::Ok, S::Error> {
        self.s.serialize_u16(v)
    }
    fn serialize_u32(self, v: u32) -> Result<S::Ok, S::Error> {
        self.s.serialize_u32(v)
    }
    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        self.s.serialize_u64(v)
    }
    fn serialize_u128(self, v: u128) -> Result<S::Ok, S::Error> {
        self.s.serialize_u128(v)
    }
    /// A `Value` holds an `f32` as the `f64` it converts to, and prints that.
    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.s.serialize_f64(v as f64)
    }
    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        self.s.serialize_f64(v)
    }
    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.s.serialize_char(v)
    }
    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        self.s.serialize_str(v)
    }
    fn collect_str<D: ?Sized + std::fmt::Display>(self, v: &D) -> Result<S::Ok, S::Error> {
        self.s.collect_str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<S::Ok, S::Error> {
        self.s.serialize_bytes(v)
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.s.serialize_none()
    }
    fn serialize_some<V: ?Sized + Serialize>(self, v: &V) -> Result<S::Ok, S::Error> {
        self.s.serialize_some(&Sorted(v))
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.s.serialize_unit()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<S::Ok, S::Error> {
        self.s.serialize_unit_struct(name)
    }
    fn serialize_unit_variant(self, name: &'static str, i: u32, variant: &'static str) -> Result<S::Ok, S::Error> {
        self.s.serialize_unit_variant(name, i, variant)
    }
    fn serialize_newtype_struct<V: ?Sized + Serialize>(self, name: &'static str, v: &V) -> Result<S::Ok, S::Error> {
        self.s.serialize_newtype_struct(name, &Sorted(v))
    }
    fn serialize_newtype_variant<V: ?Sized + Serialize>(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        v: &V,
    ) -> Result<S::Ok, S::Error> {
        self.s.serialize_newtype_variant(name, i, variant, &Sorted(v))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.s.serialize_seq(len).map(Each)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.s.serialize_tuple(len).map(Each)
    }
    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.s.serialize_tuple_struct(name, len).map(Each)
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.s.serialize_tuple_variant(name, i, variant, len).map(Each)
    }
    /// A map's keys are its data: it is written through a `Value` (sorted), as the report always was.
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        let mut v = serde_json::to_value(self.whole).map_err(S::Error::custom)?;
        if let (Some((key, value)), Some(o)) = (self.patch, v.as_object_mut()) {
            o.insert(
                key.into(),
                serde_json::to_value(Sorted(value)).map_err(S::Error::custom)?,
            );
        }
        v.serialize(self.s).map(|ok| Done(ok, std::marker::PhantomData))
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Keys {
            proxy: self,
            name,
            variant: None,
            keys: Vec::with_capacity(len + 1),
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Ok(Keys {
            proxy: self,
            name,
            variant: Some((i, variant)),
            keys: Vec::with_capacity(len + 1),
        })
    }
    fn is_human_readable(&self) -> bool {
        self.s.is_human_readable()
    }
}

impl<S: Serializer, T: ?Sized + Serialize, E: Serialize> Keys<'_, S, T, E> {
    /// Write the struct: its keys (and the patch's) in sorted order, each value on its own pass.
    fn write(self) -> Result<S::Ok, S::Error> {
        let Keys {
            proxy,
            name,
            variant,
            mut keys,
        } = self;
        let Proxy { s, whole, patch } = proxy;
        if let Some((key, _)) = patch {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys.sort_unstable();
        let value = |key: &'static str| -> Either<'_, T, E> {
            match patch {
                Some((k, v)) if k == key => Either::Patch(Sorted(v)),
                _ => Either::Own(Pick { whole, key }),
            }
        };
        match variant {
            None => {
                let mut st = s.serialize_struct(name, keys.len())?;
                for key in keys {
                    st.serialize_field(key, &value(key))?;
                }
                st.end()
            }
            Some((i, var)) => {
                let mut st = s.serialize_struct_variant(name, i, var, keys.len())?;
                for key in keys {
                    st.serialize_field(key, &value(key))?;
                }
                st.end()
            }
        }
    }
}

/// A field's value: the struct's own, or the patch.
enum Either<'a, T: ?Sized, E> {
    Own(Pick<'a, T>),
    Patch(Sorted<'a, E>),
}

impl<T: ?Sized + Serialize, E: Serialize> Serialize for Either<'_, T, E> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Either::Own(p) => p.serialize(s),
            Either::Patch(v) => v.serialize(s),
        }
    }
}

impl<S: Serializer, T: ?Sized + Serialize, E: Serialize> SerializeStruct for Keys<'_, S, T, E> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, _: &V) -> Result<(), S::Error> {
        self.keys.push(key);
        Ok(())
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.write()
    }
}

impl<S: Serializer, T: ?Sized + Serialize, E: Serialize> SerializeStructVariant for Keys<'_, S, T, E> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, _: &V) -> Result<(), S::Error> {
        self.keys.push(key);
        Ok(())
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.write()
    }
}

impl<T: ?Sized + Serialize> Serialize for Pick<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.whole.serialize(PickProxy { s, key: self.key })
    }
}

/// The serializer a struct is serialised into to write one of its fields.
struct PickProxy<S> {
    s: S,
    key: &'static str,
}

/// The field being looked for, written when it comes.
struct PickField<S: Serializer> {
    s: Option<S>,
    key: &'static str,
    out: Option<S::Ok>,
}

impl<S: Serializer> PickField<S> {
    fn field<V: ?Sized + Serialize>(&mut self, key: &'static str, v: &V) -> Result<(), S::Error> {
        if key == self.key {
            if let Some(s) = self.s.take() {
                self.out = Some(Sorted(v).serialize(s)?);
            }
        }
        Ok(())
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        let key = self.key;
        self.out
            .ok_or_else(|| S::Error::custom(format!("field `{key}` was not serialised a second time")))
    }
}

impl<S: Serializer> SerializeStruct for PickField<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, v: &V) -> Result<(), S::Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        PickField::end(self)
    }
}

impl<S: Serializer> SerializeStructVariant for PickField<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, key: &'static str, v: &V) -> Result<(), S::Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        PickField::end(self)
    }
}

/// A value that serialised as a struct once and as something else the next time.
fn not_a_struct<E: ser::Error>() -> E {
    E::custom("a value serialised as a struct once and as something else the next time")
}

impl<S: Serializer> Serializer for PickProxy<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = PickField<S>;
    type SerializeStructVariant = PickField<S>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<PickField<S>, S::Error> {
        Ok(PickField {
            s: Some(self.s),
            key: self.key,
            out: None,
        })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<PickField<S>, S::Error> {
        Ok(PickField {
            s: Some(self.s),
            key: self.key,
            out: None,
        })
    }
    fn serialize_bool(self, _: bool) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_i64(self, _: i64) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_u64(self, _: u64) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_f64(self, _: f64) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_i8(self, _: i8) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_i16(self, _: i16) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_i32(self, _: i32) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_u8(self, _: u8) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_u16(self, _: u16) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_u32(self, _: u32) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_f32(self, _: f32) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_char(self, _: char) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_str(self, _: &str) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_some<V: ?Sized + Serialize>(self, _: &V) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_newtype_struct<V: ?Sized + Serialize>(self, _: &'static str, _: &V) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_newtype_variant<V: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Err(not_a_struct())
    }
}

impl<X: ser::SerializeSeq> ser::SerializeSeq for Each<X> {
    type Ok = X::Ok;
    type Error = X::Error;
    fn serialize_element<V: ?Sized + Serialize>(&mut self, v: &V) -> Result<(), X::Error> {
        self.0.serialize_element(&Sorted(v))
    }
    fn end(self) -> Result<X::Ok, X::Error> {
        self.0.end()
    }
}

impl<X: ser::SerializeTuple> ser::SerializeTuple for Each<X> {
    type Ok = X::Ok;
    type Error = X::Error;
    fn serialize_element<V: ?Sized + Serialize>(&mut self, v: &V) -> Result<(), X::Error> {
        self.0.serialize_element(&Sorted(v))
    }
    fn end(self) -> Result<X::Ok, X::Error> {
        self.0.end()
    }
}

impl<X: ser::SerializeTupleStruct> ser::SerializeTupleStruct for Each<X> {
    type Ok = X::Ok;
    type Error = X::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, v: &V) -> Result<(), X::Error> {
        self.0.serialize_field(&Sorted(v))
    }
    fn end(self) -> Result<X::Ok, X::Error> {
        self.0.end()
    }
}

impl<X: ser::SerializeTupleVariant> ser::SerializeTupleVariant for Each<X> {
    type Ok = X::Ok;
    type Error = X::Error;
    fn serialize_field<V: ?Sized + Serialize>(&mut self, v: &V) -> Result<(), X::Error> {
        self.0.serialize_field(&Sorted(v))
    }
    fn end(self) -> Result<X::Ok, X::Error> {
        self.0.end()
    }
}

impl<Ok, Er: ser::Error> SerializeMap for Done<Ok, Er> {
    type Ok = Ok;
    type Error = Er;
    fn serialize_key<V: ?Sized + Serialize>(&mut self, _: &V) -> Result<(), Er> {
        Ok(())
    }
    fn serialize_value<V: ?Sized + Serialize>(&mut self, _: &V) -> Result<(), Er> {
        Ok(())
    }
    fn end(self) -> Result<Ok, Er> {
        Ok(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::HashMap;

    #[derive(Serialize)]
    struct Entry {
        name: String,
        z: u32,
        a: Vec<u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        maybe: Option<f32>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Wrapped(Entry),
        Fields { y: u8, b: (u8, String) },
    }

    #[derive(Serialize)]
    struct Flat {
        zz: u8,
        #[serde(flatten)]
        inner: Inner,
    }

    #[derive(Serialize)]
    struct Inner {
        deep: Vec<Entry>,
        b: f64,
        empty: Vec<Entry>,
        nothing: Option<Entry>,
    }

    #[derive(Serialize)]
    struct Doc {
        title: String,
        items: Vec<Entry>,
        inner: Inner,
        kinds: Vec<Kind>,
        map: HashMap<String, Entry>,
        flat: Flat,
        unit: (),
        nan: f64,
    }

    fn entry(i: u32) -> Entry {
        Entry {
            name: format!("e{i} \"quoted\"\n"),
            z: i,
            a: vec![1, 2],
            maybe: i.is_multiple_of(2).then_some(0.1),
        }
    }

    fn doc() -> Doc {
        let inner = |r: std::ops::Range<u32>| Inner {
            deep: r.map(entry).collect(),
            b: 0.1,
            empty: vec![],
            nothing: None,
        };
        Doc {
            title: "t".into(),
            items: (0..3).map(entry).collect(),
            inner: inner(5..7),
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(entry(9)),
                Kind::Fields {
                    y: 1,
                    b: (2, "x".into()),
                },
            ],
            map: (0..4).map(|i| (format!("k{}", 7 - i), entry(i))).collect(),
            flat: Flat {
                zz: 3,
                inner: inner(1..3),
            },
            unit: (),
            nan: f64::NAN,
        }
    }

    #[test]
    fn sorted_bytes_are_the_value_s_bytes() {
        let d = doc();
        let whole = serde_json::to_vec_pretty(&serde_json::to_value(&d).unwrap()).unwrap();
        let sorted = serde_json::to_vec_pretty(&Sorted(&d)).unwrap();
        assert_eq!(String::from_utf8(sorted).unwrap(), String::from_utf8(whole).unwrap());
        // And not by chance: the struct's own order differs.
        assert_ne!(
            serde_json::to_vec_pretty(&d).unwrap(),
            serde_json::to_vec_pretty(&serde_json::to_value(&d).unwrap()).unwrap()
        );
    }

    #[test]
    fn a_patch_replaces_a_key_or_adds_one_in_its_sorted_place() {
        let d = doc();
        let items = vec![entry(42)];
        let mut want = serde_json::to_value(&d).unwrap();
        want["items"] = serde_json::to_value(&items).unwrap();
        let got = Patched {
            inner: &d,
            key: "items",
            value: Some(&items),
        };
        assert_eq!(
            serde_json::to_string_pretty(&got).unwrap(),
            serde_json::to_string_pretty(&want).unwrap()
        );
        want["cost"] = serde_json::json!({"z": 1, "a": 2});
        let cost = serde_json::json!({"z": 1, "a": 2});
        let got = Patched {
            inner: &Patched {
                inner: &d,
                key: "items",
                value: Some(&items),
            },
            key: "cost",
            value: Some(&cost),
        };
        let text = serde_json::to_string_pretty(&got).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&want).unwrap());
        assert!(text.find("\"cost\"").unwrap() < text.find("\"flat\"").unwrap());
        let none = Patched::<_, u8> {
            inner: &d,
            key: "cost",
            value: None,
        };
        assert_eq!(
            serde_json::to_string(&none).unwrap(),
            serde_json::to_string(&Sorted(&d)).unwrap()
        );
    }
}
