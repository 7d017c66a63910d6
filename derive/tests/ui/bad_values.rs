// `values(...)` needs a newtype over an integer, and its values must fit the integer.
#[derive(logspec_derive::Record)]
#[record(values(IDLE = 0))]
struct Mode(f32);

#[derive(logspec_derive::Record)]
#[record(values(IDLE = 0, RUN = 300))]
struct Small(u8);

fn main() {}
