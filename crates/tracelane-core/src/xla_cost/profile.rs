//! The FLOPs an element XLA's GPU cost analysis charges elementwise
//! operations when it is given no device: the default profile of
//! `HloOpProfiles` (`sm_86`, from `xla/service/gpu/model/
//! hlo_op_profiles_data.h`, the clock cycles `hlo_op_profiler_run`
//! measured per opcode and element type — the table built into xprof
//! 2.24.2's converter). Any other (opcode, type) costs 3.

/// `kDefaultFlopsPerElement`.
const DEFAULT: i64 = 3;

/// (opcode, `xla.PrimitiveType` number, FLOPs an element).
const SM_86: &[(&str, i32, i64)] = &[
    ("divide", 2, 370),                  // S8
    ("power", 2, 392),                   // S8
    ("divide", 3, 367),                  // S16
    ("power", 3, 396),                   // S16
    ("divide", 4, 306),                  // S32
    ("divide", 5, 918),                  // S64
    ("power", 5, 601),                   // S64
    ("divide", 6, 306),                  // U8
    ("power", 6, 388),                   // U8
    ("divide", 7, 302),                  // U16
    ("power", 7, 399),                   // U16
    ("divide", 8, 115),                  // U32
    ("divide", 9, 838),                  // U64
    ("power", 9, 604),                   // U64
    ("cbrt", 10, 925),                   // F16
    ("cosine", 10, 691),                 // F16
    ("exponential", 10, 108),            // F16
    ("exponential-minus-one", 10, 396),  // F16
    ("log", 10, 266),                    // F16
    ("log-plus-one", 10, 284),           // F16
    ("logistic", 10, 226),               // F16
    ("rsqrt", 10, 97),                   // F16
    ("sqrt", 10, 97),                    // F16
    ("tanh", 10, 212),                   // F16
    ("atan2", 10, 482),                  // F16
    ("power", 10, 975),                  // F16
    ("cbrt", 11, 867),                   // F32
    ("cosine", 11, 662),                 // F32
    ("exponential", 11, 86),             // F32
    ("exponential-minus-one", 11, 381),  // F32
    ("log", 11, 244),                    // F32
    ("log-plus-one", 11, 262),           // F32
    ("logistic", 11, 176),               // F32
    ("rsqrt", 11, 75),                   // F32
    ("sine", 11, 662),                   // F32
    ("sqrt", 11, 75),                    // F32
    ("tanh", 11, 190),                   // F32
    ("atan2", 11, 486),                  // F32
    ("power", 11, 925),                  // F32
    ("cbrt", 12, 6339),                  // F64
    ("cosine", 12, 1717),                // F64
    ("exponential", 12, 1652),           // F64
    ("exponential-minus-one", 12, 1900), // F64
    ("log", 12, 608),                    // F64
    ("log-plus-one", 12, 2073),          // F64
    ("logistic", 12, 2412),              // F64
    ("rsqrt", 12, 698),                  // F64
    ("sine", 12, 1789),                  // F64
    ("sqrt", 12, 986),                   // F64
    ("tanh", 12, 1609),                  // F64
    ("add", 12, 97),                     // F64
    ("atan2", 12, 3747),                 // F64
    ("divide", 12, 2016),                // F64
    ("multiply", 12, 97),                // F64
    ("power", 12, 5511),                 // F64
    ("subtract", 12, 97),                // F64
    ("exponential", 15, 1360),           // C64
    ("exponential-minus-one", 15, 1400), // C64
    ("log", 15, 950),                    // C64
    ("log-plus-one", 15, 842),           // C64
    ("rsqrt", 15, 2383),                 // C64
    ("sqrt", 15, 3193),                  // C64
    ("atan2", 15, 5353),                 // C64
    ("divide", 15, 687),                 // C64
    ("power", 15, 3351),                 // C64
    ("cosine", 18, 6613),                // C128
    ("exponential", 18, 4028),           // C128
    ("exponential-minus-one", 18, 4161), // C128
    ("log", 18, 7599),                   // C128
    ("log-plus-one", 18, 6962),          // C128
    ("rsqrt", 18, 11318),                // C128
    ("sine", 18, 5878),                  // C128
    ("sqrt", 18, 15606),                 // C128
    ("tanh", 18, 9939),                  // C128
    ("add", 18, 97),                     // C128
    ("atan2", 18, 39027),                // C128
    ("divide", 18, 7941),                // C128
    ("multiply", 18, 270),               // C128
    ("power", 18, 18205),                // C128
    ("subtract", 18, 97),                // C128
];

/// `GetFlopsPerElementwiseOpElement` with the default profile.
pub(super) fn flops_per_element(opcode: &str, element_type: i32) -> i64 {
    SM_86
        .iter()
        .find(|&&(op, t, _)| op == opcode && t == element_type)
        .map_or(DEFAULT, |&(_, _, c)| c)
}
