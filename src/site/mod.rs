//! Site files: parse, validate (every problem at once, each with its place and a fix) and build the
//! `Site` the planner works on.

mod model;
mod parse;
mod yaml;

pub use model::*;
pub use parse::{load, parse_str, SiteError, SiteErrors};
