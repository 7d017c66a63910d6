#[derive(logspec_derive::Record)]
struct Named {
    id: u16,
    name: String,
}

fn main() {}
