//! Reads a USVLOG file with the generated types and prints a few statistics.
//!
//! `cargo run --example read_usvlog -- tests/data/usvlog/step.usvlog`

use logspec::formats::usvlog::{Usvlog, UsvlogRecord};
use logspec::runtime::{Event, Reader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: read_usvlog FILE")?;
    let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut reader = Reader::<_, Usvlog>::new(file)?;
    println!("fw_model_schema {}, t0_us {}", reader.file_header().fw_model_schema, reader.file_header().t0_us);

    let (mut n, mut max_speed, mut unknown) = (0u64, f32::MIN, 0u64);
    while let Some(event) = reader.next_event() {
        match event {
            Ok(Event::Record { record: UsvlogRecord::RecNavSolution(nav), .. }) => max_speed = max_speed.max(nav.v),
            Ok(Event::Record { .. }) => {}
            Ok(Event::Unknown { .. }) => unknown += 1,
            // A record that does not decode is reported and skipped; a truncation ends the loop.
            Err(e) => eprintln!("{path}: {e}"),
        }
        n += 1;
    }
    println!("{n} records, {unknown} of unknown type, top speed {max_speed} m/s");
    Ok(())
}
