//! A time-series plot of chosen fields of a log (`logspec plot`), with axis labels, units and a
//! legend; PNG or SVG by the output's extension.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use logspec::value::Value;

use logspec::log::{Channel, Error, Log, Samples, Select};

mod ticks;
mod units;

use ticks::{ticks, x_label, x_ticks, NumberStyle, Ticked};
use units::{unit_of_name, unit_of_ros_field};

/// What to plot, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// The fields: `CHANNEL.COLUMN` (a record type and a field, `REC_NAV_SOLUTION.x`; nested
    /// fields and array elements as in the CSV export: `pose.x`, `value[0]`), or `CHANNEL` for a
    /// channel with one value (an RLOG key).
    pub fields: Vec<String>,
    /// The image to write: `.png` or `.svg`.
    pub output: PathBuf,
    /// Image size in pixels.
    pub width: u32,
    pub height: u32,
    /// Title (the file name if not given).
    pub title: Option<String>,
    /// Only samples at or after this time (seconds from the log's time origin).
    pub since: Option<f64>,
    /// Only samples at or before this time.
    pub until: Option<f64>,
}

/// What [`plot`] drew.
#[derive(Debug)]
pub struct Plotted {
    pub fields: usize,
    pub points: usize,
    /// The problem that ended the reading early (the plot holds everything before it).
    pub error: Option<String>,
}

/// The font every label is drawn with, bundled so that plots look the same on every machine.
const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Png,
    Svg,
}

/// Plots the fields of the log at `file` (opened by `open`, after the options are checked) over
/// time into `opts.output`, with axis labels, units and a legend; `warn` is told each problem
/// that did not stop the reading.
pub fn plot(
    file: &Path,
    opts: &Options,
    open: impl FnOnce() -> Result<Log, Error>,
    warn: &mut dyn FnMut(&str),
) -> Result<Plotted, Error> {
    let args = opts;
    crate::output::refuse_input(&args.output, &[file])?;
    let kind = match args.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png") => Kind::Png,
        Some("svg") => Kind::Svg,
        _ => {
            return Err(Error::Usage(format!(
                "{}: the plot is written as PNG or SVG; name the output `*.png` or `*.svg`",
                args.output.display()
            )))
        }
    };
    if !(16..=16384).contains(&args.width) || !(16..=16384).contains(&args.height) {
        return Err(Error::Usage(format!(
            "the image size must be 16..16384 pixels, not {}x{}",
            args.width, args.height
        )));
    }
    let path = logspec::log::shown(file);
    let d = open()?;
    let select = Select { channels: Vec::new(), tables: false, since: args.since, until: args.until };
    let mut sink = Collect {
        fields: args.fields.iter().map(|f| Series::new(f)).collect(),
        by_channel: Vec::new(),
        seen: Vec::new(),
        origin_ns: 0,
    };
    let outcome = d.scan(&select, &mut sink)?;
    for w in &outcome.warnings {
        warn(w);
    }
    // A field of a channel the log has, but a column that channel does not have.
    if let Some(s) = sink.fields.iter().find(|s| s.points.is_empty() && s.channel.is_some() && !s.columns.is_empty()) {
        let (channel, column) = (s.channel.as_deref().unwrap_or(""), &s.field[s.source.map_or(0, |(_, len)| len)..]);
        let column = column.trim_start_matches('.');
        let names: Vec<&str> = s.columns.iter().map(String::as_str).collect();
        let one = Select { channels: vec![column.to_string()], ..Default::default() };
        if let Err(e) =
            logspec::log::filter::no_match(&one, &names, &path, &format!("column of {channel}"), "its columns")
        {
            return Err(Error::Usage(format!("{e} (plot them as {channel}.COLUMN)")));
        }
    }
    let missing: Vec<&str> = sink.fields.iter().filter(|s| s.points.is_empty()).map(|s| s.field.as_str()).collect();
    if let Some(first) = sink.fields.iter().find(|s| s.points.is_empty() && s.channel.is_none()) {
        // No channel is a prefix of the field: say which channel was meant.
        let mut seen = sink.seen.clone();
        seen.sort();
        seen.dedup();
        return Err(Error::Usage(no_channel(&first.field, &seen, &path)));
    }
    if !missing.is_empty() {
        let mut seen = sink.seen.clone();
        seen.sort();
        seen.dedup();
        let shown_channels: Vec<&str> = seen.iter().take(20).map(String::as_str).collect();
        return Err(Error::Usage(format!(
            "{path}: no numeric samples for {}; the log's channels are: {}{}",
            missing.join(", "),
            shown_channels.join(", "),
            if seen.len() > 20 { format!(" and {} more", seen.len() - 20) } else { String::new() }
        )));
    }
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| file.file_name().map_or(path.clone(), |n| n.to_string_lossy().into_owned()));
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| Error::Input("the bundled font does not load".into()))?;
    let input = file;
    let file = crate::output::OutFile::create(&args.output, &[input])?;
    let (out, tmp) = (args.output.clone(), file.path().to_path_buf());
    let size = (args.width, args.height);
    // ROS bag times are Unix times: the axis counts from the first message instead.
    let x_desc = if sink.origin_ns > 0 { "time since the first message [s]" } else { "time [s]" };
    let result = match kind {
        Kind::Png => draw(BitMapBackend::new(&tmp, size).into_drawing_area(), &title, x_desc, &sink.fields),
        Kind::Svg => draw(SVGBackend::new(&tmp, size).into_drawing_area(), &title, x_desc, &sink.fields),
    };
    result.map_err(|e| Error::Input(format!("{}: cannot draw: {e}", out.display())))?;
    file.commit()?;
    let points: usize = sink.fields.iter().map(|s| s.points.len()).sum();
    Ok(Plotted { fields: sink.fields.len(), points, error: outcome.error })
}

