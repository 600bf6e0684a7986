//! Core NATS kinds' laws (publish/subscribe, request-reply round trips, a flood drained by one subscriber):
//! moved out of perf/model/predict.rs (past 800 lines), not changed.

use super::*;

pub(super) fn core(c: &mut Ctx) -> Law {
    let (t, sh, s, w) = (&c.terms.core, c.sh, c.s, c.w);
    let m = sh.subscribers as f64;
    let per_pub = t.per_msg_s + t.per_sub_s * m + t.per_byte_s * s * (1.0 + m);
    let client_pub = w * t.client_max_per_s * 128.0 / s.max(128.0);
    let (server_pub, server_why) = if sh.subscribers == 0 {
        // Nobody subscribed: the server parses and drops, with no fan-out to price. The fan-out fit's
        // intercept would say 4-5x too little (lab: 0.83M predicted, 3.4-4.1M measured at 64 B), so the
        // calibrated publisher-only rate is taken as what one server parses; publishers beyond one per
        // server share servers, which no row measured.
        if w > sh.servers as f64 {
            c.width = c.width.max(0.5);
            c.notes.push(format!(
                "core with no subscribers: {w} publishers on {} servers share servers; the calibrated publisher-only rate is per server",
                sh.servers
            ));
        }
        (
            (sh.servers as f64) * t.client_max_per_s * 128.0 / s.max(128.0),
            "server parsing (no subscribers)",
        )
    } else {
        (1.0 / per_pub, "server routing (message fan-out)")
    };
    let (p, b) = if client_pub <= server_pub {
        (client_pub, "publisher clients")
    } else {
        (server_pub, server_why)
    };
    c.ceilings
        .push((c.nic_bytes() / (s * (1.0 + m)) * (1.0 + m), "NIC".into()));
    c.sources.push(t.source.clone());
    c.calibration = t.source.clone();
    c.width = c.width.max(0.3);
    if sh.servers != 3 {
        c.scaled = true;
        c.width = c.width.max(0.5);
        c.notes.push(
            "core terms come from a 3-server cluster (3 LXC guests on one host); other cluster sizes are not modelled"
                .into(),
        );
    }
    // Aggregate as bench reports it: published plus received. Latency: half the calibrated round trip plus
    // the server's time for the message.
    Law {
        ops: p * (1.0 + m),
        msgs_per_op: 1.0,
        msg_bytes: s,
        lat_s: t.ping_avg_s / 2.0 + per_pub,
        bottleneck: b.into(),
    }
}

pub(super) fn ping(c: &mut Ctx) -> Law {
    let t = &c.terms.core;
    let rtt = t.ping_avg_s + 2.0 * t.per_byte_s * c.s;
    c.sources.push(t.source.clone());
    c.calibration = t.source.clone();
    c.width = c.width.max(0.3);
    Law {
        ops: c.w / rtt,
        msgs_per_op: 1.0,
        msg_bytes: c.s,
        lat_s: rtt,
        bottleneck: "network round trip".into(),
    }
}

pub(super) fn flood(c: &mut Ctx) -> Law {
    let t = &c.terms.core;
    let t128 = t.per_msg_s + t.per_sub_s + t.per_byte_s * 128.0 * 2.0;
    let ts = t.per_msg_s + t.per_sub_s + t.per_byte_s * c.s * 2.0;
    let drain = t.flood_drain_per_s * t128 / ts;
    let delay = c.w * t.flood_burst_msgs / (2.0 * drain);
    c.sources.push(t.source.clone());
    c.calibration = t.source.clone();
    c.width = c.width.max(0.5);
    c.notes.push(format!(
        "flood: {} publishers × {} messages queued at once; latency is the average queueing delay",
        c.w, t.flood_burst_msgs
    ));
    Law {
        ops: drain,
        msgs_per_op: 1.0,
        msg_bytes: c.s,
        lat_s: delay,
        bottleneck: "server queue drain".into(),
    }
}
