//! `logspec export FILE --csv DIR`: one CSV per channel (record type, RLOG key, ...), or with
//! `--aligned RATE` one table resampled at RATE Hz. `logspec export --parquet OUT FILE...`: a
//! typed Parquet dataset of many logs (`super::parquet`).

use std::path::PathBuf;
use std::process::ExitCode;

use logspec::log::Select;

use super::{open, Error};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  logspec export timeseries.bin --csv out/\n  logspec export robot.rlog --csv out/ --key '/RealOutputs/*'\n  logspec export timeseries.bin --csv out/ --aligned 50\n  logspec export --parquet fleet/ logs/ 'more/*.bag'"
)]
#[command(group(clap::ArgGroup::new("output").required(true).args(["csv", "parquet"])))]
pub struct Args {
    /// The log file (`-`: standard input). With --parquet: log files, directories and glob
    /// patterns, any number. A directory is searched recursively: a file named `*.usvlog`,
    /// `*.bin`, `*.rlog`, `*.wpilog`, `*.bag` or `*.log` is exported or reported as not a log
    /// (exit status 1); another file is exported when its content is a log, else passed over.
    #[arg(required = true, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write CSV files into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Write a Parquet dataset into this directory (created if missing): one table per channel,
    /// `DIR/<channel>/log=<name>/part-0.parquet`, columns typed from the schema. See
    /// docs/parquet.md.
    #[arg(long, value_name = "DIR", conflicts_with = "aligned")]
    pub parquet: Option<PathBuf>,
    /// With --parquet: logs converted at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", requires = "parquet")]
    pub jobs: Option<usize>,
    /// With --parquet: the compression of the Parquet pages.
    #[arg(long, value_enum, default_value_t, requires = "parquet")]
    pub compression: Codec,
    /// Write one table, `aligned.csv`, resampled at RATE samples per second: each row holds the
    /// last value of every column at or before its time. Columns are named `CHANNEL.COLUMN`; a
    /// topic with two publishers gets `TOPIC@CALLERID.COLUMN` for each.
    #[arg(long, value_name = "RATE")]
    pub aligned: Option<f64>,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub input: super::InputArgs,
}

/// The compression of the Parquet pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Codec {
    /// Snappy: fast, and what Spark writes by default.
    #[default]
    Snappy,
    /// LZ4 (the LZ4_RAW codec).
    Lz4,
    /// No compression.
    None,
}

impl Codec {
    fn codec(self) -> logspec_engine::parquet::Codec {
        use logspec_engine::parquet::Codec as C;
        match self {
            Codec::Snappy => C::Snappy,
            Codec::Lz4 => C::Lz4,
            Codec::None => C::None,
        }
    }
}

/// `export --parquet`: every log into the dataset, each reported, and every input that is not a
/// log named with its reason; exit 1 if any log failed or any input was not exported.
fn parquet(opts: logspec_engine::parquet::Options) -> Result<ExitCode, Error> {
    let out = opts.out.clone();
    let done = logspec_engine::parquet::export(opts)?;
    let mut failed = 0;
    let mut rows = 0u64;
    for n in &done.not_exported {
        eprintln!("logspec: error: {}: not exported: {}", n.file, n.reason);
    }
    for d in &done.logs {
        for w in &d.warnings {
            eprintln!("logspec: {w}");
        }
        rows += d.rows;
        match &d.error {
            Some(e) => {
                failed += 1;
                eprintln!("logspec: error: log={}: {e}", d.log);
                eprintln!(
                    "logspec: log={} ({}): FAILED; {} complete row(s) in {} table(s) kept",
                    d.log, d.file, d.rows, d.tables
                );
            }
            None => super::progress::note(&format!(
                "log={} ({}): {} row(s) in {} table(s)",
                d.log, d.file, d.rows, d.tables
            )),
        }
    }
    let mut tail = String::new();
    if failed > 0 {
        tail.push_str(&format!("; {failed} log(s) failed"));
    }
    if !done.not_exported.is_empty() {
        let files: Vec<&str> = done.not_exported.iter().map(|n| n.file.as_str()).collect();
        tail.push_str(&format!("; {} file(s) not exported, not logs logspec reads: {}", files.len(), files.join(", ")));
    }
    if done.passed_over > 0 {
        tail.push_str(&format!(
            "; {} other file(s) in the directories passed over (no log extension, and not a log)",
            done.passed_over
        ));
    }
    let summary = format!(
        "wrote {rows} row(s) from {} log(s) to {} ({} table(s) in the dataset){tail}",
        done.logs.len(),
        out.display(),
        done.tables,
    );
    if failed > 0 || !done.not_exported.is_empty() {
        // The summary of a run that did not export everything is shown even with --quiet.
        eprintln!("logspec: {summary}");
        return Ok(ExitCode::from(1));
    }
    super::progress::note(&summary);
    Ok(ExitCode::SUCCESS)
}

/// Channel and time filters shared by the verbs that read samples.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectArgs {
    /// Only this channel: a record type, RLOG key, topic or packet name (a trailing `*` matches
    /// a prefix). Repeatable.
    #[arg(long = "channel", visible_aliases = ["record", "key", "topic", "packet"], value_name = "NAME")]
    pub channels: Vec<String>,
    /// Only samples at or after this time: seconds from the log's time origin (its own zero; for
    /// ROS bags, the first message).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub since: Option<f64>,
    /// Only samples at or before this time (seconds, as for --since).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub until: Option<f64>,
}

impl SelectArgs {
    pub fn select(&self) -> Select {
        Select { channels: self.channels.clone(), tables: false, since: self.since, until: self.until }
    }
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    if let Some(out) = args.parquet {
        let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if jobs == 0 {
            return Err(Error::Usage("--jobs: at least 1".into()));
        }
        return parquet(logspec_engine::parquet::Options {
            out,
            inputs: args.files,
            select: args.select.select(),
            input: args.input.open(),
            jobs,
            codec: args.compression.codec(),
        });
    }
    let csv = args.csv.expect("clap requires --csv or --parquet");
    let [file] = args.files.as_slice() else {
        return Err(Error::Usage(format!(
            "--csv exports one log, but {} were given (--parquet takes many)",
            args.files.len()
        )));
    };
    let select = args.select.select();
    let open = || open(file, &args.input);
    let outcome = match args.aligned {
        None => {
            let w = logspec_engine::csv::per_channel(file, &csv, open, &select)?;
            for f in &w.files {
                if f.dropped > 0 {
                    eprintln!(
                        "logspec: {}: {} value(s) did not fit the columns of its first sample (the shape changed) and were left out of {}",
                        f.channel,
                        f.dropped,
                        f.path.display()
                    );
                }
            }
            super::progress::note(&format!("wrote {} CSV file(s) to {}", w.files.len(), csv.display()));
            w.outcome
        }
        Some(rate) => {
            let w = logspec_engine::csv::aligned(file, &csv, open, &select, rate)?;
            super::progress::note(&format!("wrote {} row(s) at {rate} Hz to {}", w.rows, w.path.display()));
            w.outcome
        }
    };
    for w in &outcome.warnings {
        eprintln!("logspec: {w}");
    }
    if let Some(e) = outcome.error {
        return Err(Error::Input(e));
    }
    Ok(ExitCode::SUCCESS)
}
