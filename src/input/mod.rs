//! The input floor: how every file natsplan is given is read, below the site, the catalog and the
//! calibration files that use it. A bounded, regular-file reader (`file.rs`: `read_text`, `read_bytes`),
//! the spanned YAML reader (`yaml.rs`: every value with its line and column, nesting and size bounded),
//! its serde layer (`de.rs`: `Doc`, `from_yaml`, every problem at once with its place and field path),
//! the one table of bounds on what an input may ask for (`limits.rs`), the typo matcher (`nearest.rs`)
//! and the errors all of them report in (`error.rs`). Nothing here knows what a site or a model is.

pub mod de;
mod error;
mod file;
pub mod limits;
mod nearest;
pub mod yaml;

pub use de::{from_yaml, Doc};
pub use error::{InputError, InputErrors};
pub use file::{check_models_dir, one_line, read_bytes, read_text, MAX_INPUT_BYTES};
pub(crate) use nearest::nearest;
