// An invalid runtime path is an error, not a silent fallback.
#[derive(logspec_derive::Record)]
#[record(runtime = "logspec runtime")]
struct Nav {
    x: f32,
}

fn main() {}
