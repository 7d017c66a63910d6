#[derive(logspec_derive::Record)]
#[record(id = 1)]
struct Msg {
    #[record(tag(kind: u8))]
    speed: u32,
}

fn main() {}
