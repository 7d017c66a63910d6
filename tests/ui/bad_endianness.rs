#[derive(logspec::Record)]
struct Sample {
    #[record(endian = "middle")]
    value: u32,
}

fn main() {}
