//! xprof's reading of an op's full name (`tsl/profiler/utils/tf_op_utils.cc`
//! `ParseTfOpFullname`): `name:type` for TensorFlow ops, a JAX name stack
//! (`jit(f)/dot_general`, type derived from its last component) for JAX,
//! memcpys by prefix; anything else is of unknown category.

/// What a full op name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TfOp {
    pub category: OpCategory,
    pub name: String,
    pub op_type: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpCategory {
    Unknown,
    TensorFlow,
    Jax,
    TfData,
    Memcpy,
}

/// `ParseTfOpFullname(full)` with no category or type given.
pub fn parse(full: &str) -> TfOp {
    let unknown = TfOp {
        category: OpCategory::Unknown,
        name: full.to_string(),
        op_type: String::new(),
    };
    let Some((name, ty)) = full.split_once(':') else {
        for (prefix, ty) in [
            ("MEMCPYHToD", "MemcpyHToD"),
            ("MEMCPYDToH", "MemcpyDToH"),
            ("MEMCPYDToD", "MemcpyDToD"),
            ("MEMCPYHToH", "MemcpyHToH"),
        ] {
            // Bytes, not chars: a name may hold any UTF-8 after the prefix.
            let head = full.as_bytes().get(..prefix.len());
            if head.is_some_and(|h| h.eq_ignore_ascii_case(prefix.as_bytes())) {
                return TfOp {
                    category: OpCategory::Memcpy,
                    name: full.to_string(),
                    op_type: ty.to_string(),
                };
            }
        }
        return unknown;
    };
    if name == "Iterator" {
        return TfOp {
            category: OpCategory::TfData,
            name: full.to_string(),
            op_type: "Dataset".to_string(),
        };
    }
    if is_tf_op_name(name) && is_tf_op_type(ty) {
        return TfOp {
            category: OpCategory::TensorFlow,
            name: name.to_string(),
            op_type: ty.to_string(),
        };
    }
    let op_type = if ty.is_empty() {
        derive_op_type(name)
    } else {
        ty
    };
    if is_jax_op_type(op_type) {
        let cut = op_type.find('[').unwrap_or(op_type.len());
        return TfOp {
            category: OpCategory::Jax,
            name: name.to_string(),
            op_type: op_type[..cut].to_string(),
        };
    }
    if ty.is_empty() {
        return TfOp {
            category: OpCategory::TensorFlow,
            name: name.to_string(),
            op_type: op_type.to_string(),
        };
    }
    unknown
}

/// The op name without its name scopes and numeric suffix
/// (`model/layer/MatMul_1` → `MatMul`).
fn derive_op_type(full: &str) -> &str {
    let op = full.rsplit('/').next().unwrap_or(full);
    match op.rsplit_once('_') {
        Some((head, suffix)) if is_integer(suffix) => head,
        _ => op,
    }
}

/// `absl::SimpleAtoi` into an int64: optional whitespace and sign, digits.
fn is_integer(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()) && t.parse::<i64>().is_ok()
}

/// `[A-Za-z0-9.][A-Za-z0-9_.\/>-]*`
fn is_tf_op_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphanumeric() || c == b'.')
        && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'>' | b'-'))
}

/// `[A-Z_][a-zA-Z0-9_]*`
fn is_tf_op_type(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_uppercase() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `[a-z_][a-z0-9_]*(\[.*\])?`
fn is_jax_op_type(s: &str) -> bool {
    let (head, bracket) = match s.find('[') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    let mut b = head.bytes();
    let head_ok = matches!(b.next(), Some(c) if c.is_ascii_lowercase() || c == b'_')
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    head_ok && bracket.is_none_or(|r| r.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_a_multibyte_char_inside_the_memcpy_prefix_is_no_panic() {
        // Found by the xplane fuzz target: a lossily decoded name.
        assert_eq!(parse("MEMCPYH\u{FFFD}oD").category, OpCategory::Unknown);
        assert_eq!(parse("memcpyhtod_x").category, OpCategory::Memcpy);
    }

    #[test]
    fn names_parse_as_xprof_parses_them() {
        let p = parse("jit(forward_3d_conv)/conv_general_dilated:");
        assert_eq!(p.category, OpCategory::Jax);
        assert_eq!(p.name, "jit(forward_3d_conv)/conv_general_dilated");
        assert_eq!(p.op_type, "conv_general_dilated");
        let p = parse("x:");
        assert_eq!((p.name.as_str(), p.op_type.as_str()), ("x", "x"));
        let p = parse("XlaModule:");
        assert_eq!(p.category, OpCategory::TensorFlow);
        assert_eq!(p.op_type, "XlaModule");
        let p = parse("model/dense/MatMul:MatMul");
        assert_eq!(p.category, OpCategory::TensorFlow);
        assert_eq!(
            parse("jit(f)/transpose[permutation=(1, 0)]:").op_type,
            "transpose"
        );
        assert_eq!(parse("hipModuleLaunchKernel").category, OpCategory::Unknown);
        assert_eq!(parse("$a.py:12 f").category, OpCategory::Unknown);
        assert_eq!(parse("model/MatMul_1:").op_type, "MatMul");
        assert_eq!(parse("MemcpyHToD").category, OpCategory::Memcpy);
    }
}
