#[derive(logspec::Record)]
enum Body {
    #[record(tag = 1)]
    Ping,
}

#[derive(logspec::Record)]
#[record(id = 1)]
struct Msg {
    seq: u8,
    #[record(tag = kind)]
    body: Body,
}

fn main() {}