/// One requested field and its samples.
struct Series {
    field: String,
    /// The channel the field names, once met.
    channel: Option<String>,
    /// The columns of that channel, when a sample lacked the field's column.
    columns: std::collections::BTreeSet<String>,
    /// The unit of the column within the channel, once the channel is known.
    unit: Option<String>,
    points: Vec<(f64, f64)>,
    /// The channel id feeding the series, and the length of its name as the field spells it
    /// (the column follows).
    source: Option<(usize, usize)>,
}

impl Series {
    fn new(field: &str) -> Self {
        Series {
            field: field.to_string(),
            channel: None,
            columns: std::collections::BTreeSet::new(),
            unit: None,
            points: Vec::new(),
            source: None,
        }
    }

    fn label(&self) -> String {
        match &self.unit {
            Some(u) => format!("{} [{u}]", self.field),
            None => self.field.clone(),
        }
    }
}

struct Collect {
    fields: Vec<Series>,
    /// Per channel id: (series index, column name) pairs it feeds.
    by_channel: Vec<Vec<(usize, String)>>,
    /// Every channel name, for the message when a field is not found.
    seen: Vec<String>,
    /// The log's time origin, subtracted from the sample times.
    origin_ns: u64,
}

/// The ways a field may spell a channel's name: as the log has it (`/SystemStats/BatteryVoltage`),
/// without the leading `/`, and as its Parquet table folder and CSV file show it, `/` as `.`
/// (`SystemStats.BatteryVoltage`).
fn spellings(name: &str) -> Vec<String> {
    let bare = name.strip_prefix('/').unwrap_or(name);
    let mut out = vec![name.to_string()];
    for s in [bare.to_string(), bare.replace('/', ".")] {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The channel `name` as the start of `field`: the length of the longest spelling of it that
/// the field starts with, ending there or before a `.` or `[`, and the column that follows (empty
/// for the channel's only value; `value[i]` for an element of it).
fn column_of(field: &str, name: &str) -> Option<(usize, String)> {
    spellings(name)
        .into_iter()
        .filter_map(|spelled| {
            let rest = field.strip_prefix(spelled.as_str())?;
            let column = match rest {
                "" => String::new(),
                _ if rest.starts_with('.') => rest[1..].to_string(),
                _ if rest.starts_with('[') => format!("value{rest}"),
                _ => return None,
            };
            Some((spelled.len(), column))
        })
        .max_by_key(|(len, _)| *len)
}

/// The error for a field that no channel's name starts: the closest channel (to the longest
/// start of the field, cut before a `.` or `[`, that has a close one) and the log's channels.
fn no_channel(field: &str, channels: &[String], path: &str) -> String {
    let spelled: Vec<String> = channels.iter().flat_map(|c| spellings(c)).collect();
    let spelled: Vec<&str> = spelled.iter().map(String::as_str).collect();
    let mut starts: Vec<&str> = field.match_indices(['.', '[']).map(|(i, _)| &field[..i]).collect();
    starts.push(field);
    let hint =
        starts.iter().rev().find_map(|start| logspec::log::filter::closest(start, &spelled).map(|c| (*start, c)));
    let (start, hint) = match hint {
        Some((start, c)) => (start, format!(" (did you mean `{c}`?)")),
        None => (starts[0], String::new()),
    };
    let listed = if channels.is_empty() {
        "the log's channels: none (the log holds no samples)".to_string()
    } else {
        let list: Vec<&str> = channels.iter().take(30).map(String::as_str).collect();
        let more = channels.len() - list.len();
        format!(
            "the log's channels ({}): {}{}",
            channels.len(),
            list.join(", "),
            if more > 0 { format!(", ... and {more} more") } else { String::new() }
        )
    };
    format!("{path}: no channel matches `{start}`{hint}; {listed} (for --field {field})")
}

impl Samples for Collect {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.by_channel.len());
        let mut feeds = Vec::new();
        for (i, s) in self.fields.iter_mut().enumerate() {
            // `CHANNEL` alone, or `CHANNEL.COLUMN` / `CHANNEL[i]`: the longest channel name that
            // starts the field is its channel (`/A/B.x` is a column of `/A/B` even when `/A`
            // has a column `B.x`), whichever came first.
            let Some((len, c)) = column_of(&s.field, &channel.name) else { continue };
            if let Some((old, old_len)) = s.source {
                if old_len >= len {
                    continue;
                }
                self.by_channel[old].retain(|(j, _)| *j != i);
                s.points.clear();
                s.columns.clear();
            }
            // A schema's units, or for a log that has none (RLOG, WPILOG, ROS bags) what the ROS
            // message's documentation or the name says.
            let named = || {
                if !channel.units.is_empty() {
                    return None;
                }
                channel
                    .ros1
                    .as_ref()
                    .and_then(|r| unit_of_ros_field(&r.ty, &c))
                    .or_else(|| unit_of_name(&channel.name, &c))
            };
            s.unit = channel.unit(&c).or_else(named).map(str::to_string);
            s.channel = Some(channel.name.clone());
            s.source = Some((id, len));
            feeds.push((i, c));
        }
        self.by_channel.push(feeds);
        self.seen.push(channel.name.clone());
        Ok(())
    }

    fn origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
    }

    fn sample(&mut self, id: usize, t_ns: u64, value: &Value) -> Result<(), Error> {
        let t = t_ns.saturating_sub(self.origin_ns) as f64 / 1e9;
        let feeds = &self.by_channel[id];
        if feeds.is_empty() {
            return Ok(());
        }
        let mut leaves = Vec::new();
        value.flatten("", &mut leaves);
        for (i, column) in feeds {
            let leaf = if column.is_empty() {
                // The channel's only value.
                (leaves.len() == 1).then(|| leaves[0].1)
            } else {
                leaves.iter().find(|(n, _)| n == column).map(|(_, v)| *v)
            };
            if let Some(y) = leaf.and_then(Value::as_f64).filter(|y| y.is_finite()) {
                self.fields[*i].points.push((t, y));
            } else if leaf.is_none() && self.fields[*i].columns.is_empty() {
                self.fields[*i].columns = leaves.iter().map(|(n, _)| n.clone()).collect();
            }
        }
        Ok(())
    }
}

