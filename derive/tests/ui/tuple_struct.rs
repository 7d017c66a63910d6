#[derive(logspec_derive::Record)]
struct Pair(u8, u8);

fn main() {}
