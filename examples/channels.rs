//! Opens any log logspec reads, without naming its format, and prints its channels with their
//! types and units, and the samples of each, through one scan.
//!
//! `cargo run --example channels -- tests/data/rlog/gen_akit_head_r2_alltypes.rlog`

use std::collections::BTreeMap;

use logspec::log::{Channel, Error, Open, Samples, Select};
use logspec::value::Value;

/// Counts the samples of each channel, keeping what each channel says of itself.
#[derive(Default)]
struct Count {
    channels: Vec<(Channel, u64)>,
}

impl Samples for Count {
    fn channel(&mut self, _id: usize, channel: &Channel) -> Result<(), Error> {
        self.channels.push((channel.clone(), 0));
        Ok(())
    }

    fn sample(&mut self, id: usize, _t_ns: u64, _value: &Value) -> Result<(), Error> {
        self.channels[id].1 += 1;
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: channels LOG")?;
    let log = logspec::log::open(path.as_ref(), &Open::default())?;
    println!("{path}: {}", log.title());
    let mut count = Count::default();
    let outcome = log.scan(&Select::default(), &mut count)?;
    for (channel, rows) in &count.channels {
        let units: BTreeMap<_, _> = channel.units.iter().collect();
        let units = if units.is_empty() { String::new() } else { format!("  units {units:?}") };
        println!("{:<40} {:<24} {rows:>8} rows{units}", channel.name, channel.schema_name);
    }
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    match outcome.fault {
        Some(fault) => Err(Error::from(fault).into()),
        None => Ok(()),
    }
}
