//! Where the blocks of an xz file end, in decompressed bytes, read from the
//! indexes at the end of its streams (the xz file format, version 1.0.4,
//! sections 2.1.2 and 4). The reader uses it to decode on to the end of the
//! block that holds the last record a run read, so that the block's
//! integrity check has been verified before the run's numbers are reported
//! (a corrupt block decodes to garbage before its check fails).

use std::io::{Read, Seek, SeekFrom};

/// The largest index read (a block is listed in at most 18 bytes: 2^20
/// blocks; a real trace has hundreds).
const MAX_INDEX_BYTES: u64 = 18 << 20;

/// The decompressed offset at which each block of the file ends, in file
/// order (cumulative over concatenated streams), or `None` when the file's
/// end is not a well-formed sequence of xz streams (then the decoder reports
/// what is wrong when it gets there). Leaves the file's position anywhere.
pub fn block_ends<F: Read + Seek>(f: &mut F) -> Option<Vec<u64>> {
    let mut pos = f.seek(SeekFrom::End(0)).ok()?;
    if pos == 0 {
        return None;
    }
    // per stream, last first: the uncompressed sizes of its blocks
    let mut streams: Vec<Vec<u64>> = Vec::new();
    while pos > 0 {
        // stream padding: zero bytes in words of four, after any stream
        let mut word = [0u8; 4];
        if pos < 4 {
            return None;
        }
        f.seek(SeekFrom::Start(pos - 4)).ok()?;
        f.read_exact(&mut word).ok()?;
        if word == [0; 4] {
            pos -= 4;
            continue;
        }
        if pos < 24 {
            return None;
        }
        let mut footer = [0u8; 12];
        f.seek(SeekFrom::Start(pos - 12)).ok()?;
        f.read_exact(&mut footer).ok()?;
        // the magic, and the CRC32 of the backward size and the flags
        if &footer[10..12] != b"YZ"
            || crc32fast::hash(&footer[4..10]) != u32::from_le_bytes(footer[0..4].try_into().ok()?)
        {
            return None;
        }
        let index_len = (u32::from_le_bytes(footer[4..8].try_into().ok()?) as u64 + 1) * 4;
        if index_len > MAX_INDEX_BYTES || index_len + 24 > pos {
            return None;
        }
        let index_at = pos - 12 - index_len;
        f.seek(SeekFrom::Start(index_at)).ok()?;
        let mut index = vec![0u8; index_len as usize];
        f.read_exact(&mut index).ok()?;
        let (unpadded, sizes) = parse_index(&index)?;
        // the stream's header, blocks (each padded to four bytes) and index
        let blocks_len = unpadded
            .iter()
            .try_fold(0u64, |a, u| a.checked_add(u.checked_next_multiple_of(4)?))?;
        let start = index_at.checked_sub(blocks_len)?.checked_sub(12)?;
        f.seek(SeekFrom::Start(start)).ok()?;
        // the header's magic, and its flags equal to the footer's
        let mut header = [0u8; 8];
        f.read_exact(&mut header).ok()?;
        if header[..6] != [0xfd, b'7', b'z', b'X', b'Z', 0] || header[6..8] != footer[8..10] {
            return None;
        }
        streams.push(sizes);
        pos = start;
    }
    if streams.is_empty() {
        return None;
    }
    let mut ends = Vec::new();
    let mut at = 0u64;
    for sizes in streams.iter().rev() {
        for s in sizes {
            at = at.checked_add(*s)?;
            ends.push(at);
        }
    }
    Some(ends)
}

/// An index's records: (unpadded sizes, uncompressed sizes); `None` unless
/// it is well-formed (indicator, count, records, padding, CRC32).
fn parse_index(b: &[u8]) -> Option<(Vec<u64>, Vec<u64>)> {
    if b.len() < 8 || b[0] != 0 {
        return None;
    }
    let (body, crc) = b.split_at(b.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().ok()?) {
        return None;
    }
    let mut at = 1;
    let count = varint(body, &mut at)?;
    // a record takes at least two bytes
    if count > (body.len() as u64) / 2 {
        return None;
    }
    let mut unpadded = Vec::with_capacity(count as usize);
    let mut sizes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        // (the spec's smallest Unpadded Size is 5)
        unpadded.push(varint(body, &mut at).filter(|&u| u >= 5)?);
        sizes.push(varint(body, &mut at)?);
    }
    // index padding: zeros up to a multiple of four
    if body.len().div_ceil(4) * 4 != body.len() || body[at..].iter().any(|&x| x != 0) {
        return None;
    }
    if body.len() - at > 3 {
        return None;
    }
    Some((unpadded, sizes))
}

/// The xz format's multibyte integer at `b[*at..]` (at most nine bytes).
fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..9 {
        let x = *b.get(*at)?;
        *at += 1;
        v |= ((x & 0x7f) as u64) << (7 * i);
        if x & 0x80 == 0 {
            // the last byte of a longer encoding is never zero
            return (i == 0 || x != 0).then_some(v);
        }
    }
    None
}

