#[derive(logspec_derive::Record)]
struct Packet {
    #[record(rest)]
    body: Vec<u8>,
    crc: u16,
}

fn main() {}
