//! The STM32F4 logger demo (`examples/firmware/`), end to end: built with arm-none-eabi-gcc against
//! the generated `include/usvlog/record_types.h`, whose writers (`usvlog_write_file_header`,
//! `usvlog_write_<record>`) make every byte the firmware logs, run on QEMU's netduinoplus2 board (STM32F405,
//! Cortex-M4F) with semihosting, and the `timeseries.bin` it writes on the host decoded with the
//! USVLOG reader. Every record is compared bit for bit with a host recomputation of the firmware's
//! toy simulation (single-precision IEEE arithmetic without fused multiply-add is the same on both).
//!
//! The cross toolchain, make and QEMU are external tools: without them the test is reported as
//! ignored (Debian: `apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
//! make`), except under CI (`CI=true`), where it fails, because CI installs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::tools;
use std::time::{Duration, Instant};
use tools::Need;

use logspec::formats::usvlog::*;
use logspec::runtime::{Event, SliceReader};

const CYCLES: u32 = 3000;
const T0_US: u64 = 1_000_000;
const DT: f32 = 0.001;
const GUIDANCE_DIV: u32 = 10;
const SLOW_DIV: u32 = 100;
const MANUAL_FROM: u32 = 2500;
/// QEMU gets this long; the run takes well under a second.
const QEMU_TIMEOUT: Duration = Duration::from_secs(60);

fn build(dir: &Path) -> PathBuf {
    build_with(dir, &[])
}

