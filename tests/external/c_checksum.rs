//! `[framing] checksum` in C: for every CRC a schema can name, over the record and over the
//! payload alone, in a little- and a big-endian field, a C program built against the generated
//! header writes records (`checked_write_<record>` fills the sync and the CRC), and the bytes
//! must equal the ones Python builds with `struct` and its own CRCs (`binascii.crc32`,
//! `binascii.crc_hqx` and a bitwise CRC-32C). The same program reads them back with
//! `checked_next_record`, which must refuse a flipped byte with `CHECKED_ERR_CHECKSUM` and find
//! the next record with `checked_resync`; and `logspec dump --schema` reads the C file whole.
//! gcc and python3 are external tools: without them the trial is ignored (under `CI=true`, failed).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::tools::{self, Need};

use common::checked::SCHEMA;

/// The test schema with another algorithm, span, CRC width and byte order of the CRC field.
fn variant(algorithm: &str, over: &str, big: bool) -> String {
    let text = std::fs::read_to_string(SCHEMA).unwrap();
    let width = if algorithm.starts_with("crc-16") { "u16" } else { "u32" };
    let endian = if big { ", endian = \"big\"" } else { "" };
    text.replace(
        r#"checksum = { field = "crc", algorithm = "crc-32c", over = "record" }"#,
        &format!(r#"checksum = {{ field = "crc", algorithm = "{algorithm}", over = "{over}" }}"#),
    )
    .replace(r#"{ name = "crc", type = "u32","#, &format!(r#"{{ name = "crc", type = "{width}"{endian},"#))
}

const C_PROGRAM: &str = r#"
#include <stdio.h>
#include "checked.h"

int main(int argc, char **argv)
{
    uint8_t buf[256];
    size_t n = 0, pos, k;
    checked_rec_sample_t s;
    checked_rec_note_t note;
    checked_framed_record_t rec;
    FILE *f;
    int e;
    (void)argc;
    n += checked_write_file_header(buf, sizeof buf);
    s.value = 1.5f;
    s.count = 7u;
    n += checked_write_rec_sample(buf + n, sizeof buf - n, 100u, &s);
    note.text = "hi";
    note.text_len = 2u;
    n += checked_write_rec_note(buf + n, sizeof buf - n, 250u, &note);
    s.count = 8u;
    n += checked_write_rec_sample(buf + n, sizeof buf - n, 300u, &s);
    f = fopen(argv[1], "wb");
    if (!f || fwrite(buf, 1u, n, f) != n || fclose(f) != 0) return 2;
    /* The check value's register, before the final XOR. */
    printf("check %lx\n", (unsigned long)checked_crc_update(CHECKED_CRC_INIT, (const uint8_t *)"123456789", 9u));
    /* Read back: three records. */
    pos = CHECKED_FILE_HEADER_SIZE;
    k = 0;
    while ((e = checked_next_record(buf, n, &pos, &rec)) == 1) k++;
    printf("read %d %lu\n", e, (unsigned long)k);
    /* A flipped payload byte in the second record: refused there, and the third found after it. */
    pos = CHECKED_FILE_HEADER_SIZE;
    (void)checked_next_record(buf, n, &pos, &rec);
    buf[pos + CHECKED_RECORD_HEADER_SIZE + 1u] ^= 0x40u;
    k = pos;
    e = checked_next_record(buf, n, &pos, &rec);
    printf("flipped %d %lu %lu\n", e, (unsigned long)(pos - k), (unsigned long)checked_resync(buf, n, pos));
    return 0;
}
"#;

/// The bytes Python builds for the same records.
const PYTHON: &str = r#"
import binascii, struct, sys
alg, over, big = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF
crc, width = {
    "crc-16/ccitt-false": (lambda b: binascii.crc_hqx(b, 0xFFFF), "H"),
    "crc-16/xmodem": (lambda b: binascii.crc_hqx(b, 0), "H"),
    "crc-32": (binascii.crc32, "I"),
    "crc-32c": (crc32c, "I"),
}[alg]
def record(kind, t, payload):
    head = struct.pack("<BBBHI", 0xA3, 0x95, kind, len(payload), t)
    c = crc(head + payload if over == "record" else payload)
    return head + struct.pack((">" if big else "<") + width, c) + payload
out = b"CHKD" + struct.pack("<H2x", 1)
out += record(1, 100, struct.pack("<fH", 1.5, 7))
out += record(2, 250, b"\x02hi")
out += record(1, 300, struct.pack("<fH", 1.5, 8))
sys.stdout.buffer.write(out)
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_checksum").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn c_writers_fill_every_crc_as_python_computes_it() {
    let checks = [
        ("crc-16/ccitt-false", 0x29B1u32, 0u32),
        ("crc-16/xmodem", 0x31C3, 0),
        ("crc-32", 0xCBF4_3926, 0xFFFF_FFFF),
        ("crc-32c", 0xE306_9283, 0xFFFF_FFFF),
    ];
    for (alg, check, xorout) in checks {
        for over in ["record", "payload"] {
            for big in [false, true] {
                let what = format!("{alg} over {over}{}", if big { ", big-endian" } else { "" });
                let text = variant(alg, over, big);
                let dir = scratch(&format!("{}-{over}-{big}", alg.replace('/', "-")));
                let schema_path = dir.join("checked.toml");
                std::fs::write(&schema_path, &text).unwrap();
                let schema = logspec::codegen::compile_str("checked.toml", &text)
                    .unwrap_or_else(|e| panic!("{what}: {}", e.render()));
                std::fs::write(dir.join("checked.h"), logspec::codegen::backend::c::header(&schema)).unwrap();
                let src = dir.join("main.c");
                std::fs::write(&src, C_PROGRAM).unwrap();
                let exe = dir.join("main");
                let out = Command::new("gcc")
                    .args([
                        "-std=c99",
                        "-Wall",
                        "-Wextra",
                        "-Wpedantic",
                        "-Wconversion",
                        "-Wsign-conversion",
                        "-Werror",
                    ])
                    .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-o"])
                    .arg(&exe)
                    .arg(&src)
                    .output()
                    .expect("run gcc");
                assert!(out.status.success(), "{what}: gcc:\n{}", String::from_utf8_lossy(&out.stderr));
                let file = dir.join("c.chk");
                let out = Command::new(&exe).arg(&file).output().unwrap();
                assert!(out.status.success(), "{what}: the C program failed");
                let stdout = String::from_utf8(out.stdout).unwrap();
                let c_bytes = std::fs::read(&file).unwrap();

                let py = Command::new("python3")
                    .args(["-c", PYTHON, alg, over, if big { "1" } else { "0" }])
                    .output()
                    .expect("python3");
                assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
                assert_eq!(c_bytes, py.stdout, "{what}: the C writers' bytes against Python's");

                let mut lines = stdout.lines();
                let reg = u32::from_str_radix(lines.next().unwrap().trim_start_matches("check "), 16).unwrap();
                assert_eq!(reg ^ xorout, check, "{what}: check value");
                assert_eq!(lines.next(), Some("read 0 3"), "{what}: the C reader takes every record");
                // The second record starts right after the first; the third after the second.
                let h = if alg.starts_with("crc-16") { 11 } else { 13 };
                let (second, third) = (8 + h + 6, 8 + h + 6 + h + 3);
                assert_eq!(
                    lines.next(),
                    Some(format!("flipped -9 0 {third}").as_str()),
                    "{what}: a flipped byte at {second} is refused and the next record found"
                );

                let out = common::logspec(&["dump", "--schema", schema_path.to_str().unwrap(), file.to_str().unwrap()]);
                assert!(out.status.success(), "{what}: dump: {}", String::from_utf8_lossy(&out.stderr));
                assert_eq!(common::jsonl(&String::from_utf8_lossy(&out.stdout)).len(), 3, "{what}: dump");
            }
        }
    }
}

/// `[framing] trailer` in C, through the bundled MCAP header: `mcap_write_trailer` ends the
/// file with the end magic, `mcap_next_record` stops at it (0), and refuses a cut one
/// (`MCAP_ERR_SHORT`), a missing one (`MCAP_ERR_SHORT`) and a wrong one (`MCAP_ERR_CONST`);
/// `logspec dump --schema schemas/mcap.toml` reads the C file whole.
const C_MCAP: &str = r#"
#include <stdio.h>
#include "mcap/record_types.h"

static int last(const uint8_t *buf, size_t n)
{
    size_t pos = MCAP_FILE_HEADER_SIZE;
    mcap_framed_record_t rec;
    int e;
    while ((e = mcap_next_record(buf, n, &pos, &rec)) == 1) {
    }
    return e;
}

int main(int argc, char **argv)
{
    uint8_t buf[64];
    size_t n = 0;
    mcap_data_end_t end;
    FILE *f;
    (void)argc;
    end.data_section_crc = 0u;
    n += mcap_write_file_header(buf, sizeof buf);
    n += mcap_write_data_end(buf + n, sizeof buf - n, &end);
    n += mcap_write_trailer(buf + n, sizeof buf - n);
    f = fopen(argv[1], "wb");
    if (!f || fwrite(buf, 1u, n, f) != n || fclose(f) != 0) return 2;
    printf("%lu %d", (unsigned long)n, last(buf, n));
    printf(" %d", last(buf, n - 3u) == MCAP_ERR_SHORT);
    printf(" %d", last(buf, n - 8u) == MCAP_ERR_SHORT);
    buf[n - 1u] = 0u;
    printf(" %d\n", last(buf, n) == MCAP_ERR_CONST);
    return 0;
}
"#;

fn c_writes_and_stops_at_the_mcap_end_magic() {
    let dir = scratch("mcap-trailer");
    let src = dir.join("main.c");
    std::fs::write(&src, C_MCAP).unwrap();
    let exe = dir.join("main");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wsign-conversion", "-Werror"])
        .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run gcc");
    assert!(out.status.success(), "gcc:\n{}", String::from_utf8_lossy(&out.stderr));
    let file = dir.join("c.mcap");
    let out = Command::new(&exe).arg(&file).output().unwrap();
    assert!(out.status.success(), "the C program failed");
    // 8 bytes of magic, a 13-byte DataEnd record, 8 bytes of magic; a clean end, then the three refusals.
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "29 0 1 1 1");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(&bytes[21..], b"\x89MCAP0\r\n");
    let out = common::logspec(&["dump", "--schema", "schemas/mcap.toml", file.to_str().unwrap()]);
    assert!(out.status.success(), "dump: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(common::jsonl(&String::from_utf8_lossy(&out.stdout)).len(), 1);
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        tools::trial(
            "c_writers_fill_every_crc_as_python_computes_it",
            &[Need::Program("gcc"), Need::Program("python3")],
            c_writers_fill_every_crc_as_python_computes_it,
        ),
        tools::trial(
            "c_writes_and_stops_at_the_mcap_end_magic",
            &[Need::Program("gcc")],
            c_writes_and_stops_at_the_mcap_end_magic,
        ),
    ]
}
