#[derive(logspec::Record)]
enum Body {
    #[record(tag = 1)]
    Ping,
}

#[derive(logspec::Record)]
#[record(id = 1)]
struct Msg {
    #[record(tag(kind: f32))]
    body: Body,
}

fn main() {}
