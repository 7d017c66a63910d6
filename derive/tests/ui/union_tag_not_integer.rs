#[derive(logspec_derive::Record)]
enum Body {
    #[record(tag = 1)]
    Ping,
}

#[derive(logspec_derive::Record)]
#[record(id = 1)]
struct Msg {
    #[record(tag(kind: f32))]
    body: Body,
}

fn main() {}
