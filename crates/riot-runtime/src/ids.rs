#![allow(clippy::disallowed_methods)] // the real id source: reads the OS random device and the system time

//! [`RandomIds`]: ids that are unique across processes and sessions.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use riot_protocol::{IdGen, IdKind};

/// `<prefix>_<26 base-32 characters>`: 48 bits of milliseconds (so ids sort
/// by creation time) and 80 random bits.
#[derive(Debug, Default)]
pub struct RandomIds {
    fallback_counter: AtomicU64,
}

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

impl RandomIds {
    pub fn new() -> Self {
        Self::default()
    }

    fn random_bytes(&self) -> [u8; 10] {
        let mut buf = [0u8; 10];
        let ok = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut buf))
            .is_ok();
        if !ok {
            // No random device (unusual sandboxes): fall back to a counter
            // mixed with the clock; still unique within this process.
            let n = self.fallback_counter.fetch_add(1, Ordering::Relaxed);
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let mixed =
                (t as u64) ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(std::process::id());
            buf[..8].copy_from_slice(&mixed.to_le_bytes());
            buf[8..].copy_from_slice(&(n as u16).to_le_bytes());
        }
        buf
    }
}

impl IdGen for RandomIds {
    fn next_id(&self, kind: IdKind) -> String {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
            & 0xffff_ffff_ffff;
        let random = self.random_bytes();
        let mut value: u128 = u128::from(ms) << 80;
        for (i, b) in random.iter().enumerate() {
            value |= u128::from(*b) << (8 * i);
        }
        let mut out = String::with_capacity(32);
        out.push_str(kind.prefix());
        out.push('_');
        for i in (0..26).rev() {
            let idx = ((value >> (5 * i)) & 0x1f) as usize;
            out.push(char::from(ALPHABET[idx]));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_carry_the_prefix_and_do_not_repeat() {
        let ids = RandomIds::new();
        let made: BTreeSet<String> = (0..1000).map(|_| ids.next_id(IdKind::ToolUse)).collect();
        assert_eq!(made.len(), 1000);
        for id in &made {
            assert!(id.starts_with("toolu_"), "{id}");
            assert_eq!(id.len(), "toolu_".len() + 26);
        }
    }
}
