#[derive(logspec_derive::Record)]
enum Body {
    #[record(tag = 1)]
    Ping,
    #[record(tag = 1)]
    Pong { seq: u16 },
}

fn main() {}
