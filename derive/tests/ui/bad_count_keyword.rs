// A bare length prefix must be an unsigned integer type; the error underlines the value.
#[derive(logspec_derive::Record)]
struct Nav {
    #[record(count = i16)]
    names: Vec<u8>,
}

fn main() {}
