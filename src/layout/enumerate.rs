//! Enumerate candidate layouts for a site.
use super::Layout;
use crate::catalog::Catalog;
use crate::site::Site;

/// Every sensible layout for the site (patterns × replica counts × server selections).
pub fn enumerate(_site: &Site, _catalog: &Catalog) -> Vec<Layout> {
    Vec::new()
}
