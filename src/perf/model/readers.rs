//! What a stream's readers cost its publishers (nats-server #5637): `readers_work`, the part of the
//! stream-leader pricing (`predict::js`) that prices consumers reading every message while the publishers
//! write. Moved out of predict.rs whole.

use super::predict::Ctx;
use super::*;
use crate::perf::leader::{self, HostClass};

/// What a stream's readers (consumers reading every message while the publishers write, `Shape::consumers`)
/// cost the leader's host per message, and what the band adds for it.
pub(super) struct ReadersWork {
    /// Reference-core seconds per message on the leader's host (`StreamInput::readers_s`).
    pub(super) s_per_msg: f64,
    /// Of it, what the readers spend under the store's lock, which an R1 stream's one stage waits behind
    /// (`StreamInput::readers_serial_s`; `R1_READERS_SERIAL_SHARE` of it, on a host that runs the whole
    /// cluster, where it was measured; 0 on a dedicated server, whose contention allowance covers it).
    pub(super) serial_s: f64,
    /// Band half-width (log units) the pricing adds.
    pub(super) width: f64,
    /// What each synchronous client's round trip (and what each further client adds to it) is multiplied
    /// by on the class's own shared host: the class's measured `leader::ReadersStretch` (its readers rows,
    /// one shape, carried to every replica count, size and client count as the figure before it was: the
    /// first reader's share, and each further one's where two reader counts were measured) or else
    /// `1 + READERS_SYNC_STRETCH × readers`; 1 elsewhere (the band says so).
    pub(super) sync_stretch: f64,
    /// Whether `sync_stretch` prices the synchronous clients (the class's own shared host), even at 1 (a
    /// stretch measured as none): what the readers do to them is then all in it (`predict::js`'s `t_law`).
    pub(super) stretch_applies: bool,
    pub(super) note: String,
    pub(super) source: String,
}

/// What each reader adds to a synchronous client's round trip on a host running the whole cluster and its
/// clients, as a share of it: the loopback lab (matrix runs 13-14, R3 1 KiB, delayed sync, development
/// data) read 4 sync publishers 17 % fewer with one reader (3,167 → 2,613/s: 0.21 per reader) and 16 sync
/// publishers 32-35 % fewer with two (7,517 → 4,914 and 5,234/s: 0.27, 0.22), where the readers' CPU alone
/// prices 4.5 %: their deliveries run between each store and its ack. The median, 0.22; run 15 holds it out.
/// Used for a class whose file has no readers rows (calibrate's readers point, `LeaderClass::readers_stretch`,
/// measures it on the file's own host since 2026-12-07: matrix runs 21-22 on a faster host read these cells
/// 11-23 % below their prices at 0.22).
const READERS_SYNC_STRETCH: f64 = 0.22;

/// Whether a reader's time under the store's lock holds up the stream's own stage: on an R1 stream, whose one
/// copy is the store every publish is written to inline in the publisher's read loop
/// (perf::leader::stream_parallelism), and which a reader loads each message from under the store's lock
/// (nats-server filestore.go: `LoadNextMsg` holds `fs.mu.RLock`, `StoreMsg` `fs.mu.Lock`), so the two
/// serialize for part of the reader's time (`R1_READERS_SERIAL_SHARE`). Above R1 the consumer's server
/// stores each message in its apply loop, which only the leader's replica has on the ack's path (about one
/// consumer in R): not priced there beyond the R1 floor — a replicated stream is never priced above the same
/// stream at R1 with the same readers (`predict::capped_leader_time`). An assumption: the R3 readers' cells
/// of runs 20-22 sat between -22.5 and +11.2 % of their prices, inside their bands.
fn r1_readers_serial(replicas: u8) -> bool {
    replicas <= 1
}

