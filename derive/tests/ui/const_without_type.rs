#[derive(logspec_derive::Record)]
#[record(id = 1, const(version = 2))]
struct Msg {
    seq: u8,
}

fn main() {}
