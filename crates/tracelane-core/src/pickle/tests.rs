//! Pickles written by CPython 3.11's `pickle.dumps` (the hex below), each
//! guarding one rule of the decoder.

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn get(d: &Dict, strings: &Interner, key: &str) -> Option<Value> {
    d.items
        .borrow()
        .iter()
        .find(|(k, _)| k.as_str_id().map(|s| strings.get(s)) == Some(key))
        .map(|(_, v)| v.clone())
}

/// `pickle.dumps({'t': [D, D]}, protocol=p)` with one shared dict D —
/// serde-pickle refuses it ("recursive structure found").
#[test]
fn a_dict_shared_through_the_memo_is_one_object_in_every_protocol() {
    let by_protocol = [
        "80027d710058010000007471015d7102287d710328580800000066696c656e616d6571045804000000612e7079710558040000006c696e6571064b0358040000006e616d657107580100000066710875680365732e",
        "80037d710058010000007471015d7102287d710328580800000066696c656e616d6571045804000000612e7079710558040000006c696e6571064b0358040000006e616d657107580100000066710875680365732e",
        "80049538000000000000007d948c0174945d94287d94288c0866696c656e616d65948c04612e7079948c046c696e65944b038c046e616d65948c01669475680365732e",
        "80059538000000000000007d948c0174945d94287d94288c0866696c656e616d65948c04612e7079948c046c696e65944b038c046e616d65948c01669475680365732e",
    ];
    for (i, h) in by_protocol.iter().enumerate() {
        let bytes = hex(h);
        assert!(looks_like(&bytes));
        decode(&bytes, |v, strings| {
            let top = v.as_dict().unwrap();
            let t = get(top, strings, "t").unwrap();
            let items = t.as_list().unwrap().values();
            assert_eq!(items.len(), 2, "protocol {}", i + 2);
            assert!(items[0].same(&items[1]), "protocol {}", i + 2);
            let d = items[0].as_dict().unwrap();
            assert_eq!(get(d, strings, "line").unwrap().as_int(), Some(3));
            let name = get(d, strings, "filename").unwrap().as_str_id().unwrap();
            assert_eq!(strings.get(name), "a.py");
        })
        .unwrap();
    }
}

/// Integers of every width, floats, tuples and sets.
#[test]
fn a_nine_byte_long_is_an_unsigned_value_not_a_failure() {
    let bytes = hex("80049560000000000000007d94288c0173948a09ffffffffffffffff008c016e944afbffffff8c0162948a090000000000000080008c03626967948a090000000000000000408c016694473ff80000000000008c0174944b014b0286948c03736574948f94284b0390752e");
    decode(&bytes, |v, strings| {
        let d = v.as_dict().unwrap();
        assert_eq!(get(d, strings, "s").unwrap().as_u64(), Some(u64::MAX));
        assert_eq!(get(d, strings, "n").unwrap().as_int(), Some(-5));
        assert_eq!(get(d, strings, "b").unwrap().as_u64(), Some(1 << 63));
        assert!(matches!(get(d, strings, "big").unwrap(), Value::BigInt));
        assert_eq!(get(d, strings, "f").unwrap().as_f64(), Some(1.5));
        let Value::Tuple(t) = get(d, strings, "t").unwrap() else {
            panic!("tuple")
        };
        assert_eq!(t.items.len(), 2);
        assert_eq!(get(d, strings, "set").unwrap().as_list().unwrap().len(), 1);
    })
    .unwrap();
}

/// `os.system` through `__reduce__`: named and refused, never called.
#[test]
fn a_pickle_that_calls_a_function_is_refused_by_name() {
    let bytes = hex("80049522000000000000008c05706f736978948c0673797374656d9493948c076563686f20686994859452942e");
    let e = decode(&bytes, |_, _| ()).unwrap_err();
    assert!(e.message.contains("posix.system"), "{e}");
    assert!(e.message.contains("never runs"), "{e}");
}

