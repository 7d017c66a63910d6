#[derive(logspec::Record)]
struct Named {
    id: u16,
    name: String,
}

fn main() {}