/// `data` compressed as xz in blocks of `block` decompressed bytes (one
/// block when `None`), with CRC64 checks: the files the tests read.
#[cfg(test)]
pub(crate) fn xz_blocks(data: &[u8], block: Option<u64>) -> Vec<u8> {
    use std::io::Write;
    let mut filters = xz2::stream::LzmaOptions::new_preset(1).unwrap();
    filters.dict_size(1 << 16);
    let mut chain = xz2::stream::Filters::new();
    chain.lzma2(&filters);
    let mut mt = xz2::stream::MtStreamBuilder::new();
    mt.threads(1)
        .filters(chain)
        .check(xz2::stream::Check::Crc64);
    // (the encoder's default block is three dictionaries: 192 KiB)
    mt.block_size(block.unwrap_or(data.len().max(1) as u64));
    let mut enc = xz2::write::XzEncoder::new_stream(Vec::new(), mt.encoder().unwrap());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn xz(data: &[u8], block: Option<u64>) -> Vec<u8> {
        xz_blocks(data, block)
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 13) as u8).collect()
    }

    #[test]
    fn blocks_of_one_stream_and_of_concatenated_streams_with_padding() {
        let d = data(100_000);
        let one = xz(&d, Some(30_000));
        assert_eq!(
            block_ends(&mut Cursor::new(&one)),
            Some(vec![30_000, 60_000, 90_000, 100_000])
        );
        let single = xz(&d, None);
        assert_eq!(block_ends(&mut Cursor::new(&single)), Some(vec![100_000]));
        // two streams, with stream padding after each
        let mut two = one.clone();
        two.extend([0u8; 8]);
        two.extend(xz(&d[..5_000], Some(4_000)));
        two.extend([0u8; 4]);
        assert_eq!(
            block_ends(&mut Cursor::new(&two)),
            Some(vec![30_000, 60_000, 90_000, 100_000, 104_000, 105_000])
        );
    }

    #[test]
    fn anything_but_well_formed_streams_gives_none_and_never_panics() {
        let good = xz(&data(50_000), Some(20_000));
        assert!(block_ends(&mut Cursor::new(&good)).is_some());
        let mut cases: Vec<Vec<u8>> = vec![
            vec![],
            vec![0; 3],
            vec![0; 64],
            good[..good.len() - 1].to_vec(),
            good[1..].to_vec(),
            b"not an xz file at all, just some text".to_vec(),
        ];
        let mut odd = good.clone();
        odd.push(0);
        cases.push(odd);
        // every single-byte change in the index and the footer, and in the
        // header's magic and flags (its CRC is the decoder's business)
        let n = good.len();
        let index_len =
            (u32::from_le_bytes(good[n - 8..n - 4].try_into().unwrap()) as usize + 1) * 4;
        for at in (n - 12 - index_len..n).chain(0..8) {
            let mut c = good.clone();
            c[at] ^= 0x10;
            cases.push(c);
        }
        for (k, c) in cases.iter().enumerate() {
            assert_eq!(block_ends(&mut Cursor::new(c)), None, "case {k}");
        }
    }

    /// A stream whose index (CRCs all correct) lists blocks too large for
    /// the file: refused, with no overflow on the way (the padded sizes of
    /// two blocks of 2^63 - 1 bytes summed past 2^64).
    #[test]
    fn an_index_of_absurd_sizes_is_refused_without_overflow() {
        let varint = |mut v: u64, out: &mut Vec<u8>| loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        };
        for (unpadded, size) in [
            (i64::MAX as u64, 100),
            (4, 100),
            (u64::MAX >> 1, u64::MAX >> 1),
        ] {
            let flags = [0u8, 4]; // CRC64
            let mut f = vec![0xfd, b'7', b'z', b'X', b'Z', 0];
            f.extend(flags);
            f.extend(crc32fast::hash(&flags).to_le_bytes());
            let mut index = vec![0u8];
            varint(2, &mut index);
            for _ in 0..2 {
                varint(unpadded, &mut index);
                varint(size, &mut index);
            }
            while index.len() % 4 != 0 {
                index.push(0);
            }
            index.extend(crc32fast::hash(&index).to_le_bytes());
            let backward = (index.len() / 4 - 1) as u32;
            f.extend(&index);
            let mut tail = backward.to_le_bytes().to_vec();
            tail.extend(flags);
            f.extend(crc32fast::hash(&tail).to_le_bytes());
            f.extend(tail);
            f.extend(b"YZ");
            assert_eq!(
                block_ends(&mut Cursor::new(&f)),
                None,
                "unpadded {unpadded}"
            );
        }
    }

    #[test]
    fn the_crc_is_ieee_crc32() {
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
    }
}
