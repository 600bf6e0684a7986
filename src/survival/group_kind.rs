//! What a survival figure is about: one of the plan's assets, or the meta group.

use crate::layout::AssetKind;
use serde::Serialize;

/// The RAFT group a survival figure (an outcome, a yearly or reference entry) is about: one of the plan's
/// assets, of its `layout::AssetKind`, or the meta group, the JetStream API's own group over every server,
/// which the plan does not create (so it is not an `AssetKind`). Written as the asset kind's name
/// (`stream`, `kv`, `object_store`, `consumer`) or `meta`, as these reports always spelled it.
///
/// The default is the meta group, the one group every layout has (a default `Yearly`'s `meta` entry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupKind {
    Asset(AssetKind),
    #[default]
    Meta,
}

impl GroupKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupKind::Asset(k) => k.as_str(),
            GroupKind::Meta => "meta",
        }
    }

    /// A durable consumer (its stream's name space in reports; the stream's own status wins there).
    pub fn is_consumer(self) -> bool {
        self == GroupKind::Asset(AssetKind::Consumer)
    }
}

impl From<AssetKind> for GroupKind {
    fn from(k: AssetKind) -> GroupKind {
        GroupKind::Asset(k)
    }
}

impl std::fmt::Display for GroupKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GroupKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_written_as_reports_always_spelled_it() {
        let json = |k: GroupKind| serde_json::to_string(&k).unwrap();
        assert_eq!(json(GroupKind::Meta), "\"meta\"");
        assert_eq!(json(AssetKind::Stream.into()), "\"stream\"");
        assert_eq!(json(AssetKind::Kv.into()), "\"kv\"");
        assert_eq!(json(AssetKind::ObjectStore.into()), "\"object_store\"");
        assert_eq!(json(AssetKind::Consumer.into()), "\"consumer\"");
        assert!(GroupKind::from(AssetKind::Consumer).is_consumer());
        assert!(!GroupKind::Meta.is_consumer() && !GroupKind::from(AssetKind::Stream).is_consumer());
    }
}
