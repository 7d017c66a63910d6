#[derive(logspec_derive::Record)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
