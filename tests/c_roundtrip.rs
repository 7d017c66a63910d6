//! C <-> Rust round trip through the checked-in `include/usvlog/record_types.h`: a host C program
//! compiled against the header writes a USVLOG file that the Rust reader decodes to the expected
//! values, and reads a file written by the Rust writer, printing every field, which must equal
//! what Rust wrote. The C program's field accesses are generated from the IR here, so every record
//! and field of the schema is covered, and the header's structs do all the C-side layout work.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use logspec::codegen::ir::{Schema, Ty, TypeDef};
use logspec::formats::usvlog::*;
use logspec::runtime::{Event, SliceReader, Visit, Visitor, Writer};

fn schema() -> Schema {
    logspec::codegen::compile_file(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/usvlog.toml")).unwrap()
}

/// The C type class of a field: float, or an integer (enums and flags are integers in C).
fn is_float(schema: &Schema, ty: &Ty) -> bool {
    match ty {
        Ty::Prim(p) => p.is_float(),
        Ty::Named(id) => !matches!(schema.ty(*id), TypeDef::Enum(_) | TypeDef::Flags(_)),
        Ty::Bool => false,
        other => panic!("the round trip does not cover {other:?}"),
    }
}

/// The value the C writer stores in field `j` of record `k`.
fn value(float: bool, k: usize, j: usize) -> f64 {
    let n = (k * 16 + j) as f64;
    if float {
        n * 0.25 - 7.125
    } else {
        n % 251.0
    }
}

fn c_program(schema: &Schema) -> String {
    let mut w = String::new();
    let mut r = String::new();
    for (k, rec) in schema.records.iter().enumerate() {
        let s = schema.strukt(rec.body);
        let ty = format!("usvlog_{}_t", rec.name.to_ascii_lowercase());
        let _ = writeln!(w, "    {{ {ty} v; memset(&v, 0, sizeof v);");
        let _ = writeln!(
            r,
            "        case {}: {{ {ty} v; if (fread(&v, 1, sizeof v, f) != sizeof v || h.len != sizeof v) return 3;",
            rec.name
        );
        for (j, f) in s.fields.iter().filter(|f| !f.is_padding()).enumerate() {
            let fl = is_float(schema, &f.ty);
            let val = value(fl, k, j);
            if fl {
                let _ = writeln!(w, "      v.{} = {val:?}f;", f.name);
                let _ = writeln!(
                    r,
                    "          printf(\"%s %s %.9g\\n\", \"{}\", \"{}\", (double)v.{});",
                    rec.name, f.name, f.name
                );
            } else {
                let _ = writeln!(w, "      v.{} = {};", f.name, val as u64);
                let _ = writeln!(
                    r,
                    "          printf(\"%s %s %llu\\n\", \"{}\", \"{}\", (unsigned long long)v.{});",
                    rec.name, f.name, f.name
                );
            }
        }
        let _ = writeln!(w, "      h.t_us = {}u; h.type = {}; h.len = (uint16_t)sizeof v; fwrite(&h, 1, sizeof h, f); fwrite(&v, 1, sizeof v, f); }}", 1000 + k, rec.name);
        let _ = writeln!(r, "          break; }}");
    }
    format!(
        r#"#include <stdio.h>
#include <string.h>
#include "usvlog/record_types.h"

int main(int argc, char **argv) {{
  if (argc != 3) return 2;
  if (argv[1][0] == 'w') {{
    FILE *f = fopen(argv[2], "wb");
    usvlog_file_header_t fh; usvlog_record_header_t h;
    if (!f) return 1;
    memset(&fh, 0, sizeof fh);
    memcpy(fh.magic, USVLOG_MAGIC, USVLOG_MAGIC_LEN);
    fh.fw_model_schema = FW_MODEL_SCHEMA;
    fh.endianness = 1;
    fh.t0_us = 123456789u;
    fwrite(&fh, 1, sizeof fh, f);
{w}    return fclose(f) != 0;
  }} else {{
    FILE *f = fopen(argv[2], "rb");
    usvlog_file_header_t fh; usvlog_record_header_t h;
    if (!f || fread(&fh, 1, sizeof fh, f) != sizeof fh) return 1;
    if (memcmp(fh.magic, USVLOG_MAGIC, USVLOG_MAGIC_LEN) != 0 || fh.fw_model_schema != FW_MODEL_SCHEMA) return 4;
    printf("header t0_us %llu\n", (unsigned long long)fh.t0_us);
    while (fread(&h, 1, sizeof h, f) == sizeof h) {{
      printf("record t_us %llu\n", (unsigned long long)h.t_us);
      switch (h.type) {{
{r}        default: return 5;
      }}
    }}
    return 0;
  }}
}}
"#
    )
}

fn build_c(test: &str) -> PathBuf {
    // One directory per test: the tests run in parallel and must not overwrite each other's binary.
    let dir = std::env::temp_dir().join(format!("logspec-c-roundtrip-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("roundtrip.c");
    std::fs::write(&src, c_program(&schema())).unwrap();
    let exe = dir.join("roundtrip");
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let out = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I", include, "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc is needed for the C round trip");
    assert!(out.status.success(), "gcc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Collects `field -> value` of a visited record as text, the way the C program prints them.
struct Collect(Vec<(String, String)>);
impl Visitor for Collect {
    fn uint(&mut self, n: Option<&str>, v: u64) {
        self.0.push((n.unwrap_or("").into(), v.to_string()));
    }
    fn int(&mut self, n: Option<&str>, v: i64) {
        self.0.push((n.unwrap_or("").into(), v.to_string()));
    }
    fn f32(&mut self, n: Option<&str>, v: f32) {
        self.0.push((n.unwrap_or("").into(), format!("{v:?}")));
    }
    fn f64(&mut self, n: Option<&str>, v: f64) {
        self.0.push((n.unwrap_or("").into(), format!("{v:?}")));
    }
    fn bool(&mut self, n: Option<&str>, v: bool) {
        self.0.push((n.unwrap_or("").into(), u8::from(v).to_string()));
    }
    fn str(&mut self, _: Option<&str>, _: &str) {}
    fn bytes(&mut self, _: Option<&str>, _: &[u8]) {}
    fn enumeration(&mut self, n: Option<&str>, raw: i128, _: Option<&'static str>) {
        self.0.push((n.unwrap_or("").into(), raw.to_string()));
    }
    fn flags(&mut self, n: Option<&str>, raw: u64) {
        self.0.push((n.unwrap_or("").into(), raw.to_string()));
    }
    fn begin_struct(&mut self, _: Option<&str>) {}
    fn end_struct(&mut self) {}
    fn begin_array(&mut self, _: Option<&str>, _: usize) {}
    fn end_array(&mut self) {}
    fn begin_variant(&mut self, _: Option<&str>, _: &'static str, _: i128) {}
    fn end_variant(&mut self) {}
}

#[test]
fn c_writes_rust_reads() {
    let exe = build_c("c-writes");
    let file = exe.with_extension("usvlog");
    let st = Command::new(&exe).arg("w").arg(&file).status().unwrap();
    assert!(st.success());
    let bytes = std::fs::read(&file).unwrap();
    let schema = schema();
    let (h, mut r) = SliceReader::<Usvlog>::new(&bytes).unwrap();
    assert_eq!(h.t0_us, 123456789);
    let mut k = 0;
    while let Some(ev) = r.next_event() {
        let Event::Record { raw, record } = ev.unwrap() else { panic!("unknown record") };
        let rec = &schema.records[k];
        assert_eq!(record.name(), rec.name);
        assert_eq!(raw.header.timestamp, Some(1000 + k as u64));
        let mut c = Collect(Vec::new());
        record.visit(None, &mut c);
        let fields: Vec<_> = schema.strukt(rec.body).fields.iter().filter(|f| !f.is_padding()).collect();
        assert_eq!(c.0.len(), fields.len());
        for (j, (f, (name, got))) in fields.iter().zip(&c.0).enumerate() {
            assert_eq!(&f.name, name);
            let want = value(is_float(&schema, &f.ty), k, j);
            assert_eq!(got.parse::<f64>().unwrap(), want, "{}.{}", rec.name, f.name);
        }
        k += 1;
    }
    assert_eq!(k, schema.records.len());
}

#[test]
fn rust_writes_c_reads() {
    let exe = build_c("rust-writes");
    let records: Vec<UsvlogRecord> = vec![
        RecNavSolution { x: 1.5, y: -2.25, psi: 3.25, v: 0.1, r: -1e-7, b_g: 6.5e3 }.into(),
        RecGuidanceRef { psi_d: 0.5, v_d: 1.25, e_y: -0.75, e_psi: 1e-3 }.into(),
        RecActuatorReq { u_s_req: 0.3, u_d_req: -0.3, src: ActSrc::MANUAL }.into(),
        RecActuatorCmd { u_s_cmd: 1.0, u_d_cmd: -1.0 }.into(),
        RecEscOutput { u_L: 0.125, u_R: 0.875 }.into(),
        RecMissionState { idx: 65535, active: 1, done: 0, x0: 1.0, y0: 2.0, x1: 3.0, y1: 4.0, v_seg: 5.0, d_wp: 6.0 }
            .into(),
        RecMixerFeedback { u_s_ach: 0.5, u_d_ach: 0.25, sat_L: 1, sat_R: 0, sat_any: 1, u_L_ach: 0.75, u_R_ach: 0.25 }
            .into(),
        RecSpeedSchedDebug { v_seg: 1.0, v_cap: 2.0, v_d: 3.0, e_psi: 4.0, d_wp: 5.0, dv: 6.0, cap_wp: 1, cap_psi: 0 }
            .into(),
        RecSpeedCtrlDebug { v_d: 1.0, v_hat: 2.0, e_v: 3.0, u_s_raw: 4.0, u_s_req: 5.0, i_v: 6.0, sat_u_s: 1 }.into(),
        RecYawCtrlDebug { psi_d: 1.0, psi: 2.0, e_psi: 3.0, r_d: 4.0, r: 5.0, e_r: 6.0, u_d_req: 7.0, sat_u_d: 1 }
            .into(),
        RecEkfDiag {
            P_xx: 0.1,
            P_yy: 0.2,
            P_psi: 0.3,
            P_v: 0.4,
            P_r: 0.5,
            P_bg: 0.6,
            status_flags: EkfStatus(0x8000_0011),
        }
        .into(),
        RecSensorGnss { x: -100.5, y: 200.25, cog: 1.0, sog: 2.0, valid: 1 }.into(),
        RecSensorGyro { z_gyro: 0.01, b_g_est: -0.002, valid: 0 }.into(),
    ];
    let mut w =
        Writer::<_, Usvlog>::new(Vec::new(), &FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 77 }).unwrap();
    let mut expected = String::from("header t0_us 77\n");
    for (i, r) in records.iter().enumerate() {
        w.write(500 + i as u64, r).unwrap();
        let _ = writeln!(expected, "record t_us {}", 500 + i);
        let mut c = Collect(Vec::new());
        r.visit(None, &mut c);
        for (name, v) in c.0 {
            let _ = writeln!(expected, "{} {name} {v}", r.name());
        }
    }
    let file = exe.with_extension("rust.usvlog");
    std::fs::write(&file, w.finish().unwrap()).unwrap();
    let out = Command::new(&exe).arg("r").arg(&file).output().unwrap();
    assert!(out.status.success(), "C reader failed with {:?}", out.status);
    let got = String::from_utf8(out.stdout).unwrap();
    // Floats: C prints %.9g, Rust the shortest round trip; compare as f32 values.
    for (g, e) in got.lines().zip(expected.lines()) {
        let (gp, gv) = g.rsplit_once(' ').unwrap();
        let (ep, ev) = e.rsplit_once(' ').unwrap();
        assert_eq!(gp, ep);
        if gv != ev {
            assert_eq!(gv.parse::<f32>().unwrap(), ev.parse::<f32>().unwrap(), "{g} vs {e}");
        }
    }
    assert_eq!(got.lines().count(), expected.lines().count());
}
