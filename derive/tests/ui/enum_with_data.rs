#[derive(logspec_derive::Record)]
enum Value {
    Int(i32),
    Float { f: f32 },
}

fn main() {}
