#[derive(logspec::Record)]
struct Pair(u8, u8);

fn main() {}
