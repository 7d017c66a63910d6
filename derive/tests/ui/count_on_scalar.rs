#[derive(logspec_derive::Record)]
struct Sample {
    #[record(count = "u16")]
    value: u32,
    #[record(count = "i16")]
    items: Vec<u8>,
}

fn main() {}