/// `collections.OrderedDict` (GLOBAL then REDUCE) is plain data.
#[test]
fn an_ordered_dict_is_a_dict() {
    let bytes = hex("800263636f6c6c656374696f6e730a4f726465726564446963740a71002952710158010000006171024b01732e");
    let a = decode(&bytes, |v, strings| get(v.as_dict().unwrap(), strings, "a")).unwrap();
    assert_eq!(a.unwrap().as_int(), Some(1));
}

#[test]
fn bytes_pushed_one_at_a_time_decode_alike() {
    let bytes = hex("80049538000000000000007d948c0174945d94287d94288c0866696c656e616d65948c04612e7079948c046c696e65944b038c046e616d65948c01669475680365732e");
    let mut d = Decoder::new();
    for b in &bytes {
        d.push(std::slice::from_ref(b), &mut KeepAll).unwrap();
    }
    let v = d.finish().unwrap();
    assert_eq!(v.as_dict().unwrap().items.borrow().len(), 1);
}

#[test]
fn a_truncated_pickle_says_so() {
    let bytes = hex("80049538000000000000007d948c0174945d94287d94288c0866696c656e616d65948c04612e7079948c046c696e65944b038c046e616d65948c01669475680365732e");
    let mut d = Decoder::new();
    d.push(&bytes[..bytes.len() - 3], &mut KeepAll).unwrap();
    let e = d.finish().unwrap_err();
    assert!(e.message.contains("truncated"), "{e}");
    assert!(!d.stack().is_empty());
}

/// 100,000 nested lists: refused at the depth limit, no stack overflow.
#[test]
fn lists_nested_past_the_limit_are_refused() {
    let mut bytes = vec![0x80, 4];
    bytes.extend(std::iter::repeat_n(b']', 100_000));
    bytes.extend(std::iter::repeat_n(b'a', 99_999));
    bytes.push(b'.');
    let e = decode(&bytes, |_, _| ()).unwrap_err();
    assert!(e.message.contains("nest deeper"), "{e}");
}

/// A list appended to itself through the memo: decoded, and freed by
/// `clear` (no cycle outlives the decoder).
#[test]
fn a_list_that_holds_itself_is_decoded_and_cleared() {
    // PROTO 4, EMPTY_LIST, MEMOIZE, BINGET 0, APPEND, STOP
    let bytes = [0x80, 4, b']', 0x94, b'h', 0, b'a', b'.'];
    let mut d = Decoder::new();
    d.push(&bytes, &mut KeepAll).unwrap();
    let v = d.finish().unwrap();
    let l = v.as_list().unwrap().clone();
    assert_eq!(l.len(), 1);
    d.clear();
    assert_eq!(l.len(), 0);
}

/// Cycles the memo does not hold at the end (the fuzzer found both
/// leaking): a list appended to itself through DUP, and one whose memo slot
/// was written over. Dropped, the decoder frees them.
#[test]
fn cycles_outside_the_memo_are_freed_with_the_decoder() {
    // PROTO 4, EMPTY_LIST, DUP, APPEND, STOP
    let dup = [0x80, 4, b']', b'2', b'a', b'.'];
    // PROTO 4, EMPTY_LIST, BINPUT 0, BINGET 0, APPEND, NONE, BINPUT 0, POP, STOP
    let overwritten = [
        0x80, 4, b']', b'q', 0, b'h', 0, b'a', b'N', b'q', 0, b'0', b'.',
    ];
    for bytes in [&dup[..], &overwritten[..]] {
        let mut d = Decoder::new();
        d.push(bytes, &mut KeepAll).unwrap();
        let weak = match d.finish().unwrap() {
            Value::List(l) => {
                assert_eq!(l.len(), 1);
                std::rc::Rc::downgrade(&l)
            }
            v => panic!("{v:?}"),
        };
        assert!(weak.upgrade().is_some(), "the cycle keeps it alive");
        drop(d);
        assert!(weak.upgrade().is_none(), "freed with the decoder");
    }
}

#[test]
fn a_protocol_outside_two_to_five_is_named() {
    let e = decode(&[0x80, 9, b'N', b'.'], |_, _| ()).unwrap_err();
    assert!(e.message.contains("protocol 9"), "{e}");
}
