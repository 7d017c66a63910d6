#[derive(logspec_derive::Record)]
enum Body {
    #[record(tag = 1)]
    Ping,
}

#[derive(logspec_derive::Record)]
#[record(id = 1)]
struct Msg {
    seq: u8,
    #[record(tag = kind)]
    body: Body,
}

fn main() {}
