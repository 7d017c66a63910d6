#[derive(logspec_derive::Record)]
#[record(id = 4)]
enum Body {
    #[record(tag = 1)]
    Ping,
}

fn main() {}
