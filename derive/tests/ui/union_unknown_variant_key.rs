#[derive(logspec_derive::Record)]
enum Body {
    #[record(tga = 1)]
    Ping,
}

fn main() {}
