// An integer magic needs its wire type as a suffix; a magic must fit its type.
#[derive(logspec_derive::Record)]
#[record(magic = 0xA55A)]
struct A {
    x: u8,
}

#[derive(logspec_derive::Record)]
struct B {
    #[record(magic = 300u8)]
    x: u8,
}

fn main() {}