/// The share of an R1 reader's time per message (1 ÷ its fetch rate on a host that runs the whole cluster)
/// that the stream's one stage waits behind; readers add linearly (an assumption: every fitted cell had one
/// reader, and read locks held by several readers overlap, so more readers may cost less than this). Fitted to the loopback lab's R1 cell (one async publisher,
/// window 256, 128 B, one reader: prediction matrix runs 13-15 on run 12's calibration and run 20 on its
/// own, development data): priced with none of it the cell read -15 to -34 %; with all of it +15 to
/// +29 % on run 12's calibration and -3 % on run 20's; 0.75 leaves their median error about zero
/// (-1.3, +5.1, +11.0, -15.7 %; runs 13-15 share one calibration). Runs 21-22 hold it out (-13.1, -6.5 %).
const R1_READERS_SERIAL_SHARE: f64 = 0.75;

/// What the share's fit adds to the band (log half-width, in quadrature with the readers' part): 1.645 ×
/// the spread of those four cells' log errors about it (0.117).
const R1_READERS_SERIAL_WIDTH: f64 = 0.19;

/// Where the readers' work lands is the host's cores, beside the leader's (nats-server delivers to a pull
/// consumer and takes its acks in the consumer's own goroutines, not in the stream's append path):
/// - on a host that runs the whole cluster and its clients (`co_located`, the loopback lab) all of a
///   reader's work shares the cores: each reader keeps one core busy for the time it takes to read a
///   message, 1 ÷ the one-reader fetch rate the calibration predicts here (perf::consumer). Measured on
///   the lab (2026-12-06, R3 1 KiB, 2 async publishers, window 256; development data, not held out):
///   46.0k msgs/s alone, 32.2k with one reader (priced ≈ 9.1 µs of host time per reader per message:
///   33k), 24.6k with two (25k); four readers read behind the publishers (18.9k each against 22.5k
///   published) and cost less than priced (17k priced);
/// - on a dedicated server the reader's client runs elsewhere: the server delivers and takes the ack,
///   one unit of the class's per-message work (perf::consumer's assumption, within 2x of a verify run's
///   CPU on the lab), on the leader's host whether the consumer leads there (deliveries, acks) or follows
///   (a durable consumer of a replicated stream replicates its ack state to the stream's peers): never
///   less with more replicas. What the readers and the leader contend for beyond CPU (the store's and the stream's
///   locks: nats-server #5637 read 278k → 166k publishes/s, -40 %, with consumers on an R1 memory
///   stream) is not priced there: the band widens by `READERS_CONTENTION_WIDTH`. On the lab's class an
///   R1 stream's readers' time under the store's lock is priced (`r1_readers_serial`).
pub(super) fn readers_work(c: &Ctx, class: &leader::LeaderClass, host: &HostClass) -> Option<ReadersWork> {
    let sh = c.sh;
    let n = if sh.kind == Kind::Js { sh.consumers } else { 0 };
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let serial = r1_readers_serial(sh.replicas);
    if host.co_located > 1 {
        let one = Shape {
            kind: Kind::ConsumerFetch,
            workers: 1,
            consumers: 0,
            batch: 1,
            subjects: None,
            rate: None,
            ..sh.clone()
        };
        let fetch = crate::perf::consumer::predict(&c.terms.consumer, &one);
        if fetch.ops_per_s > 0.0 && fetch.band.low > 0.0 {
            let per = host.cpu_speed / fetch.ops_per_s;
            let fetch_w = (fetch.band.high / fetch.band.low).ln() / 2.0;
            let sync_clients = sh.batch <= 1;
            // The stretch was measured on the leader class's own host: carried to another shared host it
            // is not priced, and the band reaches #5637's contention instead.
            let own = class.host.server_model.eq_ignore_ascii_case(&host.server_model);
            // The class's own readers rows when it measured them, else the loopback lab's figure.
            let per_reader = class
                .readers_stretch
                .as_ref()
                .map_or(READERS_SYNC_STRETCH, |s| s.per_reader);
            let stretch = class
                .readers_stretch
                .as_ref()
                .map_or(1.0 + READERS_SYNC_STRETCH * nf, |s| s.stretch(nf));
            let sync_stretch = if sync_clients && own { stretch } else { 1.0 };
            let stretch_from = match &class.readers_stretch {
                Some(s) => format!(
                    "{}'s readers rows: {:.0} synchronous publishers at R{}, {:.0} B, {:.0} against {:.0} rows without readers",
                    class.id, s.publishers, s.replicas, s.bytes, s.readers_rows, s.publish_rows
                ),
                None => "the loopback lab, 2026-12-06".to_string(),
            };
            // What each reader beyond the first adds, where the rows measured it apart.
            let further = match &class.readers_stretch {
                Some(s) if s.further_measured && n > 1 => format!(
                    " for the first reader, {:.0} % for each further one (measured with up to {:.0} readers)",
                    s.further_reader * 100.0,
                    s.readers
                ),
                _ => String::new(),
            };
            let mut width = if sync_clients && !own {
                crate::perf::band::add_widths(&[fetch_w, READERS_CONTENTION_WIDTH])
            } else {
                fetch_w
            };
            let serial_note = if serial {
                width = crate::perf::band::add_widths(&[width, R1_READERS_SERIAL_WIDTH]);
                format!(
                    "; on an R1 stream each reader loads every message from the store the publishes are written to, under its lock: {:.0} % of its time is in the stream's one stage as well (fitted to the loopback lab's R1 readers' cells), band widened",
                    R1_READERS_SERIAL_SHARE * 100.0
                )
            } else {
                String::new()
            };
            return Some(ReadersWork {
                s_per_msg: nf * per,
                serial_s: nf * per * R1_READERS_SERIAL_SHARE,
                width,
                sync_stretch,
                stretch_applies: sync_clients && own,
                note: format!(
                    "consumers reading every message while the publishers write: {n}, each keeping a core of this host busy {:.1} µs per message (1 ÷ one reader's fetch rate here, {:.0}/s) beside the leader's work; priced as readers that keep up{serial_note}{}",
                    1e6 / fetch.ops_per_s,
                    fetch.ops_per_s,
                    match (sync_clients, own) {
                        (true, true) => format!(
                            "; each synchronous client's round trip ×{sync_stretch:.2} for the deliveries it waits behind ({:.0} %{}: {stretch_from})",
                            per_reader * 100.0,
                            if further.is_empty() { " per reader".to_string() } else { further.clone() }
                        ),
                        (true, false) => format!(
                            "; what the readers' deliveries add to a synchronous client's round trip ({:.0} % {} on {}) is not carried to this host, band widened",
                            per_reader * 100.0,
                            if class.readers_stretch.as_ref().is_some_and(|s| s.further_measured) {
                                "for the first reader"
                            } else {
                                "per reader"
                            },
                            class.id
                        ),
                        _ => String::new(),
                    }
                ),
                source: format!("{} (readers' work per message)", fetch.source),
            });
        }
    }
    // A shared host without a consumer calibration lands here too: its readers' clients share the host,
    // which one unit per delivery does not price (the band's contention allowance is what covers it).
    let unit = class.unit(c.s);
    Some(ReadersWork {
        s_per_msg: nf * unit,
        // Their lock contention with the leader is in the contention allowance (#5637 read it at R1).
        serial_s: 0.0,
        width: READERS_CONTENTION_WIDTH,
        sync_stretch: 1.0,
        stretch_applies: false,
        note: format!(
            "consumers reading every message while the publishers write: {n}, each costing the leader's host one unit of the leader's work per message ({:.1} µs of a reference core; an assumption: its deliveries and acks where it leads, its replicated ack state where it follows; no consumer calibration prices its client's share on a host it shares); their contention with the leader beyond CPU is not priced (nats-server #5637: -40 % with readers on an R1 memory stream), band widened",
            unit * 1e6,
        ),
        source: format!("{} (readers: one unit per delivery, assumed)", class.id),
    })
}

/// What the band adds for readers priced by assumption (no host of this class measured them): the
/// contention nats-server #5637 measured (-40 %, ln 1/0.6 ≈ 0.51) is not priced, so the band reaches it.
const READERS_CONTENTION_WIDTH: f64 = 0.51;
