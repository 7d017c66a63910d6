//! A time-series plot of chosen fields of a log (`logspec plot`), with axis labels, units and a
//! legend; PNG or SVG by the output's extension.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use logspec::value::Value;

use logspec::log::{Channel, Error, Log, Select, Samples};

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
const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

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
        let (channel, column) =
            (s.channel.as_deref().unwrap_or(""), &s.field[s.channel.as_ref().map_or(0, String::len)..]);
        let column = column.trim_start_matches('.');
        let names: Vec<&str> = s.columns.iter().map(String::as_str).collect();
        let one = Select { channels: vec![column.to_string()], ..Default::default() };
        if let Err(e) = logspec::log::filter::no_match(&one, &names, &path, &format!("column of {channel}"), "its columns") {
            return Err(Error::Usage(format!("{e} (plot them as {channel}.COLUMN)")));
        }
    }
    let missing: Vec<&str> = sink.fields.iter().filter(|s| s.points.is_empty()).map(|s| s.field.as_str()).collect();
    if let Some(first) = sink.fields.iter().find(|s| s.points.is_empty() && s.channel.is_none()) {
        // No channel is a prefix of the field: say which channel was meant.
        let mut seen = sink.seen.clone();
        seen.sort();
        seen.dedup();
        let names: Vec<&str> = seen.iter().map(String::as_str).collect();
        let head = first.field.split(['.', '[']).next().unwrap_or(&first.field).to_string();
        let one = Select { channels: vec![head], ..Default::default() };
        if let Err(e) = logspec::log::filter::no_match(&one, &names, &path, "channel", "the log's channels") {
            return Err(Error::Usage(format!("{e} (for --field {})", first.field)));
        }
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
    /// The column within the channel, once the channel is known.
    unit: Option<String>,
    points: Vec<(f64, f64)>,
}

impl Series {
    fn new(field: &str) -> Self {
        Series {
            field: field.to_string(),
            channel: None,
            columns: std::collections::BTreeSet::new(),
            unit: None,
            points: Vec::new(),
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

impl Samples for Collect {
    fn channel(&mut self, id: usize, channel: &Channel) -> Result<(), Error> {
        debug_assert_eq!(id, self.by_channel.len());
        let mut feeds = Vec::new();
        for (i, s) in self.fields.iter_mut().enumerate() {
            // `CHANNEL` alone, or `CHANNEL.COLUMN` / `CHANNEL[i]`.
            let column = match s.field.strip_prefix(channel.name.as_str()) {
                Some("") => Some(String::new()),
                Some(rest) if rest.starts_with('.') => Some(rest[1..].to_string()),
                Some(rest) if rest.starts_with('[') => Some(format!("value{rest}")),
                _ => None,
            };
            if let Some(c) = column {
                s.unit = channel.unit(&c).map(str::to_string);
                s.channel = Some(channel.name.clone());
                feeds.push((i, c));
            }
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

/// A y tick label that stays short: plain decimals for moderate values, SI prefixes (`12.5M`)
/// from a thousand to a tera, scientific notation (`1.2e18`) beyond and for tiny values, so that
/// no label is wider than the area reserved for it.
fn tick_label(v: f64, span: f64) -> String {
    let a = v.abs();
    if a < span * 1e-9 || a == 0.0 {
        return "0".into();
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    // Digits after the point: enough to tell ticks `span / 10` apart.
    let digits = |scale: f64| -> usize { (-(span / scale / 10.0).log10().floor()).clamp(0.0, 4.0) as usize };
    if a >= 1e15 || a < 1e-3 {
        let exp = a.log10().floor() as i32;
        let mantissa = v / 10f64.powi(exp);
        let d = digits(10f64.powi(exp)).min(3);
        return format!("{}e{exp}", trim(format!("{mantissa:.d$}")));
    }
    const SI: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    if a >= 1e4 {
        if let Some((scale, prefix)) = SI.iter().find(|(scale, _)| a >= *scale) {
            let d = digits(*scale);
            return format!("{}{prefix}", trim(format!("{:.d$}", v / scale)));
        }
    }
    let d = digits(1.0);
    trim(format!("{v:.d$}"))
}

/// The legend's corner: the first of the four corners whose box (in pixels of the plotting area)
/// no series crosses, neither a line nor a marker (`None` when every corner covers data).
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
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for s in series {
        for &(x, y) in &s.points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    // A flat line or a single point still gets a visible range.
    if x1 - x0 < 1e-9 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = if y1 - y0 < 1e-12 { y0.abs().max(1.0) * 0.1 } else { (y1 - y0) * 0.05 };
    let (y0, mut y1) = (y0 - pad, y1 + pad);
    let units: Vec<&str> = series.iter().filter_map(|s| s.unit.as_deref()).collect();
    let y_label = match units.first() {
        Some(u) if units.len() == series.len() && units.iter().all(|x| x == u) => (*u).to_string(),
        _ => "value".to_string(),
    };
    let label_font = ("sans-serif", 14).into_font();
    let text_width = |t: &str| label_font.box_size(t).map_or(t.len() as u32 * 9, |(w, _)| w);
    // The legend box as plotters lays it out: the labels' lines, 30 px of sample line, a 10 px
    // margin around, 5 px from the plotting area's edge (a few pixels more, to be safe).
    let labels: Vec<String> = series.iter().map(Series::label).collect();
    let legend_w = labels.iter().map(|l| text_width(l)).max().unwrap_or(0) as i32 + 30 + 20 + 4;
    let legend_h = (labels.len() as f64 * 14.0 * 1.25).ceil() as i32 + 20 + 4;
    let (w, _) = root.dim_in_pixel();
    let decimated: Vec<Vec<(f64, f64)>> = series.iter().map(|s| decimate(&s.points, x0, x1, w as usize)).collect();
    // Built twice at most: when every corner of the legend would cover data, the y range grows
    // at the top until the legend fits above the data.
    let mut attempt = 0;
    loop {
        // Every tick label fits: the area is as wide as the widest label of the range.
        let span = y1 - y0;
        let widest = [y0, y1, (y0 + y1) / 2.0, y0 + span * 0.1, y1 - span * 0.1]
            .iter()
            .map(|v| text_width(&tick_label(*v, span)))
            .max()
            .unwrap_or(0);
        let y_area = widest + 16 + 24; // tick marks and the axis description
        let mut chart = ChartBuilder::on(&root)
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(y_area)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let area = chart.plotting_area();
        let ((px0, px1), (py0, py1)) = {
            let (xr, yr) = area.get_pixel_range();
            ((xr.start, xr.end), (yr.start, yr.end))
        };
        let pixels: Vec<Vec<(i32, i32)>> = decimated
            .iter()
            .map(|s| s.iter().map(|p| area.map_coordinate(p)).map(|(x, y)| (x - px0, y - py0)).collect())
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
                y1 = (y1 - y0 * room) / (1.0 - room);
                attempt += 1;
                continue;
            }
            None => SeriesLabelPosition::UpperRight,
        };
        let span = y1 - y0;
        let fmt = move |v: &f64| tick_label(*v, span);
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_label.as_str())
            .y_label_formatter(&fmt)
            .label_style(label_font.clone())
            .axis_desc_style(("sans-serif", 16))
            .draw()?;
        for (i, (s, points)) in series.iter().zip(&decimated).enumerate() {
            let color = Palette99::pick(i).to_rgba();
            if points.len() == 1 {
                // One sample draws no line: a marker shows it.
                chart
                    .draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))?
                    .label(s.label())
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            } else {
                chart
                    .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))?
                    .label(s.label())
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
