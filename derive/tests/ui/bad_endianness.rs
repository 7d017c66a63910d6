#[derive(logspec_derive::Record)]
struct Sample {
    #[record(endian = "middle")]
    value: u32,
}

fn main() {}
