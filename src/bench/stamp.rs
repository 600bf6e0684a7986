//! Latency stamps carried in payloads: the send time and the stamping process's origin.

use bytes::{Bytes, BytesMut};

/// Closed-loop core runs stamp one message in this many with its send time (latency sampling that costs
/// no allocation for the others); open-loop and flood runs stamp every message.
pub(super) const STAMP_EVERY: u64 = 64;

/// Bits of a stamp that carry the time; the 16 above carry the origin (which process stamped it).
pub(super) const STAMP_TIME_BITS: u32 = 48;

/// The 8-byte stamp: send time + 1 (so a stamp is never zero: zero marks an unstamped message) in the
/// low 48 bits (78 hours of nanoseconds), the stamping process's origin above.
pub(super) fn stamp_word(origin: u16, t_ns: u64) -> u64 {
    ((origin as u64) << STAMP_TIME_BITS) | ((t_ns + 1) & ((1u64 << STAMP_TIME_BITS) - 1))
}

#[cfg(test)]
pub(super) fn stamped(template: &Bytes, origin: u16, t_ns: u64) -> Bytes {
    with_word(template, stamp_word(origin, t_ns))
}

/// `template` with the stamp `word` (`stamp_word`) in its first 8 bytes.
pub(super) fn with_word(template: &Bytes, word: u64) -> Bytes {
    let mut b = BytesMut::with_capacity(template.len());
    b.extend_from_slice(&word.to_le_bytes());
    b.extend_from_slice(&template[8..]);
    b.freeze()
}

/// The send time of a stamped message, when it was stamped by `origin` (another host's clock means
/// nothing here: latency is measured per host, never across clocks).
pub(super) fn read_stamp(p: &[u8], origin: u16) -> Option<u64> {
    let s = u64::from_le_bytes(p.get(..8)?.try_into().ok()?);
    let t = s & ((1u64 << STAMP_TIME_BITS) - 1);
    (t != 0 && (s >> STAMP_TIME_BITS) as u16 == origin).then(|| t - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    pub(super) fn stamps_round_trip_and_zero_means_unstamped() {
        let t = Bytes::from(vec![0u8; 16]);
        assert_eq!(read_stamp(&stamped(&t, 0, 0), 0), Some(0));
        assert_eq!(read_stamp(&stamped(&t, 0, 123_456), 0), Some(123_456));
        assert_eq!(read_stamp(&t, 0), None);
        assert_eq!(read_stamp(&[1, 2, 3], 0), None);
    }

    #[test]
    pub(super) fn stamps_from_another_host_are_not_read_as_send_times() {
        let t = Bytes::from(vec![0u8; 16]);
        let from_agent_2 = stamped(&t, 2, 987_654_321);
        assert_eq!(read_stamp(&from_agent_2, 2), Some(987_654_321));
        assert_eq!(read_stamp(&from_agent_2, 1), None, "agent 1's clock is not agent 2's");
        assert_eq!(read_stamp(&from_agent_2, 0), None);
        // A whole run (origin 0) writes exactly what it wrote before origins existed.
        assert_eq!(stamp_word(0, 41), 42);
    }
}