/// [`build`] with `make` variables (`CHECKED=1`).
fn build_with(dir: &Path, vars: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/firmware");
    let out = Command::new("make")
        .arg("-C")
        .arg(&src)
        .arg(format!("BUILD={}", dir.display()))
        .args(vars)
        .output()
        .expect("run make");
    assert!(
        out.status.success(),
        "building the firmware failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("firmware.elf")
}

/// Runs the image on QEMU in `dir` (where semihosting creates `timeseries.bin`) and returns its
/// exit status and console output. QEMU ends through the firmware's semihosting exit call; a hang
/// is killed after [`QEMU_TIMEOUT`].
fn run_qemu(dir: &Path, elf: &Path) -> (Option<i32>, String) {
    let mut child = Command::new("qemu-system-arm")
        .args(["-M", "netduinoplus2", "-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(elf)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qemu-system-arm");
    let deadline = Instant::now() + QEMU_TIMEOUT;
    loop {
        if child.try_wait().expect("wait for qemu").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("QEMU did not exit within {QEMU_TIMEOUT:?}: the firmware hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("qemu output");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

fn clamp(v: f32, lo: f32, hi: f32) -> f32 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

fn sin_poly(a: f32) -> f32 {
    let a2 = a * a;
    a * (1.0 - a2 / 6.0 * (1.0 - a2 / 20.0))
}

fn cos_poly(a: f32) -> f32 {
    let a2 = a * a;
    1.0 - a2 / 2.0 * (1.0 - a2 / 12.0)
}

/// The firmware's `sim.c` and `main.c` control task, restated: what the log must hold.
#[derive(Default)]
struct Sim {
    x: f32,
    y: f32,
    psi: f32,
    v: f32,
    r: f32,
    b_g_est: f32,
    v_d: f32,
    i_v: f32,
    psi_d: f32,
    wp: u16,
    speed: RecSpeedCtrlDebug,
}

impl Sim {
    fn step(&mut self, k: u32, out: &mut Vec<UsvlogRecord>) {
        let z_gyro = self.r + 0.01;
        self.b_g_est += 0.5 * DT * (z_gyro - self.r - self.b_g_est);
        let gyro = RecSensorGyro { z_gyro, b_g_est: self.b_g_est, valid: 1 };
        let gnss = RecSensorGnss { x: self.x, y: self.y, cog: self.psi, sog: self.v, valid: 1 };
        let nav = RecNavSolution {
            x: self.x,
            y: self.y,
            psi: self.psi,
            v: self.v,
            r: z_gyro - self.b_g_est,
            b_g: self.b_g_est,
        };
        let p = 0.5 / (1.0 + k as f32 * DT);
        let ekf = RecEkfDiag {
            P_xx: p,
            P_yy: p,
            P_psi: p / 10.0,
            P_v: p / 4.0,
            P_r: p / 8.0,
            P_bg: p / 100.0,
            status_flags: if k >= SLOW_DIV { EkfStatus::HEALTHY } else { EkfStatus(0) },
        };
        let mut d_wp = f32::from(self.wp + 1) - nav.x;
        if d_wp < 0.25 {
            self.wp += 1;
            d_wp += 1.0;
        }
        let v_seg = 1.5;
        let mission = RecMissionState {
            idx: self.wp,
            active: 1,
            done: 0,
            x0: f32::from(self.wp),
            y0: 0.0,
            x1: f32::from(self.wp + 1),
            y1: 0.0,
            v_seg,
            d_wp,
        };
        let slow = k % SLOW_DIV == 0;
        out.push(gyro.into());
        if slow {
            out.push(gnss.into());
        }
        out.push(nav.into());
        if slow {
            out.extend([UsvlogRecord::from(ekf), mission.into()]);
        }
        if k % GUIDANCE_DIV == 0 {
            let e_y = nav.y;
            self.psi_d = clamp(-0.8 * e_y, -0.5, 0.5);
            let e_psi = self.psi_d - nav.psi;
            let mut v_cap = v_seg - e_psi.abs();
            let cap_psi = e_psi.abs() > 0.2;
            let cap_wp = d_wp < 0.5;
            if cap_wp && v_cap > 1.0 {
                v_cap = 1.0;
            }
            let dv = clamp(v_cap - self.v_d, -0.02, 0.02);
            self.v_d += dv;
            let e_v = self.v_d - nav.v;
            let u_s_raw = 0.8 * e_v + self.i_v;
            let u_s_req = clamp(u_s_raw, 0.0, 1.0);
            let sat = u_s_raw != u_s_req;
            if !sat {
                self.i_v += 0.5 * e_v * (DT * GUIDANCE_DIV as f32);
            }
            self.speed = RecSpeedCtrlDebug {
                v_d: self.v_d,
                v_hat: nav.v,
                e_v,
                u_s_raw,
                u_s_req,
                i_v: self.i_v,
                sat_u_s: sat.into(),
            };
            out.extend([
                UsvlogRecord::from(RecGuidanceRef { psi_d: self.psi_d, v_d: self.v_d, e_y, e_psi }),
                RecSpeedSchedDebug {
                    v_seg,
                    v_cap,
                    v_d: self.v_d,
                    e_psi,
                    d_wp,
                    dv,
                    cap_wp: cap_wp.into(),
                    cap_psi: cap_psi.into(),
                }
                .into(),
                self.speed.into(),
            ]);
        }
        let e_psi = self.psi_d - nav.psi;
        let r_d = 1.5 * e_psi;
        let e_r = r_d - nav.r;
        let u_d_raw = 0.6 * e_r;
        let u_d_req = clamp(u_d_raw, -0.5, 0.5);
        let yaw = RecYawCtrlDebug {
            psi_d: self.psi_d,
            psi: nav.psi,
            e_psi,
            r_d,
            r: nav.r,
            e_r,
            u_d_req,
            sat_u_d: (u_d_raw != u_d_req).into(),
        };
        let req = if k >= MANUAL_FROM {
            RecActuatorReq { u_s_req: 0.2, u_d_req: 0.0, src: ActSrc::MANUAL }
        } else {
            RecActuatorReq { u_s_req: self.speed.u_s_req, u_d_req, src: ActSrc::AUTOPILOT }
        };
        let cmd = RecActuatorCmd { u_s_cmd: req.u_s_req, u_d_cmd: req.u_d_req };
        let (l_raw, r_raw) = (cmd.u_s_cmd + cmd.u_d_cmd, cmd.u_s_cmd - cmd.u_d_cmd);
        let (u_l, u_r) = (clamp(l_raw, -1.0, 1.0), clamp(r_raw, -1.0, 1.0));
        let (sat_l, sat_r) = (u8::from(u_l != l_raw), u8::from(u_r != r_raw));
        let mixer = RecMixerFeedback {
            u_s_ach: (u_l + u_r) / 2.0,
            u_d_ach: (u_l - u_r) / 2.0,
            sat_L: sat_l,
            sat_R: sat_r,
            sat_any: sat_l | sat_r,
            u_L_ach: u_l,
            u_R_ach: u_r,
        };
        out.extend([
            UsvlogRecord::from(yaw),
            req.into(),
            cmd.into(),
            mixer.into(),
            RecEscOutput { u_L: u_l, u_R: u_r }.into(),
        ]);
        self.v += DT * (1.2 * mixer.u_s_ach - 0.8 * self.v);
        self.r += DT * (3.0 * mixer.u_d_ach - 2.0 * self.r);
        self.psi += DT * self.r;
        self.x += DT * self.v * cos_poly(self.psi);
        self.y += DT * self.v * sin_poly(self.psi);
    }
}

/// This module's trials, run by `tests/external/main.rs`.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let needs = [Need::Program("arm-none-eabi-gcc"), Need::Program("qemu-system-arm"), Need::Program("make")];
    vec![
        tools::trial("firmware_logs_every_record_under_qemu", &needs, firmware_logs_every_record_under_qemu),
        tools::trial(
            "firmware_logs_checked_records_that_survive_a_corrupted_length",
            &needs,
            firmware_logs_checked_records_that_survive_a_corrupted_length,
        ),
    ]
}

/// `make CHECKED=1`: the same firmware, logging through the header generated from
/// `examples/firmware/checked/usvlog.toml` (a sync word and a CRC-16/CCITT-FALSE on every
/// record). Every record's payload is the recomputed simulation's, its CRC checks out (the IR
/// interpreter verifies it), and a length field corrupted as an SD card might corrupt it costs
/// that one record, not the rest of the file.
fn firmware_logs_checked_records_that_survive_a_corrupted_length() {
    use logspec::log::SchemaFormat;
    use logspec::runtime::Encode;

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("firmware-checked");
    let _ = std::fs::remove_file(dir.join("timeseries.bin"));
    let elf = build_with(&dir, &["CHECKED=1"]);
    let (status, console) = run_qemu(&dir, &elf);
    assert_eq!(status, Some(0), "the firmware failed; its console:\n{console}");
    let bytes = std::fs::read(dir.join("timeseries.bin")).expect("the firmware wrote timeseries.bin");

    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/firmware/checked/usvlog.toml");
    let format = std::sync::Arc::new(SchemaFormat::from_file(&schema).expect("the checked schema"));
    let read = |bytes: &[u8]| {
        let mut r = format.read(bytes).expect("the file header");
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            match rec {
                Ok(rec) => out.push(Ok((rec.offset, rec.header.tag, rec.header.timestamp, rec.payload.to_vec()))),
                Err(e) if e.is_recoverable() => out.push(Err(e.to_string())),
                Err(e) => panic!("{e}"),
            }
        }
        out
    };
    let got = read(&bytes);
    let mut sim = Sim { y: 1.0, ..Sim::default() };
    let mut want = Vec::new();
    let mut n = 0;
    for k in 0..CYCLES {
        want.clear();
        sim.step(k, &mut want);
        for w in &want {
            let Some(Ok((_, tag, t, payload))) = got.get(n) else { panic!("record {n}: {:?}", got.get(n)) };
            let mut p = Vec::new();
            w.encode(&mut p, logspec::runtime::Endian::Little).unwrap();
            assert_eq!((*t, payload), (Some(T0_US + u64::from(k) * 1000), &p), "record {n} (cycle {k})");
            assert_eq!(*tag, <Usvlog as logspec::runtime::FramedFormat>::record_tag(w), "record {n}");
            n += 1;
        }
    }
    assert_eq!(got.len(), n, "records after the last cycle");

    // Record 1000's length field (after the 2-byte sync, 8-byte t_us and 2-byte type) made huge.
    let Ok((at, ..)) = got[1000] else { unreachable!() };
    let Ok((next, ..)) = got[1001] else { unreachable!() };
    let mut bad = bytes.clone();
    let at = at as usize;
    bad[at + 12..at + 14].copy_from_slice(&[0xFF, 0xFF]);
    let again = read(&bad);
    assert_eq!(again.len(), got.len(), "one region in place of one record");
    assert_eq!(again[..1000], got[..1000]);
    assert_eq!(again[1001..], got[1001..]);
    let Err(msg) = &again[1000] else { panic!("{:?}", again[1000]) };
    let want = format!("{} bytes passed over to the next good record at byte {next}", next - at as u64);
    assert!(msg.contains(&format!("at byte {at}")) && msg.contains(&want), "{msg}");
}

fn firmware_logs_every_record_under_qemu() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("firmware");
    let _ = std::fs::remove_file(dir.join("timeseries.bin"));
    let elf = build(&dir);
    let (status, console) = run_qemu(&dir, &elf);
    assert_eq!(status, Some(0), "the firmware failed; its console:\n{console}");
    assert!(console.contains("firmware: timeseries.bin written"), "{console}");

    let bytes = std::fs::read(dir.join("timeseries.bin")).expect("the firmware wrote timeseries.bin");
    let (header, mut reader) = SliceReader::<Usvlog>::new(&bytes).expect("a USVLOG header");
    assert_eq!((header.fw_model_schema, header.t0_us), (FW_MODEL_SCHEMA, T0_US));

    let mut sim = Sim { y: 1.0, ..Sim::default() };
    let mut want = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0usize;
    for k in 0..CYCLES {
        want.clear();
        sim.step(k, &mut want);
        for w in &want {
            let ev = reader.next_event().unwrap_or_else(|| panic!("the log ends at cycle {k}")).expect("decodes");
            let Event::Record { raw, record } = ev else { panic!("record {n}: an unknown record type") };
            assert_eq!(raw.header.timestamp, Some(T0_US + u64::from(k) * 1000), "record {n}");
            assert_eq!(&record, w, "record {n} (cycle {k}) differs from the recomputed simulation");
            seen.insert(record.name());
            n += 1;
        }
    }
    assert!(reader.next_event().is_none(), "records after the last cycle");
    assert_eq!(reader.position(), bytes.len() as u64);
    assert_eq!(seen.len(), 13, "every record type is logged: {seen:?}");
    assert_eq!(n, 7 * 3000 + 3 * 300 + 3 * 30);
}
