#[derive(logspec::Record)]
enum Body {
    #[record(tga = 1)]
    Ping,
}

fn main() {}
