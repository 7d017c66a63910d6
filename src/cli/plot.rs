//! `logspec plot FILE --field A --field B -o plot.png` (`logspec_engine::plot`).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{open, Error};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  logspec plot timeseries.bin --field REC_NAV_SOLUTION.x --field REC_SENSOR_GNSS.x -o x.png\n  logspec plot robot.rlog --field /DriveTrain/GyroAngleDegrees -o gyro.svg\n\nA field is CHANNEL.COLUMN (a record type and a field, `REC_NAV_SOLUTION.x`; nested fields and\narray elements as in `logspec export`: `pose.x`, `value[0]`), or just CHANNEL for a channel with\none value (an RLOG key). A channel may be written as its Parquet table folder shows it\n(`SystemStats.BatteryVoltage` for `/SystemStats/BatteryVoltage`); the longest channel name that\nstarts the field is its channel. Each unit gets its own y axis (two at most: the left and the\nright); the legend names each field with its unit. Units come from the schema; RLOG, WPILOG and\nROS bag channels carry none: the documented units of common ROS messages (sensor_msgs/Imu,\nNavSatFix, geometry_msgs/Twist, nav_msgs/Odometry, ...) and a name ending in a unit\n(`GyroAngleDegrees`, `turnPositionRad`, `BatteryVoltage`, `WheelVelocityMetersPerSec`, as\nAdvantageKit names them) give them."
)]
pub struct Args {
    /// The log file (`-` for standard input).
    pub file: PathBuf,
    /// A field to plot. Repeatable.
    #[arg(long = "field", short = 'f', required = true, value_name = "CHANNEL.COLUMN")]
    pub fields: Vec<String>,
    /// The image to write: `.png` or `.svg`.
    #[arg(short, long, value_name = "OUT.png")]
    pub output: PathBuf,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 720)]
    pub height: u32,
    /// Title (the file name if not given).
    #[arg(long)]
    pub title: Option<String>,
    /// Only samples at or after this time: seconds from the log's time origin (its own zero; for
    /// ROS bags, the first message).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub since: Option<f64>,
    /// Only samples at or before this time (seconds, as for --since).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub until: Option<f64>,
    #[command(flatten)]
    pub input: super::InputArgs,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let opts = logspec_engine::plot::Options {
        fields: args.fields,
        output: args.output,
        width: args.width,
        height: args.height,
        title: args.title,
        since: args.since,
        until: args.until,
    };
    let mut warn = |w: &str| eprintln!("logspec: {w}");
    let p = logspec_engine::plot::plot(&args.file, &opts, || open(&args.file, &args.input), &mut warn)?;
    super::progress::note(&format!(
        "plotted {} field(s), {} point(s), to {}",
        p.fields,
        p.points,
        opts.output.display()
    ));
    match p.error {
        Some(e) => Err(Error::Input(e)),
        None => Ok(ExitCode::SUCCESS),
    }
}
