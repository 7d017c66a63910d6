//! The USVLOG bench input: the record mix of `bench-inputs/gen_usvlog.py` (one 200 ms super
//! period = 227 records), built in memory with the library's writer. Shared by the `usvlog` and
//! `parquet` benches.

use logspec::formats::usvlog::*;
use logspec::runtime::Writer;

const SUB_US: u64 = 5000;
const SUBS: u64 = 40;

/// The (sub-tick, record id) schedule of one 200 ms super period, as in gen_usvlog.py.
fn schedule() -> Vec<(u64, u16)> {
    const CONTROL: [u16; 8] = [2, 8, 9, 10, 3, 4, 7, 5];
    let mut out = Vec::new();
    for s in 0..SUBS {
        out.push((s, 13));
        if s % 20 == 5 {
            out.push((s, 12));
        }
        if s % 2 == 0 {
            out.push((s, 1));
            if s % 10 == 0 {
                out.push((s, 11));
            }
            if s == 0 {
                out.push((s, 6));
            }
            out.extend(CONTROL.iter().map(|t| (s, *t)));
        }
    }
    out
}

fn record(id: u16, t: f32) -> UsvlogRecord {
    let s = t.sin();
    let c = (0.3 * t).cos();
    match id {
        1 => RecNavSolution { x: 120.0 * s, y: 80.0 * c, psi: 0.6 * s, v: 1.2 + 0.4 * c, r: 0.02, b_g: 0.003 }.into(),
        2 => RecGuidanceRef { psi_d: s, v_d: 1.3, e_y: 0.8 * c, e_psi: 0.15 * s }.into(),
        3 => RecActuatorReq { u_s_req: 0.5 * c, u_d_req: 0.1 * s, src: ActSrc::AUTOPILOT }.into(),
        4 => RecActuatorCmd { u_s_cmd: 0.5 * c, u_d_cmd: 0.1 * s }.into(),
        5 => RecEscOutput { u_L: 0.4 * c, u_R: 0.6 * c }.into(),
        6 => RecMissionState {
            idx: (t / 60.0) as u16,
            active: 1,
            done: 0,
            x0: 1.0,
            y0: 2.0,
            x1: 3.0,
            y1: 4.0,
            v_seg: 1.4,
            d_wp: 30.0 * c.abs(),
        }
        .into(),
        7 => RecMixerFeedback {
            u_s_ach: c,
            u_d_ach: s,
            sat_L: 0,
            sat_R: u8::from(s > 0.9),
            sat_any: u8::from(s > 0.9),
            u_L_ach: c - s,
            u_R_ach: c + s,
        }
        .into(),
        8 => RecSpeedSchedDebug {
            v_seg: 1.4,
            v_cap: 1.3,
            v_d: 1.3,
            e_psi: s,
            d_wp: 20.0,
            dv: 0.003,
            cap_wp: 0,
            cap_psi: u8::from(c > 0.5),
        }
        .into(),
        9 => RecSpeedCtrlDebug {
            v_d: 1.3,
            v_hat: 1.2 + 0.1 * s,
            e_v: 0.1 * s,
            u_s_raw: c,
            u_s_req: c,
            i_v: 0.1 * s,
            sat_u_s: 0,
        }
        .into(),
        10 => RecYawCtrlDebug {
            psi_d: s,
            psi: s * 0.9,
            e_psi: 0.1 * s,
            r_d: 0.2 * c,
            r: 0.19 * c,
            e_r: 0.01,
            u_d_req: 0.3 * s,
            sat_u_d: 0,
        }
        .into(),
        11 => RecEkfDiag {
            P_xx: 0.2,
            P_yy: 0.2,
            P_psi: 0.08,
            P_v: 0.15,
            P_r: 0.12,
            P_bg: 0.02,
            status_flags: EkfStatus::HEALTHY,
        }
        .into(),
        12 => RecSensorGnss { x: 120.0 * s, y: 80.0 * c, cog: s, sog: 1.2, valid: 1 }.into(),
        _ => RecSensorGyro { z_gyro: 0.02 + 0.01 * s, b_g_est: 0.003, valid: 1 }.into(),
    }
}

/// A USVLOG stream of about `mb` megabytes.
pub fn build(mb: f64) -> Vec<u8> {
    let sched = schedule();
    let header = FileHeader { fw_model_schema: FW_MODEL_SCHEMA, t0_us: 1_000_000 };
    let mut w = Writer::<_, Usvlog>::new(Vec::with_capacity((mb * 1e6) as usize + 8192), &header).unwrap();
    let target = (mb * 1e6) as usize;
    let mut k = 0u64;
    let mut written = 32;
    while written < target {
        for (s, id) in &sched {
            let t_us = 1_000_000 + (k * SUBS + s) * SUB_US;
            let r = record(*id, (t_us as f64 * 1e-6) as f32);
            written += 12 + logspec::runtime::Encode::encoded_len(&r);
            w.write(t_us, &r).unwrap();
        }
        k += 1;
    }
    w.finish().unwrap()
}
