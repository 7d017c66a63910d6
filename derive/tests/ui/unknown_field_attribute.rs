// An unknown field key is underlined, with the nearest known key suggested.
#[derive(logspec_derive::Record)]
struct Nav {
    #[record(cout = u16)]
    names: Vec<u8>,
}

fn main() {}
