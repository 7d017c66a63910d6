//! WPILib struct value decoding: the dynamic decoder (a struct compiled from its schema text at
//! run time, its IR walked into a value tree, `TypeRegistry::decode`) against the static Rust
//! type `Builder::compile_struct_schemas` generates from the same schema (decode only, no tree),
//! and `memcpy` of the same bytes, all measured in the same run.
//!
//! Values: the `Custom` struct of `tests/data/wpilog/gen_wpilib_structs.wpilog` (72 bytes: every
//! integer width, an enum, bit-fields, `char[8]`, nested and array structs) and `Pose2d`
//! (24 bytes, the most common struct in robot logs), 100,000 of each.
//!
//! ```text
//! cargo bench --bench wpistruct
//! ```

mod common;

use std::hint::black_box;

use common::{mbps, memcpy_time, time};
use logspec::formats::wpistruct::TypeRegistry;
use logspec::runtime::Decode;

#[allow(dead_code, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/wpistruct_test.rs"));
}

const N: usize = 100_000;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// The first `Custom` value of the test file (taken from WPILib's own reader's dump of it).
fn custom_value() -> Vec<u8> {
    let dump = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/wpilog/gen_wpilib_structs.expected.jsonl"
    ))
    .unwrap();
    let line =
        dump.lines().find(|l| l.contains("\"rec\":\"data\"") && l.contains("\"type\":\"struct:Custom\"")).unwrap();
    let v = line.split("\"value\":\"").nth(1).unwrap().split('"').next().unwrap();
    hex(v)
}

fn main() {
    let mut reg = TypeRegistry::new();
    reg.offer("/.schema/struct:Custom", "structschema", b"enum{idle=0,run=1,fault=7}uint8 state;int8 a:3;int8 b:4;bool flag:1;uint16 c:5;uint16 d:11;bool e:1;bool f:1;int32 i32;uint32 u32;int64 i64;uint64 u64;float f32;double f64;Inner inner;Inner pair[2];bool ok");
    reg.offer("/.schema/struct:Inner", "structschema", b"int16 id;char tag[8]");
    reg.offer("/.schema/struct:Translation2d", "structschema", b"double x;double y");
    reg.offer("/.schema/struct:Rotation2d", "structschema", b"double value");
    reg.offer("/.schema/struct:Pose2d", "structschema", b"Translation2d translation;Rotation2d rotation");
    let custom = custom_value();
    assert_eq!(custom.len(), 72);
    let custom_all: Vec<u8> = custom.iter().copied().cycle().take(72 * N).collect();
    let pose: Vec<u8> =
        (0..N).flat_map(|i| [i as f64, -(i as f64), 0.5].into_iter().flat_map(f64::to_le_bytes)).collect();

    let runs = 11;
    let base_custom = memcpy_time(&custom_all, runs);
    let base_pose = memcpy_time(&pose, runs);
    #[allow(clippy::suspicious_map)] // the map is the work timed; count drives it
    let dynamic_custom =
        time(runs, || custom_all.chunks_exact(72).map(|c| reg.decode("struct:Custom", c).unwrap()).count());
    #[allow(clippy::suspicious_map)] // the map is the work timed; count drives it
    let static_custom = time(runs, || {
        custom_all.chunks_exact(72).map(|c| black_box(generated::Custom::decode_exact(c).unwrap()).ok).count()
    });
    #[allow(clippy::suspicious_map)] // the map is the work timed; count drives it
    let dynamic_pose = time(runs, || pose.chunks_exact(24).map(|c| reg.decode("struct:Pose2d", c).unwrap()).count());
    let array_pose = time(runs, || reg.decode("struct:Pose2d[]", &pose).unwrap());

    let line = |what: &str, bytes: usize, d: std::time::Duration, base: std::time::Duration| {
        println!(
            "{what:<52} {:>9.1} MB/s {:>7.2} M values/s  {:.4}x memcpy",
            mbps(bytes, d),
            (bytes / if what.contains("Custom") { 72 } else { 24 }) as f64 / 1e6 / d.as_secs_f64(),
            base.as_secs_f64() / d.as_secs_f64()
        )
    };
    println!("{N} values each; medians of {runs} runs");
    line("memcpy (Custom bytes)", custom_all.len(), base_custom, base_custom);
    line("Custom: static generated type (decode_exact)", custom_all.len(), static_custom, base_custom);
    line("Custom: dynamic, TypeRegistry::decode -> Value", custom_all.len(), dynamic_custom, base_custom);
    line("Pose2d: dynamic, one value at a time", pose.len(), dynamic_pose, base_pose);
    line("Pose2d: dynamic, struct:Pose2d[] of 100,000", pose.len(), array_pose, base_pose);
    println!("dynamic / static time (Custom): {:.1}", dynamic_custom.as_secs_f64() / static_custom.as_secs_f64());
}
