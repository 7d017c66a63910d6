//! Format detection from a file's first bytes, by the generated code of each bundled schema: a
//! file is taken for a format when its header decodes with that format's generated decoder
//! (magic and other const fields checked by it), never by magic bytes or offsets written here.

use crate::formats::{carla, dataflash, rlog, rosbag, ulog, usvlog, wpilog};
use crate::runtime::{Cursor, Decode, DecodeErrorKind, Endian, Fixed};

/// Whether `head`, the first bytes of a file, starts with a `T` whose const fields (magic, format
/// markers) hold. The head is padded with zeros to `pad` bytes first, so a header whose last
/// fields lie past a short file's end still counts, but a const cut by the end does not match.
fn consts_hold<T: Decode>(head: &[u8], pad: usize) -> bool {
    let mut bytes = head.to_vec();
    if bytes.len() < pad {
        bytes.resize(pad, 0);
    }
    match T::decode(&mut Cursor::new(&bytes), Endian::Little) {
        Ok(_) => true,
        Err(e) => !matches!(e.kind, DecodeErrorKind::BadConst { .. }),
    }
}

pub fn usvlog(head: &[u8]) -> bool {
    head.starts_with(usvlog::MAGIC)
}

/// A CARLA info header: a u16 version, then the magic string with its length.
pub fn carla(head: &[u8], pad: usize) -> bool {
    consts_hold::<carla::InfoHeader>(head, pad)
}

/// A ROS bag of any version (older versions are refused by the reader with a clear error).
pub fn rosbag(head: &[u8]) -> bool {
    head.starts_with(rosbag::MAGIC_PREFIX)
}

/// A PX4 ULog file: its magic (the file header's const field).
pub fn ulog(head: &[u8], pad: usize) -> bool {
    consts_hold::<ulog::FileHeader>(head, pad)
}

/// An ArduPilot DataFlash log: a message header (its const header bytes) announcing a FMT
/// message, with which every log starts.
pub fn dataflash(head: &[u8]) -> bool {
    dataflash::MessageHeader::decode_fixed(head, Endian::Little).is_ok_and(|h| h.id == logspec_ir::dataflash::FMT_ID)
}

pub fn wpilog(head: &[u8], pad: usize) -> bool {
    consts_hold::<wpilog::FileHeader>(head, pad)
}

/// An RLOG file: a revision byte the reader knows and a timestamp message, or (a file written
/// without a revision byte) an R1 timestamp message straight away.
pub fn rlog(head: &[u8]) -> bool {
    let mut c = Cursor::new(head);
    let Ok(h) = rlog::FileHeader::decode(&mut c, Endian::Big) else { return false };
    let rest = &head[c.position()..];
    match rlog::Revision::from_byte(h.revision) {
        Some(rlog::Revision::R1) => r1_timestamp(rest),
        Some(rlog::Revision::R2) => {
            let m = rlog::R2Message::decode(&mut Cursor::new(rest), Endian::Big);
            matches!(m, Ok(rlog::R2Message { body: rlog::R2Body::Timestamp { .. }, .. }))
                && messages_decode::<rlog::R2Message>(rest)
        }
        None => r1_timestamp(head),
    }
}

fn r1_timestamp(bytes: &[u8]) -> bool {
    let m = rlog::R1Message::decode(&mut Cursor::new(bytes), Endian::Big);
    matches!(m, Ok(rlog::R1Message { body: rlog::R1Body::Timestamp { .. }, .. }))
        && messages_decode::<rlog::R1Message>(bytes)
}

/// Whether every whole message in `bytes` decodes (the last may be cut by the end of the head):
/// a file whose first message merely looks like a timestamp is not taken for RLOG when what
/// follows is not RLOG.
fn messages_decode<M: Decode>(bytes: &[u8]) -> bool {
    let mut c = Cursor::new(bytes);
    while c.position() < bytes.len() {
        match M::decode(&mut c, Endian::Big) {
            Ok(_) => {}
            Err(e) => return matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }),
        }
    }
    true
}

/// A captured RLOG live stream: a frame header whose length is positive and a first frame that
/// starts like an RLOG file with its revision byte.
pub fn rlog_stream(head: &[u8]) -> bool {
    let Ok(h) = rlog::StreamFrameHeader::decode_fixed(head, Endian::Big) else { return false };
    let Ok(len) = usize::try_from(h.length) else { return false };
    let start = <rlog::StreamFrameHeader as Fixed>::SIZE;
    let frame = &head[start..head.len().min(start.saturating_add(len))];
    let mut c = Cursor::new(frame);
    len > 0
        && rlog::FileHeader::decode(&mut c, Endian::Big).is_ok_and(|f| rlog::Revision::from_byte(f.revision).is_some())
        && rlog(frame)
}
