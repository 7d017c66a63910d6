#[derive(logspec::Record)]
enum Mode {
    Idle,
    Run,
}

fn main() {}
