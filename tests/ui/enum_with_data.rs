#[derive(logspec::Record)]
#[repr(u8)]
enum Value {
    Int(i32),
    Float(f32),
}

fn main() {}