/// At most this many points per pixel column are drawn: the minimum and maximum of each column
/// keep every spike visible without drawing millions of segments.
fn decimate(points: &[(f64, f64)], x0: f64, x1: f64, columns: usize) -> Vec<(f64, f64)> {
    if points.len() <= columns * 4 || x1 <= x0 {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity(columns * 2);
    let bucket = |x: f64| (((x - x0) / (x1 - x0)) * columns as f64) as usize;
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let (mut lo, mut hi) = (points[i], points[i]);
        let mut j = i;
        while j < points.len() && bucket(points[j].0) == b {
            if points[j].1 < lo.1 {
                lo = points[j];
            }
            if points[j].1 > hi.1 {
                hi = points[j];
            }
            j += 1;
        }
        if lo.0 <= hi.0 {
            out.extend([lo, hi]);
        } else {
            out.extend([hi, lo]);
        }
        i = j.max(i + 1);
    }
    out
}

/// Which y axis each series is drawn on and what each axis says: one axis per unit, the left for
/// the first unit met and the right for a second one. More units than two share the left axis,
/// described as `value`, and the legend (which names every series with its unit) tells them
/// apart.
fn axes(series: &[Series]) -> (Vec<usize>, Vec<String>) {
    let mut units: Vec<Option<&str>> = Vec::new();
    for s in series {
        if !units.contains(&s.unit.as_deref()) {
            units.push(s.unit.as_deref());
        }
    }
    let desc = |u: Option<&str>| match u {
        Some(u) => format!("value [{u}]"),
        None if units.len() > 1 => "value (no unit)".to_string(),
        None => "value".to_string(),
    };
    match units.len() {
        0 | 1 => (vec![0; series.len()], vec![desc(units.first().copied().flatten())]),
        2 => (
            series.iter().map(|s| usize::from(s.unit.as_deref() != units[0])).collect(),
            vec![desc(units[0]), desc(units[1])],
        ),
        _ => (vec![0; series.len()], vec!["value (units in the legend)".to_string()]),
    }
}

