// Two lengths on one field: the error underlines the key, not the `#`.
#[derive(logspec_derive::Record)]
struct Nav {
    #[record(count = u8, rest)]
    names: Vec<u8>,
}

fn main() {}
