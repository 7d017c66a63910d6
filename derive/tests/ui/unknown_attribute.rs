#[derive(logspec_derive::Record)]
#[record(id = 1, endain = "little")]
struct Nav {
    x: f32,
}

fn main() {}
