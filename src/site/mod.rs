//! Site files: parse, validate (every problem at once, each with its place and a fix) and build the
//! `Site` the planner works on.

mod model;
pub mod names;
mod parse;
pub mod streams;

pub use model::*;
pub use parse::stream_spec::{check_stream, workload_assets};
pub use parse::{load, parse_str, parse_str_with, stream_config};
