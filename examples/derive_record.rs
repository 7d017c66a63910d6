//! `#[derive(Record)]` on hand-written structs: encode, decode, and the layout fingerprint.
//!
//! `cargo run --example derive_record`

use logspec::runtime::{Decode, Encode, Record as _};
use logspec::Record;

/// A battery report as an embedded device sends it: little-endian, packed.
#[derive(Record, Debug, Clone, PartialEq)]
#[record(id = 40, name = "REC_BATTERY")]
struct Battery {
    #[record(unit = "V")]
    voltage: f32,
    #[record(unit = "A")]
    current: f32,
    #[record(pad_after = 1)]
    state: State,
    /// Cell voltages, prefixed by a u8 count.
    #[record(count = "u8", unit = "mV")]
    cells: Vec<u16>,
}

#[derive(Record, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum State {
    Idle = 0,
    Charging = 1,
    Discharging = 2,
}

fn main() {
    let b = Battery { voltage: 12.6, current: -1.5, state: State::Discharging, cells: vec![4200, 4190, 4210] };
    let bytes = b.to_bytes().expect("fits its layout");
    println!(
        "{} (id {}, fingerprint {:#018x}): {} bytes",
        Battery::NAME,
        Battery::ID,
        Battery::FINGERPRINT,
        bytes.len()
    );
    println!("{bytes:02x?}");
    assert_eq!(Battery::decode_exact(&bytes).unwrap(), b);
    let _ = State::Idle;
    let _ = State::Charging;
}
