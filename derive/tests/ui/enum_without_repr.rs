#[derive(logspec_derive::Record)]
enum Mode {
    Idle,
    Run,
}

fn main() {}
