//! A fast, non-randomised hash for maps keyed by the programme's own data (asset names, placement
//! keys, price keys): the multiply-rotate hash rustc uses (FxHash), written out so no crate is added.
//! SipHash's resistance to chosen keys buys nothing here, and these maps are hashed once per asset per
//! layout (the cost measured is in docs/scale.md). Use it only for maps that are looked up, never iterated into
//! output: its order differs from SipHash's (which is random per process anyway).

use std::hash::{BuildHasherDefault, Hasher};

/// FxHash's state: one word, folded with each word written.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The low bits pick the bucket: fold the well-mixed high bits down.
        self.0 ^ (self.0 >> 29)
    }
}

/// Builds `FxHasher`s (for `HashMap::with_hasher` and the map types below).
pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;
pub type FxHashSet<K> = std::collections::HashSet<K, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_with_the_fx_hash_find_what_they_hold() {
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for i in 0..10_000 {
            m.insert(format!("tenant-{i}/c{}", i % 7), i);
        }
        assert_eq!(m.len(), 10_000);
        assert!((0..10_000).all(|i| m.get(&format!("tenant-{i}/c{}", i % 7)) == Some(&i)));
        assert!(!m.contains_key("tenant-10000/c0"));
    }
}
