struct Point {
    x: f32,
}

#[derive(logspec::Record)]
struct Path {
    #[record(count = "u16")]
    points: Vec<Point>,
}

fn main() {}
