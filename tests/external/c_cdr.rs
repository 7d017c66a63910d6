//! CDR's layout rules in C (`codegen/tests/schemas/cdr.toml`: `align = "natural"`,
//! `string_nul = true`): a C program built against the generated header encodes a record, and
//! the bytes must equal the payload mcap-ros2-support's CDR encoder writes for the same message
//! of an equivalent ROS 2 definition (after its 4-byte encapsulation header); the program then
//! decodes that payload and prints what it read, which must be the values encoded. Built with
//! gcc under ASan and UBSan on this host, and for big-endian PowerPC run under qemu-user.
//! python3 with mcap-ros2-support, and the compilers, are external tools: without them the
//! trial is ignored (under `CI=true`, failed).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tools::{self, Need};

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/codegen/tests/schemas/cdr.toml");

const C_PROGRAM: &str = r#"
#include <stdio.h>
#include "cdr.h"

static void hex(const char *what, const uint8_t *b, size_t n)
{
    size_t i;
    printf("%s ", what);
    for (i = 0; i < n; i++) printf("%02x", b[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    uint8_t buf[256], ref[256];
    size_t n = 0, used = 0, i, rn;
    cdr_item_t items[1];
    float samples[1] = {0.5f};
    cdr_sample_t s;
    cdr_sample_view_t v;
    cdr_text_t t;
    cdr_item_view_t it = {0u, 0.0};
    FILE *f;
    int e;
    (void)argc;
    items[0].tag = 3u;
    items[0].value = -1.0;
    s.flag = 1u;
    s.value = 2.5;
    s.label = "hi";
    s.label_len = 2u;
    s.level = CDR_LEVEL_WARN;
    s.items = items;
    s.items_count = 1u;
    s.header.stamp.sec = -2;
    s.header.stamp.nanosec = 7u;
    s.header.frame_id = "map";
    s.header.frame_id_len = 3u;
    s.fixed[0] = 1;
    s.fixed[1] = -2;
    s.fixed[2] = 3;
    s.tail = 9u;
    s.samples = samples;
    s.samples_count = 1u;
    s.last = 0x0102030405060708ULL;
    e = cdr_sample_encode(buf, sizeof buf, &s, &n);
    printf("encode %d %lu\n", e, (unsigned long)n);
    hex("sample", buf, n);
    /* Every shorter buffer is refused. */
    for (i = 0; i < n; i++) {
        if (cdr_sample_encode(buf, i, &s, NULL) != CDR_ERR_SPACE) printf("encoded into %lu bytes\n", (unsigned long)i);
    }
    t.text = "hello";
    t.text_len = 5u;
    e = cdr_text_encode(buf, sizeof buf, &t, &n);
    hex("text", buf, n);
    t.text_len = 0u;
    e = cdr_text_encode(buf, sizeof buf, &t, &n);
    hex("empty", buf, n);
    /* The reference payload, decoded. */
    f = fopen(argv[1], "rb");
    if (!f) return 2;
    rn = fread(ref, 1u, sizeof ref, f);
    fclose(f);
    e = cdr_sample_decode(&v, ref, rn, &used);
    printf("decode %d %lu\n", e, (unsigned long)used);
    printf("flag %u value %g label %.*s level %u\n", (unsigned)v.flag, v.value, (int)v.label_len, v.label, (unsigned)v.level);
    printf("items %lu size %lu\n", (unsigned long)v.items_count, (unsigned long)v.items_size);
    /* An element of a sequence of structs: decoded at its place in the payload. */
    e = cdr_item_decode_at(&it, v.items, v.items_size, NULL, (size_t)(v.items - ref));
    printf("item %d %u %g\n", e, (unsigned)it.tag, it.value);
    printf("stamp %ld %lu frame %.*s\n", (long)v.header.stamp.sec, (unsigned long)v.header.stamp.nanosec,
           (int)v.header.frame_id_len, v.header.frame_id);
    printf("fixed %d %d %d tail %u\n", v.fixed[0], v.fixed[1], v.fixed[2], (unsigned)v.tail);
    printf("samples %lu %g last %llx\n", (unsigned long)v.samples_count, (double)cdr_sample_samples_at(&v, 0u),
           (unsigned long long)v.last);
    /* Cut anywhere, the payload is refused. */
    for (i = 0; i < used; i++) {
        if (cdr_sample_decode(&v, ref, i, NULL) == CDR_OK) printf("decoded %lu bytes\n", (unsigned long)i);
    }
    return 0;
}
"#;

/// mcap-ros2-support's CDR encoder on the same message of a ROS 2 definition equivalent to
/// the test schema's `SAMPLE`: the whole serialized message, encapsulation header included;
/// big-endian (`CDR_BE`) when the environment has `CDR_BE=1`.
pub const PYTHON: &str = r#"
import os, sys
from types import SimpleNamespace as N
import mcap_ros2._dynamic
from mcap_ros2._cdr import CdrWriter, EncapsulationKind
from mcap_ros2._dynamic import serialize_dynamic
if os.environ.get("CDR_BE") == "1":
    mcap_ros2._dynamic.CdrWriter = lambda out: CdrWriter(out, EncapsulationKind.CDR_BE)
DEF = """uint8 flag
float64 value
string label
uint16 level
cdr/Item[] items
cdr/Header header
int16[3] fixed
uint8 tail
float32[] samples
uint64 last
================================================================================
MSG: cdr/Item
uint8 tag
float64 value
================================================================================
MSG: cdr/Header
cdr/Stamp stamp
string frame_id
================================================================================
MSG: cdr/Stamp
int32 sec
uint32 nanosec
"""
enc = serialize_dynamic("cdr/Sample", DEF)["cdr/Sample"]
msg = N(flag=1, value=2.5, label="hi", level=1, items=[N(tag=3, value=-1.0)],
        header=N(stamp=N(sec=-2, nanosec=7), frame_id="map"), fixed=[1, -2, 3], tail=9, samples=[0.5],
        last=0x0102030405060708)
sys.stdout.buffer.write(enc(msg))
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_cdr").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Builds the program with `cc` and `flags`, runs it (under `runner`, if any) on the reference
/// payload, and checks what it prints; with `big`, for the schema in big-endian byte order
/// against the reference's big-endian CDR.
fn run(name: &str, cc: &str, flags: &[&str], runner: Option<&str>, big: bool) {
    let dir = scratch(name);
    let mut text = std::fs::read_to_string(SCHEMA).unwrap();
    if big {
        text = text.replace("endian = \"little\"", "endian = \"big\"");
    }
    let schema = logspec::codegen::compile_str("cdr.toml", &text).unwrap_or_else(|e| panic!("{}", e.render()));
    std::fs::write(dir.join("cdr.h"), logspec::codegen::backend::c::header(&schema)).unwrap();
    std::fs::write(dir.join("main.c"), C_PROGRAM).unwrap();
    let exe = dir.join("main");
    let out =
        Command::new(cc).args(flags).arg("-o").arg(&exe).arg(dir.join("main.c")).output().expect("run the compiler");
    assert!(out.status.success(), "{cc}:\n{}", String::from_utf8_lossy(&out.stderr));

    let py = Command::new("python3")
        .args(["-c", PYTHON])
        .env("CDR_BE", if big { "1" } else { "0" })
        .output()
        .expect("python3");
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let whole = py.stdout;
    assert_eq!(whole[..4], [0, u8::from(!big), 0, 0], "CDR encapsulation");
    let payload = &whole[4..];
    let reference = dir.join("reference.cdr");
    std::fs::write(&reference, payload).unwrap();

    let out = match runner {
        Some(r) => Command::new(r).arg(&exe).arg(&reference).output(),
        None => Command::new(&exe).arg(&reference).output(),
    }
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{name}: the C program failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    // The encoder writes the reference's payload, without the end padding a payload may carry.
    let n = payload.len() - (payload.len() - 88).min(3);
    assert_eq!(lines[0], format!("encode 0 {n}"), "{name}");
    assert_eq!(lines[1], format!("sample {}", hex(&payload[..n])), "{name}: the C encoder against mcap-ros2-support");
    assert!(payload[n..].iter().all(|b| *b == 0));
    let expect = [
        if big { "text 0000000668656c6c6f00" } else { "text 0600000068656c6c6f00" }.to_string(),
        if big { "empty 0000000100" } else { "empty 0100000000" }.to_string(),
        format!("decode 0 {n}"),
        "flag 1 value 2.5 label hi level 1".to_string(),
        "items 1 size 16".to_string(),
        "item 0 3 -1".to_string(),
        "stamp -2 7 frame map".to_string(),
        "fixed 1 -2 3 tail 9".to_string(),
        "samples 1 0.5 last 102030405060708".to_string(),
    ];
    assert_eq!(lines[2..], expect[..], "{name}: what the C decoder read of the reference payload");
}

fn x86_64_gcc_sanitizers() {
    run(
        "gcc",
        "gcc",
        &[
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Wconversion",
            "-Wsign-conversion",
            "-Werror",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
        ],
        None,
        false,
    );
}

fn big_endian_schema_x86_64_gcc() {
    run("gcc-be", "gcc", &["-std=c99", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined"], None, true);
}

fn big_endian_powerpc_under_qemu() {
    for big in [false, true] {
        let name = if big { "ppc-be" } else { "ppc" };
        run(name, "powerpc-linux-gnu-gcc", &["-std=c11", "-O2", "-static", "-Wall", "-Werror"], Some("qemu-ppc"), big);
    }
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let py = [Need::Program("python3"), Need::PyModule("mcap_ros2")];
    let gcc = [&py[..], &[Need::Program("gcc")]].concat();
    let ppc = [&py[..], &[Need::Program("powerpc-linux-gnu-gcc"), Need::Program("qemu-ppc")]].concat();
    vec![
        tools::trial("c_cdr_x86_64_gcc_sanitizers_against_mcap_ros2_support", &gcc, x86_64_gcc_sanitizers),
        tools::trial("c_cdr_big_endian_schema_against_mcap_ros2_support", &gcc, big_endian_schema_x86_64_gcc),
        tools::trial("c_cdr_big_endian_powerpc_qemu_against_mcap_ros2_support", &ppc, big_endian_powerpc_under_qemu),
    ]
}
