//! Axis ticks chosen here (not by plotters): round steps, one number style per axis, and a
//! tick at the start time.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

/// The ticks of an axis from `lo` to `hi`: the multiples of a step of 1, 2 or 5 times a power of
/// ten in the range, at most about `max` of them, and the step.
pub(super) fn ticks(lo: f64, hi: f64, max: usize) -> (Vec<f64>, f64) {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || span.is_infinite() {
        return (vec![lo], 1.0);
    }
    let raw = span / max.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|s| *s >= raw).unwrap_or(10.0 * power);
    // A tick at an end of the range stays, whatever the rounding of the division.
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let points = (first..=last).map(|k| k as f64 * step).collect();
    (points, step)
}

/// The number style of one axis: every tick of the axis is written alike, plain decimals for
/// moderate values, an SI prefix (`12.5k`, `-10k`, `-8k`) when the axis reaches ten thousand,
/// one power of ten (`9.22e18`) from a thousand tera on and for an axis whose values are all
/// tiny; the digits after the point tell the ticks apart. No label is wider than the area
/// reserved for it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NumberStyle {
    /// Each value is divided by this...
    scale: f64,
    /// ... written with this many digits after the point, trailing zeros dropped...
    digits: usize,
    /// ... and followed by this (`k`, `e18`).
    suffix: String,
    /// Values smaller than this are written `0`.
    zero: f64,
}

impl NumberStyle {
    /// The style of an axis from `lo` to `hi` whose ticks are `step` apart.
    pub(super) fn new(lo: f64, hi: f64, step: f64) -> NumberStyle {
        let top = lo.abs().max(hi.abs());
        let zero = (hi - lo).abs() * 1e-9;
        const SI: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
        let (scale, suffix) = if top >= 1e15 || (top > 0.0 && top < 1e-3) {
            let exp = top.log10().floor() as i32;
            (10f64.powi(exp), format!("e{exp}"))
        } else if top >= 1e4 {
            SI.iter().find(|(scale, _)| top >= *scale).map_or((1.0, String::new()), |(s, p)| (*s, p.to_string()))
        } else {
            (1.0, String::new())
        };
        // Enough digits for the step, and for two ticks that differ by less than a unit.
        let digits = if step > 0.0 { (-(step / scale).log10().floor()).clamp(0.0, 4.0) as usize } else { 0 };
        let digits = if suffix.starts_with('e') { digits.min(3) } else { digits };
        NumberStyle { scale, digits, suffix, zero }
    }

    pub(super) fn label(&self, v: f64) -> String {
        if v.abs() <= self.zero || v == 0.0 {
            return "0".into();
        }
        let d = self.digits;
        let mut s = format!("{:.d$}", v / self.scale);
        if s.contains('.') {
            s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        }
        if s == "-0" {
            s = "0".into();
        }
        format!("{s}{}", self.suffix)
    }
}

/// An axis of numbers whose ticks are chosen here ([`ticks`], [`x_ticks`]), not by plotters; its
/// labels are written by the axis's formatter ([`NumberStyle`], [`x_label`]).
#[derive(Clone, Debug)]
pub(super) struct Ticked {
    pub(super) range: std::ops::Range<f64>,
    pub(super) ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(self.range.clone()).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // The labelled ticks only: no finer lines between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// The x ticks: the start time first, then the multiples of the step after it (the first of them
/// only when it is at least half a step away, so that their labels do not touch).
pub(super) fn x_ticks(x0: f64, x1: f64) -> (Vec<f64>, f64) {
    let (points, step) = ticks(x0, x1, 10);
    let mut out = vec![x0];
    out.extend(points.into_iter().filter(|x| *x >= x0 + step * 0.5));
    (out, step)
}

/// An x tick label: seconds with the digits of the step (`5`, `2.5`), the start time with up to
/// three more, so that a start of 0.9226 s is not written as `1`.
pub(super) fn x_label(x: f64, x0: f64, step: f64) -> String {
    let digits = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    let digits = if x == x0 { digits + 3 } else { digits };
    let mut s = format!("{x:.digits$}");
    if s.contains('.') {
        s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if s == "-0" {
        s = "0".into();
    }
    s
}
