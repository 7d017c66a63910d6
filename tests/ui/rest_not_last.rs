#[derive(logspec::Record)]
struct Packet {
    #[record(rest)]
    body: Vec<u8>,
    crc: u16,
}

fn main() {}
