#[derive(logspec::Record)]
enum Value {
    Int(i32),
    Float { f: f32 },
}

fn main() {}
