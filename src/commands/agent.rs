//! `natsplan agent --server URLS [--name NAME]`: a long-running load-generating worker for `bench --agents`
//! and `verify --agents`. Runs until SIGINT/SIGTERM (exit 0); bad flags exit 2; a server it cannot reach
//! at start exits 3 (afterwards it reconnects for as long as it runs).

use crate::agent::worker::{self, AgentOptions};
use crate::bench::{ConnArgs, ConnSpec};
use crate::cli::Global;
use crate::error::{bad_input, Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Name shown in coordinators' reports (letters, digits, '-', '_'; default: the host name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

pub fn run(_g: &Global, a: AgentArgs) -> Result<Outcome, Failure> {
    let conn = ConnSpec::resolve(&a.conn).map_err(bad_input)?;
    let opts = AgentOptions {
        conn,
        name: a.name.unwrap_or_else(worker::default_name),
    };
    worker::run(opts)?;
    Ok(Outcome::Ok)
}
