#[derive(logspec::Record)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