/// The legend's corner: the first of the four corners whose box (in pixels of the plotting area)
/// no series crosses, neither a line nor a marker (`None` when every corner covers data).
#[allow(clippy::type_complexity)] // a corner and its box, as `crosses` takes it
fn free_corner(
    boxes: &[(SeriesLabelPosition, (i32, i32, i32, i32))],
    series: &[Vec<(i32, i32)>],
) -> Option<SeriesLabelPosition> {
    boxes.iter().find_map(|(pos, r)| {
        let hides = series.iter().any(|s| match s.as_slice() {
            [p] => crosses(*r, *p, *p),
            s => s.windows(2).any(|w| crosses(*r, w[0], w[1])),
        });
        (!hides).then(|| pos.clone())
    })
}

/// Whether the segment `a`-`b` meets the rectangle `(x0, y0, x1, y1)` (Liang-Barsky clipping).
fn crosses((x0, y0, x1, y1): (i32, i32, i32, i32), a: (i32, i32), b: (i32, i32)) -> bool {
    let (ax, ay) = (f64::from(a.0), f64::from(a.1));
    let (dx, dy) = (f64::from(b.0) - ax, f64::from(b.1) - ay);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in
        [(-dx, ax - f64::from(x0)), (dx, f64::from(x1) - ax), (-dy, ay - f64::from(y0)), (dy, f64::from(y1) - ay)]
    {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x_desc: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    let (axis_of, descs) = axes(series);
    // The x range, and each y axis's range over its series.
    let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut y = vec![(f64::INFINITY, f64::NEG_INFINITY); descs.len()];
    for (s, &a) in series.iter().zip(&axis_of) {
        for &(px, py) in &s.points {
            x0 = x0.min(px);
            x1 = x1.max(px);
            y[a].0 = y[a].0.min(py);
            y[a].1 = y[a].1.max(py);
        }
    }
    // A flat line or a single point still gets a visible range.
    if x1 - x0 < 1e-9 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    for r in &mut y {
        let pad = if r.1 - r.0 < 1e-12 { r.0.abs().max(1.0) * 0.1 } else { (r.1 - r.0) * 0.05 };
        *r = (r.0 - pad, r.1 + pad);
    }
    let label_font = ("sans-serif", 14).into_font();
    let text_width = |t: &str| label_font.box_size(t).map_or(t.len() as u32 * 9, |(w, _)| w);
    // The legend box as plotters lays it out: the labels' lines, 30 px of sample line, a 10 px
    // margin around, 5 px from the plotting area's edge (a few pixels more, to be safe).
    let labels: Vec<String> = series.iter().map(Series::label).collect();
    let legend_w = labels.iter().map(|l| text_width(l)).max().unwrap_or(0) as i32 + 30 + 20 + 4;
    let legend_h = (labels.len() as f64 * 14.0 * 1.25).ceil() as i32 + 20 + 4;
    let (w, _) = root.dim_in_pixel();
    let decimated: Vec<Vec<(f64, f64)>> = series.iter().map(|s| decimate(&s.points, x0, x1, w as usize)).collect();
    let (x_points, x_step) = x_ticks(x0, x1);
    let x_fmt = move |x: &f64| x_label(*x, x0, x_step);
    // Built twice at most: when every corner of the legend would cover data, the y ranges grow
    // at the top until the legend fits above the data.
    let mut attempt = 0;
    loop {
        // One number style per y axis, from its ticks; every tick label fits: the label area is
        // as wide as the widest label of the axis.
        let styles: Vec<(Vec<f64>, NumberStyle)> = y
            .iter()
            .map(|&(lo, hi)| {
                let (points, step) = ticks(lo, hi, 10);
                (points, NumberStyle::new(lo, hi, step))
            })
            .collect();
        let area_width = |(points, style): &(Vec<f64>, NumberStyle)| {
            points.iter().map(|v| text_width(&style.label(*v))).max().unwrap_or(0) + 16 + 24
        };
        let mut builder = ChartBuilder::on(&root);
        builder.margin(16).x_label_area_size(48).y_label_area_size(area_width(&styles[0]));
        if let Some(right) = styles.get(1) {
            builder.right_y_label_area_size(area_width(right));
        }
        let (l0, l1) = y[0];
        let (r0, r1) = y.get(1).copied().unwrap_or(y[0]);
        let mut chart = builder
            .build_cartesian_2d(
                Ticked { range: x0..x1, ticks: x_points.clone() },
                Ticked { range: l0..l1, ticks: styles[0].0.clone() },
            )?
            .set_secondary_coord(
                x0..x1,
                Ticked { range: r0..r1, ticks: styles.get(1).map_or_else(Vec::new, |s| s.0.clone()) },
            );
        let ((px0, px1), (py0, py1)) = {
            let (xr, yr) = chart.plotting_area().get_pixel_range();
            ((xr.start, xr.end), (yr.start, yr.end))
        };
        let pixels: Vec<Vec<(i32, i32)>> = decimated
            .iter()
            .zip(&axis_of)
            .map(|(s, &a)| {
                s.iter()
                    .map(|p| match a {
                        0 => chart.plotting_area().map_coordinate(p),
                        _ => chart.secondary_plotting_area().map_coordinate(p),
                    })
                    .map(|(x, y)| (x - px0, y - py0))
                    .collect()
            })
            .collect();
        let (aw, ah) = (px1 - px0, py1 - py0);
        let corners = [
            (SeriesLabelPosition::UpperRight, (aw - legend_w - 5, 5, aw - 5, 5 + legend_h)),
            (SeriesLabelPosition::UpperLeft, (5, 5, 5 + legend_w, 5 + legend_h)),
            (SeriesLabelPosition::LowerRight, (aw - legend_w - 5, ah - legend_h - 5, aw - 5, ah - 5)),
            (SeriesLabelPosition::LowerLeft, (5, ah - legend_h - 5, 5 + legend_w, ah - 5)),
        ];
        let position = match free_corner(&corners, &pixels) {
            Some(p) => p,
            None if attempt == 0 && legend_h + 10 < ah / 2 => {
                // Headroom: the data's top then maps `legend_h + 10` pixels below the top.
                let room = f64::from(legend_h + 10) / f64::from(ah);
                for r in &mut y {
                    r.1 = (r.1 - r.0 * room) / (1.0 - room);
                }
                attempt += 1;
                continue;
            }
            None => SeriesLabelPosition::UpperRight,
        };
        let left = styles[0].1.clone();
        let left_fmt = move |v: &f64| left.label(*v);
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(descs[0].as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&left_fmt)
            .label_style(label_font.clone())
            .axis_desc_style(("sans-serif", 16))
            .draw()?;
        if let (Some(desc), Some((_, right))) = (descs.get(1), styles.get(1)) {
            let right = right.clone();
            let right_fmt = move |v: &f64| right.label(*v);
            chart
                .configure_secondary_axes()
                .y_desc(desc.as_str())
                .y_label_formatter(&right_fmt)
                .label_style(label_font.clone())
                .axis_desc_style(("sans-serif", 16))
                .draw()?;
        }
        for (i, ((s, points), &a)) in series.iter().zip(&decimated).zip(&axis_of).enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let label = s.label();
            if points.len() == 1 {
                // One sample draws no line: a marker shows it.
                let markers = points.iter().map(move |p| Circle::new(*p, 4, color.filled()));
                let anno = match a {
                    0 => chart.draw_series(markers)?,
                    _ => chart.draw_secondary_series(markers)?,
                };
                anno.label(label).legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            } else {
                let line = LineSeries::new(points.iter().copied(), color.stroke_width(2));
                let anno = match a {
                    0 => chart.draw_series(line)?,
                    _ => chart.draw_secondary_series(line)?,
                };
                anno.label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(label_font.clone())
            .position(position)
            .draw()?;
        break;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_keeps_one_number_style() {
        // An axis from -12000 to 2000 by 2000: every label with the `k` prefix, none plain.
        let (points, step) = ticks(-12500.0, 2500.0, 10);
        assert_eq!(points, [-12000.0, -10000.0, -8000.0, -6000.0, -4000.0, -2000.0, 0.0, 2000.0]);
        assert_eq!(step, 2000.0);
        let style = NumberStyle::new(-12500.0, 2500.0, step);
        let labels: Vec<String> = points.iter().map(|v| style.label(*v)).collect();
        assert_eq!(labels, ["-12k", "-10k", "-8k", "-6k", "-4k", "-2k", "0", "2k"]);
        // Moderate values stay plain, with the digits of the step.
        let (points, step) = ticks(-0.3, 1.2, 10);
        assert_eq!(points.len(), 8);
        assert_eq!(step, 0.2);
        let style = NumberStyle::new(-0.3, 1.2, step);
        let labels: Vec<String> = points.iter().map(|v| style.label(*v)).collect();
        assert_eq!(labels, ["-0.2", "0", "0.2", "0.4", "0.6", "0.8", "1", "1.2"]);
        // Near 9.2e18 (an RLOG int64 near its maximum): one power of ten for the whole axis.
        let style = NumberStyle::new(9.0e18, 9.3e18, 5e16);
        assert_eq!(style.label(9.2e18), "9.2e18");
        assert_eq!(style.label(9.05e18), "9.05e18");
    }

    #[test]
    fn the_first_x_tick_is_the_start_time() {
        let (points, step) = x_ticks(1.986451, 28.946178);
        assert_eq!(step, 5.0);
        assert_eq!(points, [1.986451, 5.0, 10.0, 15.0, 20.0, 25.0]);
        let labels: Vec<String> = points.iter().map(|x| x_label(*x, 1.986451, step)).collect();
        assert_eq!(labels, ["1.986", "5", "10", "15", "20", "25"]);
        // A multiple of the step within half a step of the start is left out (the labels would
        // touch); one at the start is the start.
        assert_eq!(x_ticks(4.0, 30.0).0, [4.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
        assert_eq!(x_ticks(0.0, 10.0).0, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
    }

    #[test]
    fn units_from_advantagekit_names() {
        assert_eq!(unit_of_name("/DriveTrain/GyroAngleDegrees", ""), Some("deg"));
        assert_eq!(unit_of_name("/DriveTrain/LeftPositionRadians", ""), Some("rad"));
        assert_eq!(unit_of_name("/Module (Front Left)/AzimuthEncoderPositionRads", ""), Some("rad"));
        assert_eq!(unit_of_name("/Module (Front Left)/WheelVelocityMetersPerSec", ""), Some("m/s"));
        assert_eq!(unit_of_name("/SystemStats/BatteryVoltage", ""), Some("V"));
        assert_eq!(unit_of_name("/DriveTrain/LeftCurrentAmps", "value[0]"), Some("A"));
        assert_eq!(unit_of_name("/Drive/Module0/turnPositionRad", ""), Some("rad"));
        assert_eq!(unit_of_name("/PDP[0]/Voltage", ""), Some("V"));
        // Not at the start of a word, or no unit at all.
        assert_eq!(unit_of_name("/Shooter/Grad", ""), None);
        assert_eq!(unit_of_name("/Robot/Pose", "translation.x"), None);
        assert_eq!(unit_of_name("/Plain/Double", ""), None);
    }

    #[test]
    fn units_of_ros_messages() {
        assert_eq!(unit_of_ros_field("sensor_msgs/Imu", "linear_acceleration.z"), Some("m/s^2"));
        assert_eq!(unit_of_ros_field("sensor_msgs/Imu", "angular_velocity.x"), Some("rad/s"));
        // A covariance is not the value it is the covariance of; a quaternion has no unit.
        assert_eq!(unit_of_ros_field("sensor_msgs/Imu", "angular_velocity_covariance[0]"), None);
        assert_eq!(unit_of_ros_field("sensor_msgs/Imu", "orientation.w"), None);
        assert_eq!(unit_of_ros_field("sensor_msgs/NavSatFix", "latitude"), Some("deg"));
        assert_eq!(unit_of_ros_field("geometry_msgs/PoseStamped", "pose.position.x"), Some("m"));
        assert_eq!(unit_of_ros_field("geometry_msgs/Point", "y"), Some("m"));
        assert_eq!(unit_of_ros_field("std_msgs/Float64", "data"), None);
    }

    #[test]
    fn a_channel_as_the_field_spells_it() {
        let key = "/SystemStats/BatteryVoltage";
        assert_eq!(column_of("/SystemStats/BatteryVoltage", key), Some((27, String::new())));
        assert_eq!(column_of("SystemStats/BatteryVoltage", key), Some((26, String::new())));
        assert_eq!(column_of("SystemStats.BatteryVoltage", key), Some((26, String::new())));
        assert_eq!(column_of("Robot.Pose.translation.x", "/Robot/Pose"), Some((10, "translation.x".into())));
        assert_eq!(column_of("/Int[2]", "/Int"), Some((4, "value[2]".into())));
        // A shorter name that starts the field matches too, with a shorter length: the longest wins.
        assert_eq!(column_of("SystemStats.BatteryVoltage", "/SystemStats"), Some((11, "BatteryVoltage".into())));
        assert_eq!(column_of("SystemStats.BatteryVoltageX", key), None);
    }
}
